"""Bedrock auth: SigV4 from `ACCESS_KEY_ID:SECRET[:REGION[:TOKEN]]` (verified by recomputing the signature here,
independently of botocore), bearer API keys, the signature-shape check the replay server needs, and scrubbing."""

from __future__ import annotations

import hashlib
import hmac
import re
from urllib.parse import quote

import pytest

from harness import ir
from harness.protocols.bedrock import auth, facts
from harness.wire.http import HttpRequest
from tests.protocols.bedrock.support import CODEC

ACCESS, SECRET, TOKEN = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "IQoJb3JpZ2luX2VjEXAMPLE+/="
REQUEST = CODEC.encode_request(
    ir.Request(model="us.amazon.nova-micro-v1:0", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])])
)
_AUTH = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request, "
    r"SignedHeaders=(?P<signed>[^,]+), Signature=(?P<signature>[0-9a-f]{64})"
)


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def recompute(request: HttpRequest, secret: str) -> str:
    """The SigV4 signature of a signed request, from the AWS specification (not botocore)."""
    match = _AUTH.fullmatch(request.headers["authorization"])
    assert match is not None
    names = match["signed"].split(";")
    canonical_headers = "".join(f"{n}:{request.headers[n].strip()}\n" for n in names)
    path = quote(request.path, safe="/~")  # non-S3 services sign the already-encoded path, encoded again
    payload = hashlib.sha256(request.body).hexdigest()
    canonical = "\n".join([request.method, path, "", canonical_headers, match["signed"], payload])
    scope = f"{match['date']}/{match['region']}/{match['service']}/aws4_request"
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    to_sign = "\n".join(["AWS4-HMAC-SHA256", request.headers["x-amz-date"], scope, digest])
    key = _hmac(f"AWS4{secret}".encode(), match["date"])
    for part in (match["region"], match["service"], "aws4_request"):
        key = _hmac(key, part)
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def test_a_request_is_signed_for_bedrock_in_the_keys_region() -> None:
    signed = CODEC.with_auth(REQUEST, f"{ACCESS}:{SECRET}:eu-west-3")
    match = _AUTH.fullmatch(signed.headers["authorization"])
    assert match is not None
    assert (match["key"], match["region"], match["service"]) == (ACCESS, "eu-west-3", "bedrock")
    assert match["signed"] == "content-type;host;x-amz-date"
    assert signed.headers["host"] == "bedrock-runtime.eu-west-3.amazonaws.com"
    assert match["date"] == signed.headers["x-amz-date"][:8]
    assert match["signature"] == recompute(signed, SECRET)
    assert (signed.path, signed.body) == (REQUEST.path, REQUEST.body)
    assert auth.signature_problems(signed.headers) == []


def test_the_region_comes_from_the_host_and_a_session_token_is_signed_too() -> None:
    request = HttpRequest(
        "POST", REQUEST.path, headers={**REQUEST.headers, "host": "bedrock-runtime.ap-south-1.amazonaws.com"}
    )
    signed = CODEC.with_auth(request, f"{ACCESS}:{SECRET}::{TOKEN}")
    match = _AUTH.fullmatch(signed.headers["authorization"])
    assert match is not None and match["region"] == "ap-south-1"
    assert match["signed"] == "content-type;host;x-amz-date;x-amz-security-token"
    assert signed.headers["x-amz-security-token"] == TOKEN
    assert match["signature"] == recompute(signed, SECRET)
    # A custom endpoint (a VPC endpoint, the replay server) keeps its host; the region defaults to us-east-1.
    local = CODEC.with_auth(HttpRequest("POST", REQUEST.path, headers={"host": "127.0.0.1:8123"}), f"{ACCESS}:{SECRET}")
    assert "/us-east-1/bedrock/aws4_request" in local.headers["authorization"]
    assert local.headers["host"] == "127.0.0.1:8123" and recompute(local, SECRET) in local.headers["authorization"]


def test_signing_replaces_the_credentials_a_client_sent() -> None:
    client = CODEC.with_auth(REQUEST, "AKIDCLIENTKEY0000000:client-secret")
    resigned = CODEC.with_auth(client, f"{ACCESS}:{SECRET}")
    assert ACCESS in resigned.headers["authorization"] and "AKIDCLIENTKEY" not in str(resigned.headers)
    assert recompute(resigned, SECRET) in resigned.headers["authorization"]


def test_a_bedrock_api_key_is_a_bearer_token() -> None:
    signed = CODEC.with_auth(CODEC.with_auth(REQUEST, f"{ACCESS}:{SECRET}"), "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlMTIz")
    assert signed.headers["authorization"] == "Bearer ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlMTIz"
    assert "x-amz-date" not in signed.headers and auth.signature_problems(signed.headers) == []
    assert auth.signature_problems(signed.headers, allow_bearer=False) != []


@pytest.mark.parametrize("key", ["AKID:", ":secret", "a:b:not-a-region", "a:b:us-east-1:t:extra"])
def test_a_malformed_key_is_rejected_without_showing_it(key: str) -> None:
    with pytest.raises(auth.CredentialsError) as info:
        CODEC.with_auth(REQUEST, key)
    assert "secret" not in str(info.value) or key != ":secret"
    assert "ACCESS_KEY_ID:SECRET_ACCESS_KEY" in str(info.value) or "region" in str(info.value)
    credentials = auth.parse_credentials(f"{ACCESS}:{SECRET}:us-east-1")
    assert SECRET not in repr(credentials) and ACCESS not in repr(credentials)


def test_the_key_string_from_the_standard_aws_variables() -> None:
    assert auth.key_from_environment({}) is None
    assert auth.key_from_environment({"AWS_BEARER_TOKEN_BEDROCK": "ABSKx", "AWS_ACCESS_KEY_ID": "A"}) == "ABSKx"
    env = {"AWS_ACCESS_KEY_ID": ACCESS, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_DEFAULT_REGION": "us-west-2"}
    assert auth.key_from_environment(env) == f"{ACCESS}:{SECRET}:us-west-2"
    assert auth.key_from_environment({**env, "AWS_SESSION_TOKEN": TOKEN}) == f"{ACCESS}:{SECRET}:us-west-2:{TOKEN}"
    assert auth.parse_credentials(auth.key_from_environment({**env, "AWS_SESSION_TOKEN": TOKEN}) or "") == (
        auth.Credentials(ACCESS, SECRET, "us-west-2", TOKEN)
    )


# --- the shape check --------------------------------------------------------------------------------------

SIGNED = CODEC.with_auth(HttpRequest("POST", REQUEST.path, headers={**REQUEST.headers}, body=b"{}"), "AKIDEXAMPLE:x")


def _broken(**changes: str) -> dict[str, str]:
    headers = dict(SIGNED.headers)
    for name, value in changes.items():
        name = name.replace("_", "-")
        if value == "":
            headers.pop(name, None)
        else:
            headers[name] = value
    return headers


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"authorization": ""}, "no authorization header"),
        ({"authorization": "AWS4-HMAC-SHA1 Credential=x"}, "is not 'AWS4-HMAC-SHA256"),
        ({"x_amz_date": ""}, "x-amz-date is ''"),
        ({"x_amz_date": "20200101T000000Z"}, "is not the x-amz-date day"),
        ({"x_amz_security_token": "tok"}, "signed headers lack x-amz-security-token"),
        ({"host": ""}, "signed header host is not in the request"),
    ],
)
def test_the_shape_check_names_what_is_wrong(changes: dict[str, str], problem: str) -> None:
    problems = auth.signature_problems(_broken(**changes))
    assert any(problem in p for p in problems), problems


def test_the_shape_check_reads_scope_and_signed_headers() -> None:
    value = SIGNED.headers["authorization"]
    assert any(
        "service 's3'" in p for p in auth.signature_problems(_broken(authorization=value.replace("/bedrock/", "/s3/")))
    )
    unsorted = value.replace("content-type;host;x-amz-date", "host;content-type;x-amz-date")
    assert "signed headers are not sorted" in auth.signature_problems(_broken(authorization=unsorted))
    no_host = value.replace("content-type;host;x-amz-date", "content-type;x-amz-date")
    assert "signed headers lack host" in auth.signature_problems(_broken(authorization=no_host))


def test_scrub_patterns_find_keys_and_signatures_and_scrubbing_keeps_the_shape() -> None:
    signed = CODEC.with_auth(REQUEST, f"{ACCESS}:{SECRET}:us-east-1:{TOKEN}")
    text = (
        f"{signed.headers} ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlMTIz bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29tLz9BY3Rpb24"
    )
    found = [m.group(0) for p in auth.KEY_PATTERNS for m in p.finditer(text)]
    assert ACCESS in found and any(f.startswith("Signature=") for f in found)
    assert any(f.startswith("ABSK") for f in found) and any(f.startswith("bedrock-api-key-") for f in found)
    assert {"authorization", "x-amz-security-token"} == auth.SECRET_HEADERS
    scrubbed = auth.scrub_authorization(signed.headers["authorization"])
    assert ACCESS not in scrubbed and not [m for p in auth.KEY_PATTERNS for m in p.finditer(scrubbed)]
    assert (
        scrubbed.startswith("AWS4-HMAC-SHA256 Credential=REDACTED/") and "/us-east-1/bedrock/aws4_request" in scrubbed
    )
    assert auth.scrub_authorization("Bearer ABSKsecret") == "REDACTED"


def test_the_auth_facts_reach_the_harness() -> None:
    assert auth.signature_problems(SIGNED.headers) == []
    assert auth.signature_problems(REQUEST.headers) == ["no authorization header"]
    assert auth.region_of_host(facts.REAL_BASE_URL.removeprefix("https://")) == auth.DEFAULT_REGION
    assert auth.region_of_host("bedrock-runtime-fips.us-gov-west-1.amazonaws.com:443") == "us-gov-west-1"
    assert auth.region_of_host("127.0.0.1:8000") is None
