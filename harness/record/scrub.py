"""Secrets never reach a cassette: header, query and body scrubbing, and a scanner that proves it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from harness.protocols import registry

REDACTED = "REDACTED"

# Headers dropped by name or prefix (pydantic-ai's json_body_serializer drops the same kind): these generic ones,
# plus what each protocol declares in its facts (`ProtocolFacts.secrets`: its key headers, account headers and
# key shapes).
GENERIC_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
GENERIC_HEADER_PREFIXES = ("cf-",)  # CDN request ids and routing, sent in front of many providers
SECRET_QUERY_KEYS = frozenset({"key", "api-key", "api_key", "apikey", "access_token", "token"})
SECRET_BODY_KEYS = frozenset({"api_key", "apikey", "access_token", "user_id"})
GENERIC_KEY_PATTERNS = (
    r"(?i)bearer\s+[A-Za-z0-9._\-]{16,}",
    r"PLANTED-TEST-KEY-[A-Za-z0-9]+",  # the planted keys the test suite uses to prove nothing leaks
)


@dataclass(frozen=True)
class SecretRules:
    """Every header, header prefix and key shape to scrub: the generic ones and every registered protocol's."""

    headers: frozenset[str]
    """Header names (lower case)."""
    header_prefixes: tuple[str, ...]
    """Header name prefixes (lower case)."""
    key_patterns: tuple[re.Pattern[str], ...]
    """Shapes of real provider keys, and of the planted test keys."""
    folded_prefixes: tuple[str, ...] = ()
    """Per key pattern: the lower-case ASCII literal a case-insensitive one's every match begins with, else ''
    (`find_secrets` skips the pattern in an ASCII text that does not hold it)."""


@cache
def rules() -> SecretRules:
    """The rules, gathered once from the protocol registry (the protocols registered when first asked)."""
    headers, prefixes = set(GENERIC_HEADERS), list(GENERIC_HEADER_PREFIXES)
    patterns: list[str] = []
    for name in registry.names():
        secrets = registry.facts(name).secrets
        headers |= secrets.headers
        prefixes += secrets.header_prefixes
        patterns += secrets.key_patterns
    patterns += GENERIC_KEY_PATTERNS
    compiled = tuple(re.compile(p) for p in dict.fromkeys(patterns))
    return SecretRules(
        frozenset(headers),
        tuple(dict.fromkeys(prefixes)),
        compiled,
        tuple(folded_prefix(p) for p in compiled),
    )


_LITERAL = re.compile(r"[A-Za-z0-9_=-]*")
"""Characters that stand for themselves at the start of a pattern (no class, group, escape or operator)."""


def folded_prefix(pattern: re.Pattern[str]) -> str:
    """The lower-case literal every match of a case-insensitive `(?i)...` pattern begins with, or '' (a pattern
    matched with its case, other flags, a leading group or class, or an alternation at its top level). A regex
    scan that ignores case finds no fast start in the text, so a cheap search for this literal comes first: in
    ASCII text, ignoring case is exactly ASCII lower case."""
    source = pattern.pattern
    if pattern.flags != re.IGNORECASE | re.UNICODE or not source.startswith("(?i)") or _alternates(source):
        return ""
    body = source.removeprefix("(?i)")
    literal = _LITERAL.match(body)
    text = literal.group(0) if literal else ""
    if body[len(text) : len(text) + 1] in ("*", "?", "{", "+"):
        text = text[:-1]  # the last character is quantified: maybe absent
    return text.lower()


def _alternates(source: str) -> bool:
    """Whether a pattern's source has a `|` outside every group and class (conservatively: any escape or class
    is stepped over, and a `|` seen at depth 0 is an alternation)."""
    depth, i, klass = 0, 0, False
    while i < len(source):
        char = source[i]
        if char == "\\":
            i += 2
            continue
        if klass:
            klass = char != "]"
        elif char == "[":
            klass = True
            i += source[i + 1 : i + 2] == "]"  # a `]` first in a class is a literal
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
        i += 1
    return False


def is_secret_header(name: str) -> bool:
    """Whether a header must not be stored (secrets, and noise that identifies an account)."""
    lower = name.lower()
    secret = rules()
    return lower in secret.headers or lower.startswith(secret.header_prefixes)


def scrub_headers(headers: dict[str, Any]) -> dict[str, Any]:
    """Headers without the secret ones."""
    return {k: v for k, v in headers.items() if not is_secret_header(k)}


def scrub_url(url: str) -> str:
    """The URL with secret query values replaced by REDACTED."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    query = [(k, REDACTED if k.lower() in SECRET_QUERY_KEYS else v) for k, v in parse_qsl(parts.query, True)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def scrub_json(value: Any) -> Any:
    """A JSON value with secret-named fields replaced by REDACTED, recursively."""
    if isinstance(value, dict):
        return {k: (REDACTED if k.lower() in SECRET_BODY_KEYS else scrub_json(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_json(v) for v in value]
    return value


def scrub_body(body: bytes) -> bytes:
    """A JSON body with secret fields redacted; other bodies unchanged (bytes kept exactly when clean)."""
    try:
        value = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return body
    cleaned = scrub_json(value)
    if cleaned == value:
        return body
    return json.dumps(cleaned, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_\-]")
"""A character that continues a token: a key shape right after one is part of something longer."""


def find_secrets(text: str, planted: Iterable[str] = ()) -> list[str]:
    """Every key-shaped string (and every planted value) found in `text`. A match inside a longer token is no key
    (LiteLLM's base64url response ids hold `-sk-...` by chance)."""
    secret = rules()
    lowered = text.lower() if text.isascii() and any(secret.folded_prefixes) else None
    found = [
        m.group(0)
        for pattern, prefix in zip(secret.key_patterns, secret.folded_prefixes, strict=True)
        if not (prefix and lowered is not None and prefix not in lowered)
        for m in pattern.finditer(text)
        if m.start() == 0 or not _TOKEN_CHAR.match(text[m.start() - 1])
    ]
    found += [p for p in planted if p and p in text]
    return found


USERINFO = re.compile(r"(?i)(?<![A-Za-z0-9+.\-])([a-z][a-z0-9+.\-]*://)([^\s/?#@\"'<>]+)@")
"""The `user:password@` of a URL (`http://user:pw@host`)."""
MIN_VALUE = 8
"""Shortest literal value (a `--sut-header` value) redacted wherever it appears: shorter ones are routing words such
as a provider name, and replacing every occurrence of those would garble the evidence."""


def mask(secret: str) -> str:
    """A same-length stand-in for `secret` (`REDACTED****`), so that byte offsets into a redacted text still hold."""
    return (REDACTED + "*" * len(secret))[: len(secret)] if len(secret) >= len(REDACTED) else "*" * len(secret)


def redact_text(text: str, values: Iterable[str] = (), *, keys: bool = True) -> str:
    """`text` with every key-shaped string (`find_secrets`), every given literal value of at least `MIN_VALUE`
    characters and every URL's credentials (`user:pw@`) masked. Run on everything the harness writes from what the
    system under test sent: traces, and through them the summary, JUnit, HTML and terminal. `keys=False` leaves
    the key scan out, for a caller that just scanned the same text and found none."""
    for value in sorted({v for v in values if len(v) >= MIN_VALUE}, key=len, reverse=True):
        text = text.replace(value, mask(value))
    if keys:
        for found in sorted(set(find_secrets(text)), key=len, reverse=True):
            text = text.replace(found, mask(found))
    if "@" not in text or "://" not in text:  # no URL credentials without both (the scan is a slow regex)
        return text
    return USERINFO.sub(lambda m: m.group(1) + mask(m.group(2)) + "@", text)


def without_userinfo(url: str) -> str:
    """A URL as reports show it: without `user:password@` (`http://user:pw@host/v1` -> `http://host/v1`)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


# --- credentials that are not key-shaped (issue 22): a password in a URL, signed-URL parameters, secret fields ---
CREDENTIAL_QUERY = re.compile(
    r"(?:^|[_\-.])(?:sig|signature|password|passwd|pwd|secret|token|credential|key|apikey)(?:$|[_\-.])",
    re.IGNORECASE,
)
"""A query parameter that holds a credential whatever its value looks like (`sig`, `x-goog-api-key`,
`X-Amz-Signature`, `X-Amz-Credential`, `password`, `token`, ...)."""
CREDENTIAL_FIELD = re.compile(
    r"(?:^|[_\-.])(?:password|passwd|secret|apikey|api[_\-]key|access[_\-]token|refresh[_\-]token|"
    r"session[_\-]token|security[_\-]token|private[_\-]key|credentials?)(?:$|[_\-.])",
    re.IGNORECASE,
)
"""A body field that holds a credential (`aws_secret_access_key`, `password`, `client_secret`, `private_key`,
...); not `signature` (a thinking block's) nor `*_key`/`*_token` in general (`prompt_cache_key`, `max_tokens`)."""


def is_credential_query(name: str) -> bool:
    """Whether a query parameter of this name holds a credential."""
    return bool(CREDENTIAL_QUERY.search(name))


def is_credential_field(name: str) -> bool:
    """Whether a JSON body field of this name holds a credential."""
    return bool(CREDENTIAL_FIELD.search(name))


def scrub_credentials_url(url: str) -> tuple[str, int]:
    """The URL with a password in its user info and every credential-named query value replaced by REDACTED,
    and how many were."""
    parts = urlsplit(url)
    count = 0
    netloc = parts.netloc
    userinfo, at, host = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = f"{userinfo.split(':', 1)[0]}:{REDACTED}@{host}"
        count += 1
    query = parse_qsl(parts.query, keep_blank_values=True)
    cleaned = [(k, REDACTED if is_credential_query(k) and v != REDACTED else v) for k, v in query]
    count += sum(a != b for a, b in zip(query, cleaned, strict=True))
    if not count:
        return url, 0
    new_query = urlencode(cleaned) if cleaned != query else parts.query
    return urlunsplit(parts._replace(netloc=netloc, query=new_query)), count


def scrub_credentials_json(value: Any) -> tuple[Any, int]:
    """A JSON value with each credential-named field's string value replaced by REDACTED, recursively (a schema
    property called `password`, whose value is an object, is kept), and how many were."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        count = 0
        for k, v in value.items():
            if isinstance(v, str) and v != REDACTED and is_credential_field(str(k)):
                out[k], n = REDACTED, 1
            else:
                out[k], n = scrub_credentials_json(v)
            count += n
        return out, count
    if isinstance(value, list):
        pairs = [scrub_credentials_json(v) for v in value]
        return [v for v, _ in pairs], sum(n for _, n in pairs)
    return value, 0


def scrub_credentials_body(body: bytes) -> tuple[bytes, int]:
    """A JSON body with credential fields redacted (`scrub_credentials_json`); other bodies, and clean ones, kept
    byte for byte."""
    try:
        value = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return body, 0
    cleaned, count = scrub_credentials_json(value)
    if not count:
        return body, 0
    return json.dumps(cleaned, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), count
