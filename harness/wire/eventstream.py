"""The AWS event stream binary framing (`application/vnd.amazon.eventstream`): incremental decoder and encoder.

A message is a 12-byte prelude (total length, headers length, both big-endian uint32, and the CRC32 of those eight
bytes), then the headers, the payload, and the CRC32 of everything before it. A header is a name (uint8 length +
UTF-8), a type byte and a typed value: 0/1 boolean true/false (no value bytes), 2 byte, 3 short, 4 integer,
5 long (signed, big-endian), 6 byte array and 7 string (uint16 length + bytes), 8 timestamp (int64 milliseconds
since the epoch), 9 UUID (16 bytes). AWS services put `:message-type` (`event`, `exception`, `error`),
`:event-type` / `:exception-type` / `:error-code`, and `:content-type` there.

Decoded header values keep their wire type: strings are `str`, byte arrays `bytes`, booleans `bool`, UUIDs
`uuid.UUID`, timestamps `datetime` (UTC), and the four integer widths the `int` subclasses `Byte`, `Short`,
`Integer`, `Long` (equal to plain ints), so encoding a decoded message gives back the same bytes. The decoder
is chunk-boundary independent and raises `EventStreamFramingError` (a `FramingError`) with the byte offset of
what is wrong: a CRC that does not match (the offset of the CRC field), a length out of bounds, a malformed
header, or, at `close()`, a message cut off by the end of the stream.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from typing import NamedTuple, TypeAlias

from harness.wire.errors import CutOff, FramingError, Sticky

MEDIA_TYPE = "application/vnd.amazon.eventstream"
"""Content-Type of a response framed this way."""
MAX_HEADERS_LENGTH = 128 * 1024
"""Largest headers section accepted (the limit AWS SDKs enforce)."""
MAX_PAYLOAD_LENGTH = 24 * 1024 * 1024
"""Largest payload accepted (the limit AWS SDKs enforce)."""

_PRELUDE = struct.Struct("!III")
_CRC = struct.Struct("!I")
_PRELUDE_LENGTH = 12
_MIN_MESSAGE = _PRELUDE_LENGTH + 4
_KNOWN_LIMIT = 64  # distinct header sections a decoder remembers
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Byte(int):
    """A header value of type 2 (signed 8-bit)."""


class Short(int):
    """A header value of type 3 (signed 16-bit)."""


class Integer(int):
    """A header value of type 4 (signed 32-bit)."""


class Long(int):
    """A header value of type 5 (signed 64-bit); plain ints are encoded as this type."""


HeaderValue: TypeAlias = bool | int | bytes | str | datetime | uuid.UUID
"""What a header can hold (see the module docstring for the wire type of each)."""


class HeaderType(IntEnum):
    """The type byte of a header value."""

    BOOL_TRUE = 0
    BOOL_FALSE = 1
    BYTE = 2
    SHORT = 3
    INTEGER = 4
    LONG = 5
    BYTE_ARRAY = 6
    STRING = 7
    TIMESTAMP = 8
    UUID = 9


_INTS: dict[int, tuple[struct.Struct, type[int]]] = {
    HeaderType.BYTE: (struct.Struct("!b"), Byte),
    HeaderType.SHORT: (struct.Struct("!h"), Short),
    HeaderType.INTEGER: (struct.Struct("!i"), Integer),
    HeaderType.LONG: (struct.Struct("!q"), Long),
}
_INT_TYPES: dict[type[int], int] = {cls: code for code, (_, cls) in _INTS.items()}
_TIMESTAMP = struct.Struct("!q")
_LENGTH16 = struct.Struct("!H")
_WIDTHS: dict[int, int] = {
    HeaderType.BYTE: 1,
    HeaderType.SHORT: 2,
    HeaderType.INTEGER: 4,
    HeaderType.LONG: 8,
    HeaderType.TIMESTAMP: 8,
    HeaderType.UUID: 16,
}


class EventStreamFramingError(FramingError):
    """Bytes that are not AWS event stream framing; `offset` is where the fault is, `reason` says which."""

    def __init__(self, reason: str, message: str, *, offset: int) -> None:
        super().__init__(f"event stream: {message}", offset=offset)
        self.reason = reason
        """One of `prelude_crc`, `message_crc`, `length`, `header`, `truncated`."""


class EventStreamCutOff(EventStreamFramingError, CutOff):
    """Bytes of a message the end of the stream cut off (`reason` `truncated`), raised by `close()`."""

    def __init__(self, message: str, *, offset: int) -> None:
        super().__init__("truncated", message, offset=offset)


class EventMessage(NamedTuple):
    """One framed message (a named tuple: cheap to build at hundreds of thousands per second)."""

    headers: dict[str, HeaderValue]
    """Headers by name, in wire order, values typed as the module docstring says."""
    payload: bytes
    """The payload bytes (JSON for AWS events and exceptions)."""
    offset: int
    """Byte offset of the message's first prelude byte in the stream."""


class EventStreamDecoder(Sticky):
    """Incremental decoder: feed bytes as they arrive, get whole messages; the same for any chunking."""

    def __init__(
        self, *, max_headers_length: int = MAX_HEADERS_LENGTH, max_payload_length: int = MAX_PAYLOAD_LENGTH
    ) -> None:
        self.max_headers_length = max_headers_length
        """Largest headers section accepted."""
        self.max_payload_length = max_payload_length
        """Largest payload accepted."""
        self._buf = bytearray()
        self._base = 0  # stream offset of self._buf[0]
        # AWS services send the same few header sections over and over: parse each distinct one once.
        self._known: dict[bytes, dict[str, HeaderValue]] = {}
        self._error: EventStreamFramingError | None = None
        self._closed = False

    @property
    def pending(self) -> int:
        """Bytes received that do not yet form a whole message."""
        return len(self._buf)

    def feed(self, chunk: bytes) -> list[EventMessage]:
        """Consume the next bytes; return the messages they complete.

        On malformed input, raises `EventStreamFramingError`; messages completed earlier in the same chunk are
        returned first and the (sticky) error is raised by the next call, whatever the chunking.
        """
        self._check_usable()
        self._buf += chunk
        out: list[EventMessage] = []
        try:
            self._parse(out)
        except EventStreamFramingError as exc:
            self._error = exc
            if not out:
                raise
        return out

    def close(self) -> list[EventMessage]:
        """End of the stream: nothing more is returned; bytes of an unfinished message are an `EventStreamCutOff`
        (an error met before the end is the one a `feed` met)."""
        self._check_usable()
        self._closed = True
        if not self._buf:
            return []
        have = len(self._buf)
        if have < _PRELUDE_LENGTH:
            detail = f"{have} bytes of a 12-byte prelude"
        else:
            detail = f"{have} of {_PRELUDE.unpack_from(self._buf)[0]} bytes"
        raise EventStreamCutOff(f"stream ends inside a message ({detail})", offset=self._base)

    def _check_usable(self) -> None:
        if self._error is not None:
            raise self._error
        if self._closed:
            raise RuntimeError("EventStreamDecoder used after close()")

    def _parse(self, out: list[EventMessage]) -> None:
        buf = self._buf
        size = len(buf)
        pos = 0
        try:
            with memoryview(buf) as view:
                while size - pos >= _PRELUDE_LENGTH:
                    total = self._check_prelude(view, pos)
                    end = pos + total
                    if end > size:
                        break
                    crc_at = end - 4
                    if zlib.crc32(view[pos:crc_at]) != _CRC.unpack_from(view, crc_at)[0]:
                        where = self._base + crc_at
                        raise EventStreamFramingError("message_crc", "message CRC32 mismatch", offset=where)
                    headers_end = pos + _PRELUDE_LENGTH + _PRELUDE.unpack_from(view, pos)[1]
                    head = bytes(view[pos + _PRELUDE_LENGTH : headers_end])
                    known = self._known.get(head)
                    if known is None:
                        known = _headers(view, pos + _PRELUDE_LENGTH, headers_end, self._base)
                        if len(self._known) < _KNOWN_LIMIT:
                            self._known[head] = known
                    out.append(EventMessage(dict(known), bytes(view[headers_end:crc_at]), self._base + pos))
                    pos = end
        finally:
            if pos:  # the view is released here: only now may the buffer shrink
                del buf[:pos]
                self._base += pos

    def _check_prelude(self, view: memoryview, pos: int) -> int:
        total, headers_length, prelude_crc = _PRELUDE.unpack_from(view, pos)
        where = self._base + pos
        if zlib.crc32(view[pos : pos + 8]) != prelude_crc:
            raise EventStreamFramingError("prelude_crc", "prelude CRC32 mismatch", offset=where + 8)
        if headers_length > self.max_headers_length:
            raise EventStreamFramingError(
                "length", f"headers length {headers_length} exceeds {self.max_headers_length}", offset=where + 4
            )
        payload_length = total - _MIN_MESSAGE - headers_length
        if payload_length < 0:
            raise EventStreamFramingError(
                "length", f"total length {total} cannot hold {headers_length} header bytes", offset=where
            )
        if payload_length > self.max_payload_length:
            raise EventStreamFramingError(
                "length", f"payload length {payload_length} exceeds {self.max_payload_length}", offset=where
            )
        return int(total)


def _fail_header(message: str, at: int) -> EventStreamFramingError:
    return EventStreamFramingError("header", message, offset=at)


def _headers(view: memoryview, pos: int, end: int, base: int) -> dict[str, HeaderValue]:
    """Parse the headers section view[pos:end] (`base` turns positions into stream offsets for errors)."""
    headers: dict[str, HeaderValue] = {}
    while pos < end:
        start = pos
        name_length = view[pos]
        pos += 1
        if name_length == 0 or pos + name_length + 1 > end:
            raise _fail_header("header name overruns the headers section", base + start)
        try:
            name = bytes(view[pos : pos + name_length]).decode()
        except UnicodeDecodeError:
            raise _fail_header("header name is not UTF-8", base + pos) from None
        pos += name_length
        kind = view[pos]
        pos += 1
        value, pos = _value(view, kind, pos, end, base)
        if name in headers:
            raise _fail_header(f"header {name!r} appears twice", base + start)
        headers[name] = value
    return headers


def _value(view: memoryview, kind: int, pos: int, end: int, base: int) -> tuple[HeaderValue, int]:
    """One typed header value at `pos`; returns it and the position after it."""
    if kind == HeaderType.STRING or kind == HeaderType.BYTE_ARRAY:
        if pos + 2 > end:
            raise _fail_header("header value length overruns the headers section", base + pos)
        stop = pos + 2 + _LENGTH16.unpack_from(view, pos)[0]
        if stop > end:
            raise _fail_header("header value overruns the headers section", base + pos)
        raw = bytes(view[pos + 2 : stop])
        if kind == HeaderType.BYTE_ARRAY:
            return raw, stop
        try:
            return raw.decode(), stop
        except UnicodeDecodeError as exc:
            raise _fail_header("string header value is not UTF-8", base + pos + 2 + exc.start) from None
    if kind == HeaderType.BOOL_TRUE or kind == HeaderType.BOOL_FALSE:
        return kind == HeaderType.BOOL_TRUE, pos
    width = _WIDTHS.get(kind)
    if width is None:
        raise _fail_header(f"unknown header value type {kind}", base + pos - 1)
    if pos + width > end:
        raise _fail_header("header value overruns the headers section", base + pos)
    stop = pos + width
    if kind == HeaderType.TIMESTAMP:
        millis = _TIMESTAMP.unpack_from(view, pos)[0]
        try:
            return _EPOCH + timedelta(milliseconds=millis), stop
        except OverflowError:
            raise _fail_header(f"timestamp {millis} ms is out of range", base + pos) from None
    if kind == HeaderType.UUID:
        return uuid.UUID(bytes=bytes(view[pos:stop])), stop
    packer, cls = _INTS[kind]
    return cls(packer.unpack_from(view, pos)[0]), stop


def frame_lengths(body: bytes) -> list[int]:
    """The byte length of each frame of a whole body, read from the preludes without checking anything (for
    recordings whose network chunk boundaries were lost); a tail too short for its prelude is one last piece."""
    lengths: list[int] = []
    pos = 0
    while pos < len(body):
        total = _PRELUDE.unpack_from(body, pos)[0] if len(body) - pos >= _PRELUDE_LENGTH else 0
        step = total if _MIN_MESSAGE <= total <= len(body) - pos else len(body) - pos
        lengths.append(step)
        pos += step
    return lengths


def iter_messages(chunks: Iterable[bytes]) -> list[EventMessage]:
    """Every message of a whole stream given as chunks (convenience for tests and tools)."""
    decoder = EventStreamDecoder()
    out = [message for chunk in chunks for message in decoder.feed(chunk)]
    return out + decoder.close()


# --- encoding ---------------------------------------------------------------------------------------------


def _encode_value(name: str, value: HeaderValue) -> bytes:
    if isinstance(value, bool):
        return bytes([HeaderType.BOOL_TRUE if value else HeaderType.BOOL_FALSE])
    if isinstance(value, int):
        code = _INT_TYPES.get(type(value), HeaderType.LONG)
        try:
            return bytes([code]) + _INTS[code][0].pack(value)
        except struct.error:
            raise ValueError(f"header {name!r}: {value} does not fit type {HeaderType(code).name}") from None
    if isinstance(value, str | bytes):
        raw = value.encode() if isinstance(value, str) else value
        if len(raw) > 0xFFFF:
            raise ValueError(f"header {name!r}: value of {len(raw)} bytes exceeds 65535")
        code = HeaderType.STRING if isinstance(value, str) else HeaderType.BYTE_ARRAY
        return bytes([code]) + _LENGTH16.pack(len(raw)) + raw
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"header {name!r}: a timestamp needs a timezone")
        millis = (value - _EPOCH) // timedelta(milliseconds=1)
        return bytes([HeaderType.TIMESTAMP]) + _TIMESTAMP.pack(millis)
    if isinstance(value, uuid.UUID):
        return bytes([HeaderType.UUID]) + value.bytes
    raise TypeError(f"header {name!r}: {type(value).__name__} is not a header value type")


def encode_headers(headers: Mapping[str, HeaderValue]) -> bytes:
    """The headers section for these headers, in the mapping's order."""
    parts = []
    for name, value in headers.items():
        raw = name.encode()
        if not 0 < len(raw) < 256:
            raise ValueError(f"header name {name!r} must be 1 to 255 UTF-8 bytes")
        parts.append(bytes([len(raw)]) + raw + _encode_value(name, value))
    return b"".join(parts)


def encode_message(headers: Mapping[str, HeaderValue], payload: bytes) -> bytes:
    """One framed message: prelude with its CRC, headers, payload, message CRC."""
    return encode_frame(encode_headers(headers), payload)


def encode_frame(head: bytes, payload: bytes) -> bytes:
    """One framed message from an already encoded headers section (`encode_headers`), for encoders that send
    the same headers again and again."""
    if len(head) > MAX_HEADERS_LENGTH:
        raise ValueError(f"headers of {len(head)} bytes exceed {MAX_HEADERS_LENGTH}")
    if len(payload) > MAX_PAYLOAD_LENGTH:
        raise ValueError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD_LENGTH}")
    prefix = struct.pack("!II", _MIN_MESSAGE + len(head) + len(payload), len(head))
    message = prefix + _CRC.pack(zlib.crc32(prefix)) + head + payload
    return message + _CRC.pack(zlib.crc32(message))
