"""Bedrock authentication: SigV4 signing from configured credentials, a Bedrock API key as a bearer token, a
check of a request's signature shape that needs no real keys, and the patterns a scrubber removes.

The codec contract passes one key string (`with_auth(request, api_key)`), read from the upstream's key
variable. For Bedrock it is either
- `ACCESS_KEY_ID:SECRET_ACCESS_KEY[:REGION[:SESSION_TOKEN]]`: the request is signed with botocore's own
  `SigV4Auth` (service `bedrock`); the region is the key's, else the one in the request's `host` header
  (`bedrock-runtime.<region>.amazonaws.com`), else us-east-1; or
- a Bedrock API key (no colon; what boto3 reads from AWS_BEARER_TOKEN_BEDROCK): sent as `Authorization: Bearer`.
`key_from_environment` builds that string from the standard AWS variables.

SigV4 signs the `host` header, so the host the request goes to must be known when signing: the request's own
`host` header when it has one (a caller sending to a non-default endpoint sets it), else the region's default
endpoint host. botocore is imported only when signing, so importing the codec stays light.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from harness import ir
from harness.wire.http import HttpRequest

SERVICE = "bedrock"
"""The SigV4 signing name of bedrock-runtime (its service model's `signingName`)."""
DEFAULT_REGION = "us-east-1"
"""Region used when neither the key nor the host names one."""
AUTH_HEADERS = frozenset({"authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"})
"""Headers that carry a request's credentials or signature: replaced when signing, never forwarded."""
SECRET_HEADERS = frozenset({"authorization", "x-amz-security-token"})
"""Headers a cassette must not keep (the signature, the access key id in its scope, the session token)."""
KEY_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\b(?:AKIA|ASIA|AIDA|AROA|ABIA|ACCA)[A-Z0-9]{16}\b"),  # access key ids (long-term, temporary)
    re.compile(r"Signature=[0-9a-f]{64}"),  # a SigV4 signature
    re.compile(r"\bABSK[A-Za-z0-9+/=]{20,}"),  # long-term Bedrock API keys
    re.compile(r"\bbedrock-api-key-[A-Za-z0-9+/=._-]{20,}"),  # short-term Bedrock API keys
)
"""Shapes of Bedrock credentials in text (logs, traces, cassettes): a scrubber redacts, a scanner flags them."""

PLANTED_ACCESS_KEY = "CONFORMANCEPLANTEDKEY"
"""The access key id of the harness's planted test credentials (their secret is the planted key itself, which
SigV4 never sends): not AWS's shape (`AKIA...`), so the scrubber's scanner never mistakes it for a real one."""
REJECTION_TYPE = "InvalidSignatureException"
"""The exception type a replayed Bedrock answers a badly signed request with (AWS sends 403 and this type, or
IncompleteSignatureException / MissingAuthenticationTokenException, all three authentication errors)."""

_HOST = re.compile(r"^bedrock-runtime(?:-fips)?\.(?P<region>[a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com(?:\.cn)?$")
_REGION = re.compile(r"^[a-z]{2}(?:-[a-z]+)+-\d+$")
_AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/\s,]+)/(?P<date>\d{8})/(?P<region>[a-z0-9-]+)/(?P<service>[a-z0-9-]+)"
    r"/aws4_request, ?SignedHeaders=(?P<signed>[a-z0-9;._-]+), ?Signature=(?P<signature>[0-9a-f]{64})$"
)
_AMZ_DATE = re.compile(r"^\d{8}T\d{6}Z$")


@dataclass(frozen=True)
class Credentials:
    """AWS credentials parsed from a key string; `repr` shows no secret."""

    access_key: str
    """The access key id (AKIA... for long-term keys, ASIA... for temporary ones)."""
    secret_key: str
    """The secret access key; signs, never sent."""
    region: str | None = None
    """The region to sign for, when the key names one."""
    session_token: str | None = None
    """The session token of temporary credentials, sent as X-Amz-Security-Token."""

    def __repr__(self) -> str:
        return f"Credentials(access_key=<{len(self.access_key)} chars>, region={self.region!r})"


class CredentialsError(ValueError):
    """A key string that is neither `ACCESS_KEY_ID:SECRET[:REGION[:TOKEN]]` nor a bearer key; never shows it."""


def parse_credentials(api_key: str) -> Credentials | None:
    """The SigV4 credentials of a key string, or None when it is a Bedrock API key (bearer token)."""
    if ":" not in api_key:
        return None
    parts = api_key.split(":")
    if len(parts) > 4 or not parts[0] or not parts[1]:
        raise CredentialsError("a Bedrock key must be ACCESS_KEY_ID:SECRET_ACCESS_KEY[:REGION[:SESSION_TOKEN]]")
    region = parts[2] if len(parts) > 2 and parts[2] else None
    if region is not None and not _REGION.match(region):
        raise CredentialsError(f"the third part of a Bedrock key must be a region such as us-east-1, not {region!r}")
    token = parts[3] if len(parts) > 3 and parts[3] else None
    return Credentials(parts[0], parts[1], region, token)


def key_from_environment(env: Mapping[str, str]) -> str | None:
    """The key string for the standard AWS variables: AWS_BEARER_TOKEN_BEDROCK, else AWS_ACCESS_KEY_ID and
    AWS_SECRET_ACCESS_KEY (with AWS_REGION or AWS_DEFAULT_REGION, AWS_SESSION_TOKEN); None when unset."""
    if env.get("AWS_BEARER_TOKEN_BEDROCK"):
        return env["AWS_BEARER_TOKEN_BEDROCK"]
    access, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
    if not access or not secret:
        return None
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or ""
    token = env.get("AWS_SESSION_TOKEN") or ""
    return ":".join([access, secret, region, token]).rstrip(":")


def region_of_host(host: str) -> str | None:
    """The region of a Bedrock runtime host name (`bedrock-runtime.eu-west-1.amazonaws.com` -> eu-west-1)."""
    match = _HOST.match(host.split(":", 1)[0].lower())
    return match["region"] if match else None


def endpoint_host(region: str) -> str:
    """The default Bedrock runtime host of a region."""
    return f"bedrock-runtime.{region}.amazonaws.com"


def with_auth(request: HttpRequest, api_key: str) -> HttpRequest:
    """The request signed with SigV4 (or carrying a bearer API key); earlier credentials are dropped."""
    headers = {k: v for k, v in request.headers.items() if k not in AUTH_HEADERS}
    credentials = parse_credentials(api_key)
    if credentials is None:
        return _replace(request, {**headers, "authorization": f"Bearer {api_key}"})
    host = headers.get("host") or endpoint_host(credentials.region or DEFAULT_REGION)
    region = credentials.region or region_of_host(host) or DEFAULT_REGION
    headers["host"] = host
    return _replace(request, {**headers, **_sign(request, host, region, credentials)})


def _sign(request: HttpRequest, host: str, region: str, credentials: Credentials) -> dict[str, str]:
    """The signature headers botocore computes for the request sent to `host` (host and content-type signed)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials as BotoCredentials

    query = f"?{urlencode(request.query)}" if request.query else ""
    signed = {"host": host}
    if "content-type" in request.headers:
        signed["content-type"] = request.headers["content-type"]
    url = f"https://{host}{request.path}{query}"
    aws = AWSRequest(method=request.method, url=url, data=request.body, headers=signed)
    boto = BotoCredentials(credentials.access_key, credentials.secret_key, credentials.session_token)
    SigV4Auth(boto, SERVICE, region).add_auth(aws)
    out = {"authorization": aws.headers["Authorization"], "x-amz-date": aws.headers["X-Amz-Date"]}
    if credentials.session_token:
        out["x-amz-security-token"] = aws.headers["X-Amz-Security-Token"]
    return out


def _replace(request: HttpRequest, headers: dict[str, str]) -> HttpRequest:
    return HttpRequest(
        method=request.method, path=request.path, query=dict(request.query), headers=headers, body=request.body
    )


def signature_problems(headers: Mapping[str, str], *, allow_bearer: bool = True) -> list[str]:
    """What is wrong with a request's SigV4 signature shape ([] when it looks right); checks no secret.

    Algorithm AWS4-HMAC-SHA256; a credential scope `<date>/<region>/bedrock/aws4_request` whose date is the
    `x-amz-date` day; signed headers sorted, lower case, including host and x-amz-date (and
    x-amz-security-token when that header is sent), each present in the request; a 64-hex-digit signature.
    With `allow_bearer`, a Bedrock API key (`Authorization: Bearer ...`) passes too.
    """
    lower = {k.lower(): v for k, v in headers.items()}
    authorization = lower.get("authorization")
    if authorization is None:
        return ["no authorization header"]
    if allow_bearer and authorization.startswith("Bearer ") and len(authorization) > len("Bearer "):
        return []
    match = _AUTHORIZATION.match(authorization)
    if match is None:
        return ["authorization is not 'AWS4-HMAC-SHA256 Credential=.../aws4_request, SignedHeaders=..., Signature=...'"]
    problems = []
    if match["service"] != SERVICE:
        problems.append(f"credential scope names service {match['service']!r}, expected {SERVICE!r}")
    if not _REGION.match(match["region"]):
        problems.append(f"credential scope names region {match['region']!r}")
    amz_date = lower.get("x-amz-date", "")
    if not _AMZ_DATE.match(amz_date):
        problems.append(f"x-amz-date is {amz_date!r}, expected YYYYMMDDTHHMMSSZ")
    elif amz_date[:8] != match["date"]:
        problems.append(f"credential scope date {match['date']} is not the x-amz-date day {amz_date[:8]}")
    signed = match["signed"].split(";")
    if signed != sorted(signed):
        problems.append("signed headers are not sorted")
    required = {"host", "x-amz-date"} | ({"x-amz-security-token"} if "x-amz-security-token" in lower else set())
    problems += [f"signed headers lack {name}" for name in sorted(required - set(signed))]
    problems += [f"signed header {name} is not in the request" for name in signed if name not in lower]
    return problems


def rejection(request: HttpRequest) -> ir.IRError | None:
    """The 403 a replayed Bedrock answers when the request's signature is not SigV4's shape (or a bearer key);
    None when it looks right. Only the shape is checked: the harness has no real keys."""
    problems = signature_problems(request.headers)
    if not problems:
        return None
    message = "The request signature does not have the shape AWS expects: " + "; ".join(problems)
    return ir.IRError.of(ir.ErrorKind.AUTH, message, status=403, code=REJECTION_TYPE)


def scrub_authorization(value: str) -> str:
    """An Authorization value with its access key id and signature replaced, its shape (scope, signed headers)
    kept, so a scrubbed cassette still shows how the request was signed."""
    match = _AUTHORIZATION.match(value)
    if match is None:
        return "REDACTED"
    start, end = match.span("key")
    value = value[:start] + "REDACTED" + value[end:]
    return re.sub(r"Signature=[0-9a-f]{64}", "Signature=REDACTED", value)
