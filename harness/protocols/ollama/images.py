"""Ollama images: bare base64 strings in `messages[].images`, with no media type.

The IR needs a media type, so the decoder sniffs it from the image's magic bytes (PNG, JPEG, GIF, WEBP).
Bytes that match none of them get `application/octet-stream`: the harness does not guess, and a backend that
needs a real image type will then reject the request the way it would reject the bytes themselves.
"""

from __future__ import annotations

import base64
import binascii

from harness.protocols.ollama._fields import READ

UNKNOWN_MEDIA_TYPE = "application/octet-stream"
"""Media type of image bytes whose format is not recognised."""


def sniff_media_type(data: str) -> str:
    """The media type of base64 image `data`, from its first bytes; raises DecodeError if it is not base64."""
    try:
        # The whole string is checked, not just the head: Ollama itself rejects invalid base64.
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise READ.error(f"image is not base64: {exc}") from exc
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if raw.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if raw.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return UNKNOWN_MEDIA_TYPE
