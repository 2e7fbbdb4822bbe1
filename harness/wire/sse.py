"""Server-sent events framing: an incremental, chunk-boundary independent decoder and the matching encoders.

Parsing follows the WHATWG HTML "server-sent events" interpretation rules: lines end in LF, CR or CRLF; a line
starting with ':' is a comment; a field without a colon has an empty value; one space after the colon is
stripped; `data` lines are joined with '\\n'; a blank line dispatches the event unless no `data` line was seen;
an `id` containing NUL is ignored; `retry` counts only when it is all ASCII digits. Two deliberate differences
from a browser: invalid UTF-8 raises `FramingError` (a browser substitutes U+FFFD, which would hide exactly the
byte-level bugs this harness exists to find), and an event cut off by the end of the stream is returned by
`close()` with `terminated=False` instead of being dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from harness.wire.errors import FramingError

DEFAULT_MAX_EVENT_SIZE = 16 * 1024 * 1024
"""Largest event (bytes of its lines, excluding line ends) a decoder buffers before raising `FramingError`."""

_BOM = b"\xef\xbb\xbf"
_LF = 0x0A
_CR = 0x0D
_COLON = 0x3A


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched server-sent event."""

    event: str
    """The `event:` field, or 'message' when the event had none."""
    data: str
    """The `data:` lines joined by '\\n'."""
    id: str | None
    """The last event ID in force when the event was dispatched (it persists across events); None if never set."""
    retry: int | None
    """A valid `retry:` value (milliseconds) given within this event's lines, else None."""
    offset: int
    """Byte offset in the stream (counting a BOM) of the event's first field line."""
    terminated: bool = True
    """False only for an event cut off by the end of the stream (no blank line after it), returned by `close()`."""


class SSEDecoder:
    """Incremental SSE decoder: feed bytes as they arrive, get complete events; the same for any chunking."""

    def __init__(self, *, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        self.max_event_size = max_event_size
        """Limit on the bytes one event (including a line still being received) may occupy."""
        self.comments: list[str] = []
        """Every comment line seen so far, without the ':' and one following space."""
        self.retry: int | None = None
        """The stream's reconnection time: the last valid `retry:` value seen (even in an undispatched block)."""
        self.last_event_id: str | None = None
        """The last event ID buffer (WHATWG); None until an `id:` field is seen."""
        self._pending: list[bytes] = []  # pieces of the line being received (no line end yet)
        self._pending_len = 0
        self._offset = 0  # absolute byte offset of the first pending byte, i.e. of the next line
        self._skip_lf = False  # the previous chunk ended with CR: an LF opening the next chunk belongs to it
        self._bom_done = False
        self._event_type = ""
        self._data: list[str] = []
        self._event_retry: int | None = None
        self._start = -1  # offset of the current block's first field line, -1 before it
        self._block_bytes = 0  # bytes of the current block's lines, for the size limit
        self._error: FramingError | None = None
        self._closed = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume the next bytes of the stream; return the events they complete."""
        self._check_usable()
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == _LF:
                chunk = chunk[1:]
                self._offset += 1
        if not self._bom_done:
            chunk = self._strip_bom(chunk)
        if not chunk:
            return []
        # Only complete lines are parsed; line ends are ASCII, so a cut before the last one never splits a
        # UTF-8 sequence, and everything after it waits for the next chunk.
        last = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if last < 0:
            self._hold(chunk)
            return []
        end = last + 1
        if self._pending:
            self._pending.append(chunk[:end])
            region = b"".join(self._pending)
        else:
            region = chunk[:end] if end < len(chunk) else chunk
        self._pending = []
        self._pending_len = 0
        events = self._parse(region, [])
        if end < len(chunk):
            self._hold(chunk[end:])
        elif chunk[last] == _CR:
            self._skip_lf = True
        return events

    def close(self) -> list[SSEEvent]:
        """Signal the end of the stream: parse a last line without line end and return an unterminated event."""
        self._check_usable()
        self._closed = True
        out: list[SSEEvent] = []
        if self._pending:
            tail = b"".join(self._pending)
            self._pending = []
            self._pending_len = 0
            self._parse(tail + b"\n", out)
        if self._data:
            out.append(self._dispatch(terminated=False))
        return out

    def _check_usable(self) -> None:
        if self._error is not None:
            raise self._error
        if self._closed:
            raise RuntimeError("SSEDecoder used after close()")

    def _fail(self, message: str, offset: int) -> FramingError:
        # A decoder that has failed stays failed: later feeds re-raise instead of parsing from mid-stream.
        self._error = FramingError(message, offset=offset)
        return self._error

    def _strip_bom(self, chunk: bytes) -> bytes:
        have = b"".join(self._pending) + chunk
        if len(have) < len(_BOM) and _BOM.startswith(have):
            # Could still become a BOM: wait for more bytes (close() parses them as text, which then fails).
            self._pending = [have] if have else []
            self._pending_len = len(have)
            return b""
        self._bom_done = True
        self._pending = []
        self._pending_len = 0
        if have.startswith(_BOM):
            self._offset = len(_BOM)
            return have[len(_BOM) :]
        return have

    def _hold(self, piece: bytes) -> None:
        self._pending.append(piece)
        self._pending_len += len(piece)
        if self._block_bytes + self._pending_len > self.max_event_size:
            start = self._start if self._start >= 0 else self._offset
            raise self._fail(f"SSE event larger than {self.max_event_size} bytes", start)

    def _parse(self, region: bytes, out: list[SSEEvent]) -> list[SSEEvent]:
        """Parse `region`, which ends with a line end and starts at `self._offset`; append events to `out`."""
        if b"\r" in region:
            raw = region.splitlines(keepends=True)
            lines = [line.rstrip(b"\r\n") for line in raw]
            widths: list[int] | None = [len(line) for line in raw]
        else:
            lines = region.split(b"\n")
            lines.pop()  # the empty piece after the final LF
            widths = None
        pos = self._offset
        limit = self.max_event_size
        for i, line in enumerate(lines):
            width = widths[i] if widths is not None else len(line) + 1
            if not line:
                if self._data:
                    out.append(self._dispatch(terminated=True))
                else:
                    self._event_type = ""
                    self._event_retry = None
                    self._start = -1
                self._block_bytes = 0
                pos += width
                continue
            self._block_bytes += len(line)
            if self._block_bytes > limit:
                raise self._fail(f"SSE event larger than {limit} bytes", self._start if self._start >= 0 else pos)
            try:
                text = line.decode()
            except UnicodeDecodeError as exc:
                raise self._fail(f"invalid UTF-8 in SSE line ({exc.reason})", pos + exc.start) from None
            if line[0] == _COLON:
                self.comments.append(text[2:] if text.startswith(" ", 1) else text[1:])
            else:
                if self._start < 0:
                    self._start = pos
                self._field(text)
            pos += width
        self._offset = pos
        return out

    def _field(self, text: str) -> None:
        name, colon, value = text.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._event_retry = self.retry = int(value)
        # Any other field name is ignored, as the spec requires.

    def _dispatch(self, *, terminated: bool) -> SSEEvent:
        event = SSEEvent(
            self._event_type or "message",
            "\n".join(self._data),
            self.last_event_id,
            self._event_retry,
            self._start,
            terminated,
        )
        self._event_type = ""
        self._data = []
        self._event_retry = None
        self._start = -1
        return event


def iter_sse(chunks: Iterable[bytes], *, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> Iterator[SSEEvent]:
    """Decode a whole chunked SSE stream, including an unterminated last event."""
    decoder = SSEDecoder(max_event_size=max_event_size)
    for chunk in chunks:
        yield from decoder.feed(chunk)
    yield from decoder.close()


def _check_line(value: str, what: str) -> None:
    if "\n" in value or "\r" in value:
        raise ValueError(f"SSE {what} cannot contain a line break: {value!r}")


def encode_sse(
    data: str,
    *,
    event: str | None = None,
    id: str | None = None,  # shadows the builtin on purpose: the SSE field is called id
    retry: int | None = None,
    newline: str = "\n",
) -> bytes:
    """One SSE event: optional `event:`/`id:`/`retry:` lines, one `data:` line per '\\n'-separated line, blank line."""
    if newline not in ("\n", "\r", "\r\n"):
        raise ValueError(f"SSE line end must be LF, CR or CRLF, not {newline!r}")
    if "\r" in data:
        raise ValueError("SSE data cannot contain CR: the decoder would read it as a line end")
    parts: list[str] = []
    if event is not None:
        _check_line(event, "event name")
        parts.append(f"event: {event}{newline}")
    if id is not None:
        _check_line(id, "id")
        if "\0" in id:
            raise ValueError("SSE id cannot contain NUL: decoders ignore such an id")
        parts.append(f"id: {id}{newline}")
    if retry is not None:
        if retry < 0:
            raise ValueError(f"SSE retry must be a non-negative integer, not {retry}")
        parts.append(f"retry: {retry}{newline}")
    for line in data.split("\n"):
        parts.append(f"data: {line}{newline}")
    parts.append(newline)
    return "".join(parts).encode()


def encode_sse_comment(text: str, *, newline: str = "\n") -> bytes:
    """A comment block (e.g. a keep-alive): one ': text' line per line of `text`, then a blank line."""
    if newline not in ("\n", "\r", "\r\n"):
        raise ValueError(f"SSE line end must be LF, CR or CRLF, not {newline!r}")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return ("".join(f": {line}{newline}" for line in lines) + newline).encode()
