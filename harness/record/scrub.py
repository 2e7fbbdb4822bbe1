"""Secrets never reach a cassette: header, query and body scrubbing, and a scanner that proves it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "REDACTED"

# Headers dropped by name or prefix (pydantic-ai's json_body_serializer drops the same kind).
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
    }
)
SECRET_HEADER_PREFIXES = ("x-stainless-", "cf-", "x-ratelimit-", "anthropic-ratelimit-")
SECRET_QUERY_KEYS = frozenset({"key", "api-key", "api_key", "apikey", "access_token", "token"})
SECRET_BODY_KEYS = frozenset({"api_key", "apikey", "access_token", "user_id"})

# Shapes of real provider keys, and the planted keys the test suite uses to prove nothing leaks.
KEY_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"sk-(?:proj-)?[A-Za-z0-9_\-]{20,}"),
    re.compile(r"AIza[0-9A-Za-z_\-]{35}"),
    re.compile(r"gsk_[A-Za-z0-9]{20,}"),
    re.compile(r"xai-[A-Za-z0-9]{20,}"),
    re.compile(r"(?i)bearer\s+[A-Za-z0-9._\-]{16,}"),
    re.compile(r"PLANTED-TEST-KEY-[A-Za-z0-9]+"),
)


def is_secret_header(name: str) -> bool:
    """Whether a header must not be stored (secrets, and noise that identifies an account)."""
    lower = name.lower()
    return lower in SECRET_HEADERS or lower.startswith(SECRET_HEADER_PREFIXES)


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


def find_secrets(text: str, planted: Iterable[str] = ()) -> list[str]:
    """Every key-shaped string (and every planted value) found in `text`."""
    found = [m.group(0) for pattern in KEY_PATTERNS for m in pattern.finditer(text)]
    found += [p for p in planted if p and p in text]
    return found
