"""NDJSON decoder and encoder: lines, blank lines, a last line without newline, typed errors with offsets."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.wire.errors import FramingError
from harness.wire.ndjson import NDJSONDecoder, encode_ndjson, load_json
from tests.wire.chunking import json_values, outcome, run, split_at


def decode(*chunks: bytes, **kwargs: int) -> list[Any]:
    """All values of `chunks` through one decoder, close() included."""
    return run(lambda: NDJSONDecoder(**kwargs), chunks)


def error_offset(*chunks: bytes, **kwargs: int) -> int | None:
    with pytest.raises(FramingError) as info:
        decode(*chunks, **kwargs)
    return info.value.offset


def test_one_value_per_line() -> None:
    assert decode(b'{"done":false}\n{"done":true}\n') == [{"done": False}, {"done": True}]


def test_values_are_yielded_as_soon_as_their_line_ends() -> None:
    decoder = NDJSONDecoder()
    assert decoder.feed(b'{"a":1}\n{"b"') == [{"a": 1}]
    assert decoder.feed(b":2}\n") == [{"b": 2}]
    assert decoder.close() == []


def test_blank_and_whitespace_lines_are_skipped() -> None:
    assert decode(b"\n1\n\n  \t\n\r\n2\n\n") == [1, 2]


def test_crlf_line_ends() -> None:
    assert decode(b'{"a":1}\r\n{"a":2}\r\n') == [{"a": 1}, {"a": 2}]


def test_last_line_without_newline_is_accepted_at_close() -> None:
    decoder = NDJSONDecoder()
    assert decoder.feed(b'1\n{"done":true}') == [1]
    assert decoder.close() == [{"done": True}]


def test_any_json_value_per_line() -> None:
    assert decode(b'"s"\n[1]\nnull\ntrue\n-1.5e3\n') == ["s", [1], None, True, -1500.0]


def test_utf8_split_across_chunks() -> None:
    body = '{"content":"世界 🎉"}\n'.encode()
    for cut in range(len(body) + 1):
        assert decode(body[:cut], body[cut:]) == [{"content": "世界 🎉"}]


def test_invalid_line_raises_with_offset_of_the_bad_byte() -> None:
    assert error_offset(b'{"a":1}\n{"a":}\n') == 13


def test_offset_counts_bytes_not_characters() -> None:
    # 'é' is two bytes: the unexpected '2' is byte 15 of the stream, though character 14.
    assert error_offset('{"é":1}\n{"é" 2}\n'.encode()) == 15


def test_two_values_on_one_line_is_an_error() -> None:
    assert error_offset(b"1 2\n") == 2


def test_invalid_utf8_raises_with_offset() -> None:
    assert error_offset(b'1\n"a\xffb"\n') == 4


def test_invalid_last_line_at_close() -> None:
    # json names where the unterminated string started.
    assert error_offset(b'1\n{"trunc') == 3


def test_nan_and_infinity_are_not_json() -> None:
    assert error_offset(b"1\nNaN\n") == 2
    assert error_offset(b"[Infinity]\n") == 0


def test_deep_nesting_is_a_framing_error() -> None:
    assert error_offset(b"[" * 100_000 + b"]" * 100_000 + b"\n") == 0


def test_integer_beyond_the_interpreter_digit_limit_is_a_framing_error() -> None:
    assert error_offset(b"1\n" + b"7" * 5000 + b"\n") == 2


def test_max_line_size() -> None:
    assert error_offset(b"1\n" + b" " * 10 + b"22\n", max_line_size=8) == 2
    decoder = NDJSONDecoder(max_line_size=8)
    decoder.feed(b"1\n[1,")
    with pytest.raises(FramingError) as info:
        decoder.feed(b"2,3,4,5")
    assert info.value.offset == 2


def test_values_before_an_error_are_delivered_and_the_next_call_raises() -> None:
    decoder = NDJSONDecoder()
    assert decoder.feed(b'{"a":1}\n{oops}\n{"b":2}\n') == [{"a": 1}]
    with pytest.raises(FramingError) as info:
        decoder.feed(b"")
    assert info.value.offset == 9


def test_error_is_sticky_and_close_is_final() -> None:
    decoder = NDJSONDecoder()
    with pytest.raises(FramingError):
        decoder.feed(b"x\n")
    with pytest.raises(FramingError):
        decoder.feed(b"1\n")
    fresh = NDJSONDecoder()
    fresh.close()
    with pytest.raises(RuntimeError):
        fresh.feed(b"1\n")


def test_load_json_reports_offset_plus_position() -> None:
    with pytest.raises(FramingError) as info:
        load_json(b'{"a" 1}', 100)
    assert info.value.offset == 105


def test_encode_ndjson_is_compact_utf8_with_newline() -> None:
    assert encode_ndjson({"content": "é", "done": False}) == '{"content":"é","done":false}\n'.encode()
    with pytest.raises(ValueError):
        encode_ndjson(float("nan"))


@given(st.lists(json_values, max_size=8), st.lists(st.integers(min_value=0, max_value=500), max_size=8))
def test_encode_decode_round_trip_any_split(values: list[Any], cuts: list[int]) -> None:
    body = b"".join(encode_ndjson(v) for v in values)
    assert run(NDJSONDecoder, split_at(body, cuts)) == values


_TOKENS = [b"{", b"}", b"[", b"]", b'"', b":", b",", b"1", b" ", b"\n", b"\r\n", b"\\", b"\xc3\xa9", b"\xff", b"tru"]


@given(
    st.lists(st.sampled_from(_TOKENS), max_size=40).map(b"".join) | st.binary(max_size=200),
    st.lists(st.integers(min_value=0, max_value=200), max_size=8),
)
def test_any_split_gives_the_same_output_or_error(body: bytes, cuts: list[int]) -> None:
    assert outcome(NDJSONDecoder, split_at(body, cuts)) == outcome(NDJSONDecoder, [body])
