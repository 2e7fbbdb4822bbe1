"""The typed error every decoder raises on bad input, with the byte offset where it was found."""

from __future__ import annotations


class WireError(ValueError):
    """Malformed wire data. `offset` is the byte offset into the stream or body, when known."""

    def __init__(self, message: str, *, offset: int | None = None) -> None:
        where = f" at byte {offset}" if offset is not None else ""
        super().__init__(f"{message}{where}")
        self.message = message
        self.offset = offset


class FramingError(WireError):
    """The byte stream does not follow its framing (SSE, NDJSON, JSON array)."""
