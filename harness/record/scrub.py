"""Secrets never reach a cassette: header, query and body scrubbing, and a scanner that proves it."""

from __future__ import annotations

import itertools
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
    (`find_secrets` skips the pattern in a text that does not hold it, ignoring ASCII case)."""
    gates: tuple[re.Pattern[str] | None, ...] = ()
    """Per key pattern: the one regex of all the patterns whose every match begins with the same character as its
    own (`gate`), or None (a pattern alone with its first character, or with none known). One scan of a text by
    the gate tells whether any of them can match: a text scan costs about the same per pattern, so a group of
    them costs one instead of several."""


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
        gates(compiled),
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


def leading_character(pattern: re.Pattern[str]) -> str:
    """The character every match of a pattern matched with its case begins with, or '' (a case-insensitive or
    otherwise flagged pattern, one with a capturing group (a gate joining it would renumber its back references),
    or one whose start `_lead` cannot tell)."""
    if pattern.flags != re.UNICODE or pattern.groups or _alternates(pattern.pattern):
        return ""
    return _lead(pattern.pattern)


_QUANTIFIERS = ("*", "?", "{", "+")


def _lead(source: str) -> str:
    """The literal first character of a pattern source without an alternation at its top level, or '': a leading
    non-capturing group `(?:...)` leads with the character all its alternatives lead with; a class, an escape, any
    other group, or a quantified first character or group leads with none."""
    if source.startswith("(?:"):
        bars, close = _scan(source, 3)
        if close is None or source[close + 1 : close + 2] in _QUANTIFIERS:
            return ""
        cuts = [3, *(bar + 1 for bar in bars), close + 1]
        firsts = {_lead(source[a : b - 1]) for a, b in itertools.pairwise(cuts)}
        return firsts.pop() if len(firsts) == 1 else ""
    literal = _LITERAL.match(source)
    first = literal.group(0)[:1] if literal else ""
    return "" if source[len(first) : len(first) + 1] in _QUANTIFIERS else first


def gates(patterns: tuple[re.Pattern[str], ...]) -> tuple[re.Pattern[str] | None, ...]:
    """Per pattern, the regex joining every pattern with the same `leading_character` (`(?:a)|(?:b)`: it matches
    in a text exactly where one of them does; Python's regex compiler takes their common literal start as its
    fast start), or None for a pattern that shares its first character with no other."""
    groups: dict[str, list[re.Pattern[str]]] = {}
    for pattern in patterns:
        if first := leading_character(pattern):
            groups.setdefault(first, []).append(pattern)
    joined = {
        first: re.compile("|".join(f"(?:{p.pattern})" for p in group))
        for first, group in groups.items()
        if len(group) > 1
    }
    return tuple(joined.get(leading_character(p)) for p in patterns)


def _alternates(source: str) -> bool:
    """Whether a pattern's source has a `|` outside every group and class (conservatively: any escape or class
    is stepped over, and a `|` seen at depth 0 is an alternation)."""
    return bool(_scan(source, 0)[0])


def _scan(source: str, start: int) -> tuple[list[int], int | None]:
    """From `start` (at depth 0) on, the positions of every `|` at depth 0, and of the first `)` that closes a group
    opened before `start` (None if none does; the scan stops there)."""
    depth, i, klass = 0, start, False
    bars: list[int] = []
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
            if depth < 0:
                return bars, i
        elif char == "|" and depth == 0:
            bars.append(i)
        i += 1
    return bars, None


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
    lowered = text.encode("utf-8", "surrogatepass").lower() if any(secret.folded_prefixes) else b""
    opened: dict[re.Pattern[str], bool] = {}  # each gate's scan, made once for the patterns it stands for
    found: list[str] = []
    for pattern, prefix, gate in zip(secret.key_patterns, secret.folded_prefixes, secret.gates, strict=True):
        if prefix and not _may_hold(lowered, prefix):
            continue
        if gate is not None:
            if gate not in opened:
                opened[gate] = gate.search(text) is not None
            if not opened[gate]:
                continue
        found += [
            m.group(0) for m in pattern.finditer(text) if m.start() == 0 or not _TOKEN_CHAR.match(text[m.start() - 1])
        ]
    found += [p for p in planted if p and p in text]
    return found


NON_ASCII_FOLDS = "iks"
"""The ASCII letters a case-insensitive regex also finds as a non-ASCII character (U+0130 and U+0131 for i, the
Kelvin sign U+212A for k, the long s U+017F for s; `tests/record/test_secrets.py` holds this to every code
point)."""


def _may_hold(lowered: bytes, prefix: str) -> bool:
    """Whether a text, as its UTF-8 bytes with ASCII lower-cased (`bytes.lower` leaves every byte of a non-ASCII
    character as it is), may hold a case-insensitive match of `prefix`: it does, or the prefix has a letter some
    non-ASCII character also matches. Lower-casing the bytes costs less than `str.lower`, and serves a non-ASCII
    text as well."""
    return prefix.encode() in lowered or any(char in NON_ASCII_FOLDS for char in prefix)


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
