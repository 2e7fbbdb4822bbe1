"""Newline-delimited JSON framing (Ollama's `application/x-ndjson` streams): incremental decoder and encoder."""

from __future__ import annotations

import json
from typing import Any

from harness.wire.errors import FramingError, Sticky

DEFAULT_MAX_LINE_SIZE = 16 * 1024 * 1024
"""Longest line a decoder buffers before raising `FramingError`."""

_BLANK = b" \t\r"


def _reject_constant(name: str) -> Any:
    # Python's json accepts NaN/Infinity; they are not JSON, and a provider sending them is a framing bug.
    raise ValueError(f"{name} is not valid JSON")


# One shared decoder: json.loads with any keyword argument builds a new JSONDecoder on every call.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def load_json(data: bytes, offset: int) -> Any:
    """Parse one strict JSON value from UTF-8 `data` found at byte `offset`; FramingError with the offset if not."""
    try:
        text = data.decode()
    except UnicodeDecodeError as exc:
        raise FramingError(f"invalid UTF-8 in JSON ({exc.reason})", offset=offset + exc.start) from None
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        where = offset + len(text[: exc.pos].encode())
        raise FramingError(f"invalid JSON: {exc.msg}", offset=where) from None
    except (ValueError, RecursionError) as exc:
        # parse_constant's rejection, or nesting deeper than the interpreter's recursion limit.
        raise FramingError(f"invalid JSON: {exc}", offset=offset) from None


class NDJSONDecoder(Sticky):
    """Incremental NDJSON decoder: one parsed JSON value per non-blank line, the same for any chunking."""

    def __init__(self, *, max_line_size: int = DEFAULT_MAX_LINE_SIZE) -> None:
        self.max_line_size = max_line_size
        """Limit on the bytes of one line (a line still being received counts)."""
        self._pending: list[bytes] = []
        self._pending_len = 0
        self._offset = 0  # absolute offset of the first pending byte (the start of the next line)
        self._error: FramingError | None = None
        self._closed = False

    def feed(self, chunk: bytes) -> list[Any]:
        """Consume the next bytes; return the values of the lines they complete.

        On malformed input, raises `FramingError`; values completed earlier in the same chunk are returned
        first and the (sticky) error is raised by the next call, whatever the chunking.
        """
        self._check_usable()
        out: list[Any] = []
        try:
            last = chunk.rfind(b"\n")
            if last < 0:
                self._hold(chunk)
                return out
            end = last + 1
            self._pending.append(chunk[:end])
            region = b"".join(self._pending)
            self._pending = []
            self._pending_len = 0
            self._parse(region.split(b"\n")[:-1], out)
            if end < len(chunk):
                self._hold(chunk[end:])
        except FramingError:
            if not out:
                raise
        return out

    def close(self) -> list[Any]:
        """Signal the end of the stream; a last line without newline is accepted. A fault in that last line raises
        `CutOff`; one met before it, the `FramingError` a `feed` met."""
        self._check_usable()
        self._closed = True
        if not self._pending:
            return []
        tail = b"".join(self._pending)
        self._pending = []
        try:
            return self._parse([tail], [])
        except FramingError as exc:
            raise self._cut_off(exc) from exc

    def _check_usable(self) -> None:
        if self._error is not None:
            raise self._error
        if self._closed:
            raise RuntimeError("NDJSONDecoder used after close()")

    def _hold(self, piece: bytes) -> None:
        if not piece:
            return
        self._pending.append(piece)
        self._pending_len += len(piece)
        if self._pending_len > self.max_line_size:
            self._error = FramingError(f"NDJSON line longer than {self.max_line_size} bytes", offset=self._offset)
            raise self._error

    def _parse(self, lines: list[bytes], out: list[Any]) -> list[Any]:
        pos = self._offset
        for line in lines:
            if len(line) > self.max_line_size:
                self._error = FramingError(f"NDJSON line longer than {self.max_line_size} bytes", offset=pos)
                raise self._error
            # A CRLF line end leaves a CR, which JSON treats as whitespace; whitespace-only lines are skipped.
            if line.strip(_BLANK):
                try:
                    out.append(load_json(line, pos))
                except FramingError as exc:
                    self._error = exc
                    raise
            pos += len(line) + 1
        self._offset = pos
        return out


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""`json.dumps` with these options builds an equal encoder on every call."""


def encode_ndjson(value: Any) -> bytes:
    """One NDJSON line: compact JSON (UTF-8, not ASCII-escaped) and a newline."""
    return _ENCODER.encode(value).encode() + b"\n"
