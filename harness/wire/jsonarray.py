"""Streamed JSON array framing (Gemini `streamGenerateContent` without `alt=sse`): `[{...}\\n,\\r\\n{...}]`.

The decoder is incremental: it keeps its scanning state (inside a string, after a backslash, nesting depth)
between feeds, so each byte is scanned once however the stream is cut, and yields each top-level element as
soon as its last byte arrives. It jumps between structural bytes with compiled regular expressions instead of
a per-character Python loop. Multi-byte UTF-8 never contains an ASCII byte, so scanning bytes is safe.
"""

from __future__ import annotations

import enum
import json
import re
from typing import Any

from harness.wire.errors import CutOff, FramingError, Sticky
from harness.wire.ndjson import load_json

DEFAULT_MAX_ELEMENT_SIZE = 16 * 1024 * 1024
"""Largest array element a decoder buffers before raising `FramingError`."""

_NON_WS = re.compile(rb"[^ \t\r\n]")
# The rest of an open string: anything but a quote or backslash, or an escape pair. Stops before the closing
# quote, or at the end of the buffer (possibly before a lone backslash whose escaped byte has not arrived).
_STRING_REST = re.compile(rb'(?:[^"\\]++|\\.)*+', re.DOTALL)
# Everything up to the next bracket, skipping whole strings in one C-level match. Stops at a bracket, at the
# buffer end, or at the quote of a string that does not close within the buffer. The quantifiers are
# possessive (Python 3.11+): with plain ones, an unclosed string makes the engine backtrack exponentially.
_TO_BRACKET = re.compile(rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL)
_SCALAR_END = re.compile(rb"[,\] \t\r\n]")
_QUOTE = 0x22
_OPEN = frozenset(b"[{")
_NOT_A_VALUE = frozenset(b",:]}")


class _State(enum.Enum):
    BEFORE = "before '['"
    FIRST = "after '['"
    ELEMENT = "inside an element"
    AFTER = "after an element"
    NEXT = "after ','"
    DONE = "after ']'"


class JSONArrayDecoder(Sticky):
    """Incremental decoder of one streamed top-level JSON array; yields parsed elements."""

    def __init__(self, *, max_element_size: int = DEFAULT_MAX_ELEMENT_SIZE) -> None:
        self.max_element_size = max_element_size
        """Limit on the bytes of one element (an element still being received counts)."""
        self._buf = bytearray()  # unconsumed bytes; _buf[0] is at absolute offset _base
        self._base = 0
        self._pos = 0  # scan position in _buf
        self._state = _State.BEFORE
        self._start = 0  # start of the current element in _buf
        self._depth = 0
        self._in_string = False
        self._scalar = False  # the current element is a bare number / true / false / null
        self._error: FramingError | None = None
        self._closed = False

    def feed(self, chunk: bytes) -> list[Any]:
        """Consume the next bytes; return every element they complete, in order.

        On malformed input, raises `FramingError`; elements completed earlier in the same chunk are returned
        first and the (sticky) error is raised by the next call, whatever the chunking.
        """
        self._check_usable()
        self._buf += chunk
        out: list[Any] = []
        try:
            while self._pos < len(self._buf):
                if self._state is _State.ELEMENT:
                    if not self._scan_element(out):
                        break
                elif not self._between():
                    break
        except FramingError as exc:
            self._error = exc
            if not out:
                raise
            return out
        self._compact()
        return out

    def close(self) -> list[Any]:
        """Signal the end of the stream; `CutOff` with the end offset if the array never closed (a fault met
        before the end is the `FramingError` a `feed` met)."""
        self._check_usable()
        self._closed = True
        if self._state is not _State.DONE:
            end = self._base + len(self._buf)
            what = (
                "empty stream: no JSON array"
                if end == 0
                else f"JSON array not closed (stream ended {self._state.value})"
            )
            self._error = CutOff(what, offset=end)
            raise self._error
        return []

    def _check_usable(self) -> None:
        if self._error is not None:
            raise self._error
        if self._closed:
            raise RuntimeError("JSONArrayDecoder used after close()")

    def _fail(self, message: str, pos: int) -> FramingError:
        return FramingError(message, offset=self._base + pos)

    def _between(self) -> bool:
        """Handle the bytes outside elements; False when the buffer is exhausted."""
        match = _NON_WS.search(self._buf, self._pos)
        if match is None:
            self._pos = len(self._buf)
            return False
        pos = match.start()
        byte = self._buf[pos]
        state = self._state
        if state is _State.BEFORE:
            if byte != ord("["):
                raise self._fail(f"expected '[' to open the JSON array, found {bytes([byte])!r}", pos)
            self._state, self._pos = _State.FIRST, pos + 1
        elif state is _State.AFTER:
            if byte == ord(","):
                self._state = _State.NEXT
            elif byte == ord("]"):
                self._state = _State.DONE
            else:
                raise self._fail(f"expected ',' or ']' after an array element, found {bytes([byte])!r}", pos)
            self._pos = pos + 1
        elif state is _State.DONE:
            raise self._fail(f"data after the end of the JSON array: {bytes([byte])!r}", pos)
        elif state is _State.FIRST and byte == ord("]"):
            self._state, self._pos = _State.DONE, pos + 1
        elif byte in _NOT_A_VALUE:
            raise self._fail(f"expected an array element {state.value}, found {bytes([byte])!r}", pos)
        else:
            self._open_element(pos, byte)
        return True

    def _open_element(self, pos: int, byte: int) -> None:
        self._state = _State.ELEMENT
        self._start = pos
        self._pos = pos + 1
        self._depth = 1 if byte in _OPEN else 0
        self._in_string = byte == _QUOTE
        self._scalar = not (self._depth or self._in_string)

    def _scan_element(self, out: list[Any]) -> bool:
        """Advance through the current element; False when the buffer ends first."""
        buf = self._buf
        size = len(buf)
        pos = self._pos
        depth = self._depth
        in_string = self._in_string
        end = -1
        while end < 0:
            if self._scalar:
                match = _SCALAR_END.search(buf, pos)
                if match is None:
                    pos = size
                    break
                end = match.start()
            elif in_string:
                pos = _STRING_REST.match(buf, pos).end()  # type: ignore[union-attr]  # matches the empty string
                if pos >= size or buf[pos] != _QUOTE:
                    break  # the string goes on in the next chunk (perhaps after a backslash at the end)
                in_string = False
                pos += 1
                if depth == 0:
                    end = pos
            else:
                pos = _TO_BRACKET.match(buf, pos).end()  # type: ignore[union-attr]  # matches the empty string
                if pos >= size:
                    break
                byte = buf[pos]
                pos += 1
                if byte == _QUOTE:
                    in_string = True  # a string that does not close within the buffer
                elif byte in _OPEN:
                    depth += 1
                else:
                    # Mismatched brackets ('{]') still end here; load_json then reports them with an offset.
                    depth -= 1
                    if depth == 0:
                        end = pos
        self._pos, self._depth, self._in_string = pos, depth, in_string
        if end < 0:
            if len(buf) - self._start > self.max_element_size:
                raise self._fail(f"JSON array element larger than {self.max_element_size} bytes", self._start)
            return False
        if end - self._start > self.max_element_size:
            raise self._fail(f"JSON array element larger than {self.max_element_size} bytes", self._start)
        out.append(load_json(bytes(buf[self._start : end]), self._base + self._start))
        self._state, self._pos, self._scalar = _State.AFTER, end, False
        return True

    def _compact(self) -> None:
        # Drop consumed bytes so the buffer holds at most the element being received.
        cut = self._start if self._state is _State.ELEMENT else self._pos
        if cut:
            del self._buf[:cut]
            self._base += cut
            self._pos -= cut
            self._start -= cut


class JSONArrayEncoder:
    """Writes a streamed JSON array one element at a time, in Gemini's layout by default."""

    def __init__(self, separator: bytes = b"\n,\r\n", *, indent: int | None = None) -> None:
        if separator.strip(b" \t\r\n") != b",":
            raise ValueError(f"separator must be ',' with optional JSON whitespace, not {separator!r}")
        self.separator = separator
        """Bytes between two elements."""
        self.indent = indent
        """`json.dumps` indent of each element; None for compact JSON."""
        self._count = 0
        self._closed = False

    def encode(self, value: Any) -> bytes:
        """The bytes that add `value` to the array: '[' before the first element, the separator before others."""
        if self._closed:
            raise RuntimeError("JSONArrayEncoder used after close()")
        separators = (",", ": ") if self.indent is not None else (",", ":")
        text = json.dumps(value, ensure_ascii=False, indent=self.indent, separators=separators, allow_nan=False)
        prefix = b"[" if self._count == 0 else self.separator
        self._count += 1
        return prefix + text.encode()

    def close(self) -> bytes:
        """The bytes that end the array: ']' (or '[]' when no element was encoded)."""
        if self._closed:
            raise RuntimeError("JSONArrayEncoder closed twice")
        self._closed = True
        return b"]" if self._count else b"[]"
