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
from itertools import repeat
from typing import NamedTuple, NoReturn

from harness.wire.errors import FramingError, Sticky

DEFAULT_MAX_EVENT_SIZE = 16 * 1024 * 1024
"""Largest event block (first line to the end of its last line's text) a decoder accepts; beyond: `FramingError`."""

_BOM = b"\xef\xbb\xbf"
_LF = 0x0A
_CR = 0x0D


class SSEEvent(NamedTuple):
    """One dispatched server-sent event (a named tuple: immutable, and several times cheaper to build than a
    frozen dataclass, which matters at hundreds of thousands of events per second)."""

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


_new_tuple = tuple.__new__
_MAX_RETRY_DIGITS = 100  # far beyond any real reconnection time in milliseconds


class SSEDecoder(Sticky):
    """Incremental SSE decoder: feed bytes as they arrive, get complete events; the same for any chunking."""

    def __init__(self, *, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        self.max_event_size = max_event_size
        """Limit on the bytes of one event block (from its first line to the end of its last line's text)."""
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
        # The size limit as a position: the current block began right after the last blank line (or after the
        # last comment line that came before any field), and it is too large once the text of one of its lines,
        # complete or still arriving, reaches beyond begin + limit. Positions are absolute, so the check does
        # not depend on where chunks were cut, and it costs one comparison per line.
        self._deadline = max_event_size
        self._error: FramingError | None = None
        self._closed = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume the next bytes of the stream; return the events they complete.

        On malformed input, raises `FramingError`; if events were completed earlier in the same chunk, they are
        returned first and the (sticky) error is raised by the next call, so what a consumer receives before
        the error does not depend on where the chunks were cut.
        """
        if self._error is not None or self._closed:
            self._check_usable()
        out: list[SSEEvent] = []
        try:
            self._feed(chunk, out)
        except FramingError:
            if not out:
                raise
        return out

    def _feed(self, chunk: bytes, out: list[SSEEvent]) -> None:
        # A chunk whose first LF begins its blank line is one event of one line (most chunks of most servers):
        # found with a one-byte search (memchr), several times faster than the two-byte one that finds any other.
        end = len(chunk) - 2
        if (
            self._start < 0
            and not self._pending
            and ((chunk.find(b"\n") == end and chunk[-1] == _LF) or chunk.find(b"\n\n") == end)
            and not self._skip_lf
            and self._bom_done
            and chunk.find(b"\r") < 0
            and self._offset + len(chunk) <= self._deadline
            and self._one_event(chunk, out)
        ):
            return
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == _LF:
                chunk = chunk[1:]
                if self._deadline == self._offset + self.max_event_size:
                    self._deadline += 1  # the line ending in CR reset the block: it begins after the LF
                self._offset += 1
        if not self._bom_done:
            chunk = self._strip_bom(chunk)
        if not chunk:
            return
        # Only complete lines are parsed; line ends are ASCII, so a cut after the last one never splits a
        # UTF-8 sequence, and everything after it waits for the next chunk.
        last = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if last < 0:
            self._hold(chunk)
            return
        end = last + 1
        if self._pending:
            self._pending.append(chunk[:end])
            region = b"".join(self._pending)
            self._pending = []
            self._pending_len = 0
        else:
            region = chunk[:end] if end < len(chunk) else chunk
        self._parse(region, out)
        if end < len(chunk):
            self._hold(chunk[end:])
        else:
            self._skip_lf = chunk[last] == _CR

    def _one_event(self, chunk: bytes, out: list[SSEEvent]) -> bool:
        """A chunk that is one whole event of `data:` and `event:` lines (how most servers write each event) read
        in one step, as `_parse` reads it, when nothing of another block is pending and the event is within the
        size limit; False (nothing done) for anything else, which `_parse` then reads line by line."""
        try:
            text = chunk[:-2].decode()
        except UnicodeDecodeError:
            return False
        event_type = ""
        if "\n" not in text and text.startswith("data:"):  # one `data:` line: most events of most servers
            value = text[6:] if text.startswith(" ", 5) else text[5:]
        else:
            data = []
            for line in text.split("\n"):
                if line.startswith("data:"):
                    data.append(line[6:] if line.startswith(" ", 5) else line[5:])
                elif line.startswith("event:"):
                    event_type = line[7:] if line.startswith(" ", 6) else line[6:]
                else:
                    return False
            if not data:
                return False
            value = "\n".join(data)
        fields = (event_type or "message", value, self.last_event_id, None, self._offset, True)
        out.append(_new_tuple(SSEEvent, fields))
        self._offset += len(chunk)
        self._deadline = self._offset + self.max_event_size
        return True

    def close(self) -> list[SSEEvent]:
        """Signal the end of the stream: parse a last line without line end and return an unterminated event.
        A fault in that last line raises `CutOff`; one met before it, the `FramingError` a `feed` met."""
        self._check_usable()
        self._closed = True
        out: list[SSEEvent] = []
        if self._pending:
            tail = b"".join(self._pending)
            self._pending = []
            self._pending_len = 0
            try:
                self._parse(tail + b"\n", out)
            except FramingError as exc:
                raise self._cut_off(exc) from exc
        if self._data:
            out.append(
                SSEEvent(
                    self._event_type or "message",
                    "\n".join(self._data),
                    self.last_event_id,
                    self._event_retry,
                    self._start,
                    terminated=False,
                )
            )
            self._data = []
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

    def _check_size(self, end: int) -> None:
        if end > self._deadline:
            limit = self.max_event_size
            raise self._fail(f"SSE event larger than {limit} bytes", self._deadline - limit)

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
            self._deadline += len(_BOM)
            return have[len(_BOM) :]
        return have

    def _hold(self, piece: bytes) -> None:
        self._pending.append(piece)
        self._pending_len += len(piece)
        self._check_size(self._offset + self._pending_len)

    def _parse(self, region: bytes, out: list[SSEEvent]) -> list[SSEEvent]:
        """Parse `region`, which ends with a line end and starts at `self._offset`; append events to `out`."""
        # One C-level decode and split per region instead of one per line: this is what makes the decoder
        # faster than a line-at-a-time parser. Byte widths come from the text when it is ASCII (same length).
        try:
            text = region.decode()
        except UnicodeDecodeError as exc:
            self._parse_until_invalid(region, exc, out)
        if "\r" not in text:
            separator = "\n"
            lines = text.split(separator)
        elif "\n" not in text:
            separator = "\r"
            lines = text.split(separator)
        else:
            separator = "\r\n"
            lines = text.split(separator)
            if not len(lines) - 1 == text.count("\n") == text.count("\r"):
                # Mixed line ends: normalize the text, take each line's size and line-end width from the bytes.
                lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
                lines.pop()  # the empty piece after the final line end
                sizes = list(map(len, region.splitlines()))
                widths = map(len, region.splitlines(keepends=True))
                return self._lines(lines, sizes, [w - n for w, n in zip(widths, sizes, strict=True)], out)
            # Otherwise every line ends in CRLF (Gemini).
        lines.pop()  # the empty piece after the final line end
        pieces = lines if len(text) == len(region) else region.split(separator.encode())
        return self._lines(lines, map(len, pieces), repeat(len(separator)), out)

    def _lines(
        self, lines: list[str], sizes: Iterable[int], ends: Iterable[int], out: list[SSEEvent]
    ) -> list[SSEEvent]:
        """The WHATWG line interpretation, with the decoder's state in locals for speed. `sizes` are the lines'
        byte lengths, `ends` the byte widths of their line ends."""
        pos, limit, deadline = self._offset, self.max_event_size, self._deadline
        start, data, event_type, retry = self._start, self._data, self._event_type, self._event_retry
        for line, size, end in zip(lines, sizes, ends, strict=False):
            if pos + size > deadline and line:
                # Checked before the line has any effect, as when its bytes were still arriving (`_hold`).
                raise self._fail(f"SSE event larger than {limit} bytes", deadline - limit)
            if line.startswith("data:"):  # by far the most common line: no partition, no field lookup
                start = pos if start < 0 else start
                data.append(line[6:] if line.startswith(" ", 5) else line[5:])
            elif not line:
                if data:
                    # tuple.__new__ skips the named tuple's Python-level __new__; every field is given.
                    fields = (event_type or "message", "\n".join(data), self.last_event_id, retry, start, True)
                    out.append(_new_tuple(SSEEvent, fields))
                    data = []
                event_type, retry, start, deadline = "", None, -1, pos + end + limit
            elif line.startswith("event:"):  # the second most common (Anthropic, Responses API)
                start = pos if start < 0 else start
                event_type = line[7:] if line.startswith(" ", 6) else line[6:]
            elif line[0] == ":":
                if start < 0:  # comments are not kept: an endless run of keep-alives is never too large
                    deadline = pos + size + end + limit
                self.comments.append(line[2:] if line.startswith(" ", 1) else line[1:])
            else:
                start = pos if start < 0 else start
                name, colon, value = line.partition(":")
                if colon and value.startswith(" "):
                    value = value[1:]
                if name == "event":  # only without a colon ("event"), which resets the type
                    event_type = value
                elif name == "data":
                    data.append(value)
                elif name == "id":
                    if "\0" not in value:
                        self.last_event_id = value
                elif name == "retry" and value.isascii() and value.isdigit():
                    if len(value) > _MAX_RETRY_DIGITS:  # int() itself refuses past 4300 digits
                        raise self._fail(f"SSE retry value of {len(value)} digits", pos)
                    retry = self.retry = int(value)
                # Any other field name is ignored, as the spec requires.
            pos += size + end
        self._offset, self._deadline = pos, deadline
        self._start, self._data, self._event_type, self._event_retry = start, data, event_type, retry
        return out

    def _parse_until_invalid(self, region: bytes, exc: UnicodeDecodeError, out: list[SSEEvent]) -> NoReturn:
        """Parse the lines before the invalid byte, then raise for it: errors come in stream order."""
        bad = exc.start
        line_start = max(region.rfind(b"\n", 0, bad), region.rfind(b"\r", 0, bad)) + 1
        if line_start:
            self._parse(region[:line_start], out)  # valid UTF-8; may raise a size error first
        # Had this line arrived in pieces, its bytes would have met the size limit before the decode.
        ends = [i for i in (region.find(b"\n", bad), region.find(b"\r", bad)) if i >= 0]
        self._check_size(self._offset + min(ends, default=len(region)) - line_start)
        raise self._fail(f"invalid UTF-8 in SSE line ({exc.reason})", self._offset + bad - line_start)


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
    if newline == "\n" and id is None and retry is None and "\n" not in data and "\r" not in data:
        # The common case (one line of JSON, LF): the same bytes as the general path below, built in one step.
        if event is None:
            return f"data: {data}\n\n".encode()
        if "\n" not in event and "\r" not in event:
            return f"event: {event}\ndata: {data}\n\n".encode()
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
