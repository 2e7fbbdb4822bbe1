"""Plain HTTP messages as codecs see them: no client library, just method, path, headers and bytes."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit


@dataclass(frozen=True)
class HttpRequest:
    """A request on the wire, relative to a provider's base URL."""

    method: str
    """HTTP method, upper case."""
    path: str
    """Path without the query, e.g. `/v1/chat/completions` or `/v1beta/models/gemini-2.5-flash:generateContent`."""
    query: dict[str, str] = field(default_factory=dict)
    """Query parameters (e.g. Gemini `alt=sse`, `key=`, Azure `api-version`)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Headers with lower-case names."""
    body: bytes = b""
    """Raw request body."""

    @classmethod
    def from_url(cls, method: str, url: str, headers: dict[str, str], body: bytes) -> HttpRequest:
        """Build from an absolute or relative URL (query split off, header names lower-cased)."""
        parts = urlsplit(url)
        return cls(
            method=method.upper(),
            path=parts.path,
            query=dict(parse_qsl(parts.query, keep_blank_values=True)),
            headers={k.lower(): v for k, v in headers.items()},
            body=body,
        )


@dataclass(frozen=True)
class HttpResponse:
    """A complete (non-streamed or already collected) response on the wire."""

    status: int
    """HTTP status code."""
    headers: dict[str, str] = field(default_factory=dict)
    """Headers with lower-case names."""
    body: bytes = b""
    """Raw body."""
