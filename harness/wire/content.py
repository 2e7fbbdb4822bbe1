"""A stored body's content encoding (HTTP `Content-Encoding`) undone with a bounded cost: a few kilobytes of gzip
or deflate can inflate to gigabytes (a "zip bomb"), so inflating stops at `MAX_INFLATED` bytes with one line."""

from __future__ import annotations

import zlib

MAX_INFLATED = 256 * 1024 * 1024
"""Largest body a capture's content encoding may inflate to (a real answer is at most tens of megabytes)."""

_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_WBITS = 16 + zlib.MAX_WBITS


class InflateError(ValueError):
    """A body that does not inflate, or inflates beyond the limit; the message is one line."""


def inflate(body: bytes, wbits: int, what: str, limit: int = MAX_INFLATED) -> bytes:
    """Inflate `body` (gzip members one after another, or one zlib/raw deflate stream) to at most `limit` bytes."""
    out = bytearray()
    rest = body
    while rest:
        decoder = zlib.decompressobj(wbits)
        try:
            out += decoder.decompress(rest, limit + 1 - len(out))
        except zlib.error as exc:
            raise InflateError(f"the body says {what} but does not inflate: {exc}") from None
        if len(out) > limit or decoder.unconsumed_tail:
            raise InflateError(f"the {what} body inflates beyond {limit} bytes; refused (a decompression bomb?)")
        if not decoder.eof:
            raise InflateError(f"the {what} body is cut short ({len(body)} bytes stored)")
        rest = decoder.unused_data if wbits == _GZIP_WBITS else b""
        if rest and not rest.startswith(_GZIP_MAGIC):
            break  # trailing bytes after the last member: gzip readers ignore them
    return bytes(out)


def decode_content(body: bytes, headers: dict[str, str]) -> bytes:
    """The body with its `Content-Encoding` (gzip or deflate) undone, bounded (see `decode_content_noted`)."""
    return decode_content_noted(body, headers)[0]


def decode_content_noted(body: bytes, headers: dict[str, str]) -> tuple[bytes, str | None]:
    """The body with its `Content-Encoding` (gzip or deflate) undone, bounded, and a note when the body was taken
    as stored despite its header.

    Quirk: some recorders store a body already decoded but keep `Content-Encoding: gzip` (or `deflate`). Gzip
    data starts with its magic bytes: a gzip body without them is taken as it stands, and the note says so (a
    body that has them but does not inflate stays an error). Deflate has no magic: a deflate body that is plainly
    JSON or an event stream is taken as it stands, with the note. A gzip body without the header (gzip magic
    bytes) is inflated too."""
    encoding = headers.get("content-encoding", "").lower()
    if "gzip" in encoding or body.startswith(_GZIP_MAGIC):
        if not body.startswith(_GZIP_MAGIC):
            return body, _stored_decoded("gzip", "it has no gzip header")
        return inflate(body, _GZIP_WBITS, "gzip"), None
    if "deflate" in encoding:
        if _looks_decoded(body):
            return body, _stored_decoded("deflate", "it is plainly JSON or an event stream")
        # RFC 9110's deflate is a zlib stream, but many servers send raw deflate: zlib's header says which.
        zlib_header = len(body) >= 2 and (body[0] & 0x0F) == 8 and ((body[0] << 8) | body[1]) % 31 == 0
        return inflate(body, zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS, "deflate"), None
    return body, None


def _stored_decoded(encoding: str, why: str) -> str:
    return f"the body says Content-Encoding {encoding} but {why}: taken as stored (already decoded by the recorder)"


def _looks_decoded(body: bytes) -> bool:
    """A body that is plainly text already (JSON or an event stream), whatever its header says."""
    head = body.lstrip()[:16]
    return head[:1] in (b"{", b"[") or head.startswith((b"data:", b"event:", b":", b"id:"))
