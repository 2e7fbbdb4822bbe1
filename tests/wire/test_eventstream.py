"""AWS event stream framing: typed headers, CRCs, any chunking, typed errors with offsets, real Bedrock bodies."""

from __future__ import annotations

import struct
import uuid
import zlib
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer
from hypothesis import given
from hypothesis import strategies as st

from harness.wire.errors import FramingError
from harness.wire.eventstream import (
    Byte,
    EventMessage,
    EventStreamDecoder,
    EventStreamFramingError,
    HeaderValue,
    Integer,
    Long,
    Short,
    encode_message,
    frame_lengths,
    iter_messages,
)
from tests.protocols.bedrock import recordings
from tests.wire.chunking import chunkings, outcome, run, split_at

EVENT = {":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event"}
PAYLOAD = b'{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"abc"}'


def decode(*chunks: bytes) -> list[EventMessage]:
    """Every message of `chunks` through one decoder, close() included."""
    return run(EventStreamDecoder, chunks)


def failure(*chunks: bytes) -> EventStreamFramingError:
    with pytest.raises(EventStreamFramingError) as info:
        decode(*chunks)
    return info.value


def pairs(messages: list[EventMessage]) -> list[tuple[dict[str, HeaderValue], bytes]]:
    return [(m.headers, m.payload) for m in messages]


# --- strategies -------------------------------------------------------------------------------------------

names = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=20).filter(
    lambda n: len(n.encode()) < 256
)
timestamps = st.integers(-(10**12), 10**13).map(
    lambda ms: datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
)
values: st.SearchStrategy[HeaderValue] = st.one_of(
    st.booleans(),
    st.integers(-128, 127).map(Byte),
    st.integers(-(2**15), 2**15 - 1).map(Short),
    st.integers(-(2**31), 2**31 - 1).map(Integer),
    st.integers(-(2**63), 2**63 - 1).map(Long),
    st.binary(max_size=40),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=40),
    timestamps,
    st.uuids(),
)
header_maps = st.dictionaries(names, values, max_size=6)
messages = st.lists(st.tuples(header_maps, st.binary(max_size=200)), min_size=1, max_size=5)


# --- round trips and chunking -----------------------------------------------------------------------------


@given(header_maps, st.binary(max_size=300))
def test_encode_then_decode_gives_the_same_typed_headers_and_payload(headers: dict[str, Any], payload: bytes) -> None:
    [message] = decode(encode_message(headers, payload))
    assert message.headers == headers and message.payload == payload and message.offset == 0
    assert list(message.headers) == list(headers)  # wire order kept
    assert [type(v) for v in message.headers.values()] == [type(v) for v in headers.values()]
    assert encode_message(message.headers, message.payload) == encode_message(headers, payload)


@given(messages, st.lists(st.integers(0, 3000), max_size=12))
def test_any_split_gives_the_same_messages(items: list[tuple[dict[str, Any], bytes]], cuts: list[int]) -> None:
    body = b"".join(encode_message(h, p) for h, p in items)
    whole = decode(body)
    assert pairs(whole) == items
    assert decode(*split_at(body, cuts)) == whole


@given(messages, st.integers(0, 3000), st.integers(0, 255), st.lists(st.integers(0, 3000), max_size=8))
def test_errors_and_what_came_before_them_do_not_depend_on_the_chunking(
    items: list[tuple[dict[str, Any], bytes]], at: int, byte: int, cuts: list[int]
) -> None:
    body = bytearray(b"".join(encode_message(h, p) for h, p in items))
    body[at % len(body)] = byte
    assert outcome(EventStreamDecoder, split_at(bytes(body), cuts)) == outcome(EventStreamDecoder, [bytes(body)])


@given(st.binary(max_size=400), st.lists(st.integers(0, 400), max_size=6))
def test_random_bytes_raise_only_the_framing_error(data: bytes, cuts: list[int]) -> None:
    try:
        decode(*split_at(data, cuts))
    except EventStreamFramingError as exc:
        assert exc.offset is not None and 0 <= exc.offset <= len(data)
        assert exc.reason in {"prelude_crc", "message_crc", "length", "header", "truncated"}


def test_messages_come_out_as_soon_as_their_last_byte_arrives() -> None:
    frame = encode_message(EVENT, PAYLOAD)
    decoder = EventStreamDecoder()
    assert decoder.feed(frame[:-1]) == [] and decoder.pending == len(frame) - 1
    [message] = decoder.feed(frame[-1:] + frame[:5])
    assert message.headers == EVENT and message.payload == PAYLOAD
    assert decoder.feed(frame[5:])[0].offset == len(frame)
    assert decoder.close() == [] and decoder.pending == 0


def test_every_header_type_on_the_wire() -> None:
    stamp = datetime(2025, 8, 18, 12, 11, 12, 345000, tzinfo=UTC)
    ident = uuid.UUID("5fe12410-0078-41a0-b346-898202e965e7")
    headers: dict[str, HeaderValue] = {
        "t": True, "f": False, "b": Byte(-1), "s": Short(513), "i": Integer(-2), "l": 7,
        "a": b"\x00\xff", "str": "é", "ts": stamp, "u": ident,
    }  # fmt: skip
    frame = encode_message(headers, b"")
    # name length, name, type byte, value: the exact layout of the AWS specification
    head = frame[12:-4]
    assert head.startswith(b"\x01t\x00\x01f\x01\x01b\x02\xff\x01s\x03\x02\x01\x01i\x04\xff\xff\xff\xfe")
    assert b"\x01l\x05" + struct.pack("!q", 7) in head and b"\x01a\x06\x00\x02\x00\xff" in head
    assert b"\x03str\x07\x00\x02\xc3\xa9" in head
    assert b"\x02ts\x08" + struct.pack("!q", 1755519072345) in head and b"\x01u\x09" + ident.bytes in head
    [message] = decode(frame)
    assert message.headers == headers and type(message.headers["l"]) is Long


def test_crcs_are_crc32_of_the_prelude_and_of_everything_before_the_last_four_bytes() -> None:
    frame = encode_message(EVENT, PAYLOAD)
    total, headers_length, prelude_crc = struct.unpack("!III", frame[:12])
    assert (total, prelude_crc) == (len(frame), zlib.crc32(frame[:8]))
    assert headers_length == len(frame) - 16 - len(PAYLOAD)
    assert struct.unpack("!I", frame[-4:])[0] == zlib.crc32(frame[:-4])


@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        ({"": "x"}, "1 to 255"),
        ({"n" * 256: "x"}, "1 to 255"),
        ({"s": "x" * 65536}, "65535"),
        ({"b": Byte(128)}, "does not fit"),
        ({"t": datetime(2025, 1, 1)}, "timezone"),
        ({"x": 1.5}, "not a header value"),
    ],
)
def test_the_encoder_rejects_what_the_wire_cannot_hold(headers: dict[str, Any], problem: str) -> None:
    with pytest.raises((ValueError, TypeError), match=problem):
        encode_message(headers, b"")


# --- errors with offsets ----------------------------------------------------------------------------------


def _two_frames() -> tuple[bytes, int]:
    first = encode_message(EVENT, PAYLOAD)
    return first + encode_message({":message-type": "event"}, b"{}"), len(first)


def test_a_bad_prelude_crc_names_the_crc_field_of_that_message() -> None:
    body, second = _two_frames()
    broken = bytearray(body)
    broken[second + 9] ^= 0x01
    exc = failure(bytes(broken))
    assert (exc.reason, exc.offset) == ("prelude_crc", second + 8)
    assert "prelude CRC32 mismatch at byte" in str(exc) and isinstance(exc, FramingError)


def test_a_bad_message_crc_names_the_crc_field_and_the_messages_before_it_arrive_first() -> None:
    body, second = _two_frames()
    broken = bytearray(body)
    broken[second + 20] ^= 0x40  # a header byte of the second message
    decoder = EventStreamDecoder()
    [first] = decoder.feed(bytes(broken))  # the good message first ...
    assert first.payload == PAYLOAD
    with pytest.raises(EventStreamFramingError) as info:  # ... the error on the next call (sticky)
        decoder.feed(b"")
    assert (info.value.reason, info.value.offset) == ("message_crc", len(body) - 4)
    with pytest.raises(EventStreamFramingError):
        decoder.close()


def test_a_stream_cut_inside_a_message_is_truncated_at_that_message() -> None:
    body, second = _two_frames()
    for cut in (second + 3, second + 12, len(body) - 1):
        exc = failure(body[:cut])
        assert (exc.reason, exc.offset) == ("truncated", second)
    assert "12-byte prelude" in str(failure(body[: second + 3]))
    assert f"{len(body) - 1 - second} of {len(body) - second} bytes" in str(failure(body[:-1]))


def _prelude(total: int, headers_length: int) -> bytes:
    head = struct.pack("!II", total, headers_length)
    return head + struct.pack("!I", zlib.crc32(head))


@pytest.mark.parametrize(
    ("total", "headers_length", "offset", "text"),
    [
        (15, 0, 0, "total length 15 cannot hold 0 header bytes"),
        (40, 30, 0, "total length 40 cannot hold 30 header bytes"),
        (200_000, 140_000, 4, "headers length 140000 exceeds 131072"),
        (30 * 1024 * 1024, 0, 0, "payload length"),
    ],
)
def test_impossible_lengths_are_rejected_at_the_prelude(
    total: int, headers_length: int, offset: int, text: str
) -> None:
    exc = failure(_prelude(total, headers_length))
    assert (exc.reason, exc.offset) == ("length", offset)
    assert text in str(exc)


def _frame_with_raw_headers(raw: bytes) -> bytes:
    prefix = struct.pack("!II", 16 + len(raw), len(raw))
    message = prefix + struct.pack("!I", zlib.crc32(prefix)) + raw
    return message + struct.pack("!I", zlib.crc32(message))


@pytest.mark.parametrize(
    ("raw", "offset", "text"),
    [
        (b"\x01a\x0a", 14, "unknown header value type 10"),
        (b"\x05ab", 12, "header name overruns"),
        (b"\x01a\x07\x00\x09abc", 15, "header value overruns"),
        (b"\x01a\x07\x00\x02\xff\xfe", 17, "not UTF-8"),
        (b"\x01\xff\x00", 13, "header name is not UTF-8"),
        (b"\x01a\x00\x01a\x01", 15, "appears twice"),
        (b"\x01a\x04\x00\x00", 15, "header value overruns"),
    ],
)
def test_malformed_headers_name_their_offset(raw: bytes, offset: int, text: str) -> None:
    exc = failure(_frame_with_raw_headers(raw))
    assert (exc.reason, exc.offset) == ("header", offset)
    assert text in str(exc)


def test_a_decoder_is_not_used_after_close() -> None:
    decoder = EventStreamDecoder()
    decoder.close()
    with pytest.raises(RuntimeError, match="after close"):
        decoder.feed(b"")


# --- real Bedrock bodies ----------------------------------------------------------------------------------


def _botocore(body: bytes) -> list[tuple[dict[str, Any], bytes]]:
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    return [(dict(m.headers), m.payload) for m in buffer]


def _real_streams() -> list[tuple[str, bytes]]:
    bodies = [(r.source, r.body) for r in recordings.all_recordings() if r.stream and r.status == 200]
    return [*bodies, ("envoyproxy/ai-gateway base64RealStreamingEvents", recordings.gateway_stream())]


def test_real_converse_streams_decode_as_botocore_decodes_them_in_every_chunking() -> None:
    streams = _real_streams()
    assert len(streams) == 10
    for source, body in streams:
        reference = _botocore(body)
        assert len(reference) > 3, source
        for name, chunks in chunkings(body).items():
            assert pairs(decode(*chunks)) == reference, f"{source} ({name})"
        # Re-encoding what was decoded gives back the recorded bytes: the encoder writes frames as Bedrock does.
        assert b"".join(encode_message(m.headers, m.payload) for m in iter_messages([body])) == body, source


def test_real_frames_carry_the_three_string_headers_in_bedrocks_order() -> None:
    body = recordings.recording("test_bedrock_model_stream.yaml").body
    found = iter_messages([body])
    assert [list(m.headers) for m in found] == [[":event-type", ":content-type", ":message-type"]] * len(found)
    assert [m.headers[":event-type"] for m in found][:2] == ["messageStart", "contentBlockDelta"]
    assert [m.headers[":event-type"] for m in found][-2:] == ["messageStop", "metadata"]
    assert {m.headers[":content-type"] for m in found} == {"application/json"}
    assert found[1].offset == 143 and found[1].payload.startswith(b'{"contentBlockIndex":0,"delta":{"text":"The"}')


def test_a_flipped_bit_in_a_real_body_is_caught_with_its_offset() -> None:
    body = bytearray(recordings.gateway_stream())
    frames = iter_messages([bytes(body)])
    third = frames[2].offset
    end = frames[3].offset
    body[third + 40] ^= 0x01  # inside the third frame's headers
    exc = failure(bytes(body))
    assert (exc.reason, exc.offset) == ("message_crc", end - 4)


def test_frame_lengths_cut_a_body_at_its_frames() -> None:
    body, second = _two_frames()
    assert frame_lengths(body) == [second, len(body) - second]
    assert frame_lengths(body[:-3]) == [second, len(body) - second - 3]  # a cut-off frame is the last piece
    assert frame_lengths(b"\x00\x00") == [2] and frame_lengths(b"") == []
    real = recordings.gateway_stream()
    assert [m.offset for m in iter_messages([real])] == [
        sum(frame_lengths(real)[:i]) for i in range(len(frame_lengths(real)))
    ]
