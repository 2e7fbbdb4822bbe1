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


class CutOff(FramingError):
    """A framing error in the bytes the end of the stream left unfinished: a last line without its line end, a
    message or an array not closed. Only `close()` raises it; an error met before the end is a plain
    `FramingError`, raised by `close()` as by `feed` (`Sticky`). A caller that forgives a stream that ended early
    catches this one only, so a malformed whole line is never forgiven as a cut-off one."""

    @classmethod
    def of(cls, exc: FramingError) -> CutOff:
        """`exc`, met in the tail at `close()`, as a cut-off."""
        return cls(exc.message, offset=exc.offset)


class Sticky:
    """A framing decoder whose error stays: met in a `feed` after values it returns, it is raised by the next call,
    `close()` included (so what a consumer gets before the error does not depend on where the chunks were cut)."""

    _error: FramingError | None

    def _cut_off(self, exc: FramingError) -> CutOff:
        """`exc`, met in the tail at `close()`, as the `CutOff` this decoder raises from now on."""
        self._error = CutOff.of(exc)
        return self._error
