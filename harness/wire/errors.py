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


class Sticky:
    """A framing decoder whose error stays: met in a `feed` after values it returns, it is raised by the next call
    (so what a consumer gets before the error does not depend on where the chunks were cut)."""

    _error: FramingError | None

    @property
    def failed(self) -> FramingError | None:
        """The error an earlier `feed` met (None: none). A caller that forgives an error of `close` (a last line or
        frame cut off by the end of the stream: one that ended early) raises this one as its `feed` would have:
        decoding the same bytes in one piece, the error would reach `close` and be forgiven there."""
        return self._error
