"""Streamed JSON-array decoder and encoder: incremental elements, Gemini separators, typed errors with offsets."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.wire.errors import FramingError
from harness.wire.jsonarray import JSONArrayDecoder, JSONArrayEncoder
from tests.wire.chunking import json_values, outcome, run, split_at


def decode(*chunks: bytes, **kwargs: int) -> list[Any]:
    """All elements of `chunks` through one decoder, close() included."""
    return run(lambda: JSONArrayDecoder(**kwargs), chunks)


def error_offset(*chunks: bytes, **kwargs: int) -> int | None:
    with pytest.raises(FramingError) as info:
        decode(*chunks, **kwargs)
    return info.value.offset


def test_gemini_layout() -> None:
    body = b'[{\n  "candidates": []\n}\n,\r\n{\n  "usageMetadata": {"totalTokenCount": 3}\n}\n]'
    assert decode(body) == [{"candidates": []}, {"usageMetadata": {"totalTokenCount": 3}}]


def test_each_element_is_yielded_as_soon_as_it_closes() -> None:
    decoder = JSONArrayDecoder()
    assert decoder.feed(b'[{"a": [1, {"b": 2}]') == []
    assert decoder.feed(b"}") == [{"a": [1, {"b": 2}]}]
    assert decoder.feed(b'\n,\r\n"str') == []
    assert decoder.feed(b'ing"') == ["string"]
    assert decoder.feed(b", 12") == []  # a number may go on: it ends at the next delimiter
    assert decoder.feed(b"]") == [12]
    assert decoder.close() == []


def test_empty_array_and_whitespace() -> None:
    assert decode(b"  [ \r\n ]  \n") == []


def test_brackets_and_quotes_inside_strings_do_not_count() -> None:
    body = b'[{"t": "]}{[\\"\\\\"}, "a\\"]"]'
    assert decode(body) == [{"t": ']}{["\\'}, 'a"]']


def test_escape_split_from_the_escaped_byte() -> None:
    body = b'["a\\"b", "\\\\"]'
    for cut in range(len(body) + 1):
        assert decode(body[:cut], body[cut:]) == ['a"b', "\\"]


def test_utf8_split_across_chunks() -> None:
    body = '[{"text": "世界 🎉"}]'.encode()
    for cut in range(len(body) + 1):
        assert decode(body[:cut], body[cut:]) == [{"text": "世界 🎉"}]


def test_long_string_still_open_at_a_chunk_end_is_scanned_in_linear_time() -> None:
    # With backtracking quantifiers, the scan of an unclosed 40-byte string already takes seconds.
    decoder = JSONArrayDecoder()
    assert decoder.feed(b'[{"a": "' + b"xy\\n" * 100_000) == []
    assert decoder.feed(b'"}]') == [{"a": "xy\n" * 100_000}]


def test_scalars_as_elements() -> None:
    assert decode(b'[1,-2.5e1 ,true\n,null,"x",[],{}]') == [1, -25.0, True, None, "x", [], {}]


def test_buffer_holds_only_the_element_being_received() -> None:
    decoder = JSONArrayDecoder()
    decoder.feed(b"[" + b'{"a": 1},' * 1000 + b'{"b": ')
    assert len(decoder._buf) == len(b'{"b": ')


@pytest.mark.parametrize(
    ("body", "offset"),
    [
        (b"", 0),
        (b"  ", 2),
        (b"{}", 0),
        (b"[1,2", 4),
        (b'[{"a": 1}', 9),
        (b'[{"a": "unterminated', 20),
        (b"[1,]", 3),
        (b"[,1]", 1),
        (b"[1 2]", 3),
        (b"[1]x", 3),
        (b"[1] [2]", 4),
        (b'[{"a" 1}]', 6),
        (b'[{"a": 1]]', 8),
        (b"[tru]", 1),
        (b"[NaN]", 1),
        (b'[{"a": "\xff"}]', 8),
        (b"[1:2]", 2),
    ],
    ids=lambda v: repr(v) if isinstance(v, bytes) else str(v),
)
def test_malformed_input_raises_framing_error_with_offset(body: bytes, offset: int) -> None:
    assert error_offset(body) == offset
    assert error_offset(*[body[i : i + 1] for i in range(len(body))]) == offset


def test_integer_beyond_the_interpreter_digit_limit_is_a_framing_error() -> None:
    assert error_offset(b"[1, " + b"7" * 5000 + b"]") == 4


def test_unclosed_array_message_names_the_state() -> None:
    with pytest.raises(FramingError, match="not closed"):
        decode(b'[{"a": 1}\n,\r\n')


def test_max_element_size() -> None:
    assert error_offset(b"[1, " + b'"' + b"x" * 20 + b'"]', max_element_size=16) == 4
    decoder = JSONArrayDecoder(max_element_size=16)
    decoder.feed(b'[1, {"a": "')
    with pytest.raises(FramingError) as info:
        decoder.feed(b"y" * 20)
    assert info.value.offset == 4


def test_elements_before_an_error_are_delivered_and_the_next_call_raises() -> None:
    decoder = JSONArrayDecoder()
    assert decoder.feed(b'[{"a": 1}\n,\r\n{"b": 2} x') == [{"a": 1}, {"b": 2}]
    with pytest.raises(FramingError) as info:
        decoder.close()
    assert info.value.offset == 22


def test_error_is_sticky_and_close_is_final() -> None:
    decoder = JSONArrayDecoder()
    with pytest.raises(FramingError):
        decoder.feed(b"x")
    with pytest.raises(FramingError):
        decoder.feed(b"[]")
    done = JSONArrayDecoder()
    done.feed(b"[]")
    assert done.close() == []
    with pytest.raises(RuntimeError):
        done.feed(b" ")


def test_encoder_default_is_gemini_separator() -> None:
    encoder = JSONArrayEncoder()
    body = encoder.encode({"a": 1}) + encoder.encode(["é"]) + encoder.close()
    assert body == '[{"a":1}\n,\r\n["é"]]'.encode()


def test_encoder_empty_and_indent() -> None:
    assert JSONArrayEncoder().close() == b"[]"
    encoder = JSONArrayEncoder(b",", indent=2)
    assert encoder.encode({"a": 1}) + encoder.close() == b'[{\n  "a": 1\n}]'


def test_encoder_rejects_bad_separator_and_reuse() -> None:
    with pytest.raises(ValueError):
        JSONArrayEncoder(b";")
    encoder = JSONArrayEncoder()
    encoder.close()
    with pytest.raises(RuntimeError):
        encoder.encode(1)
    with pytest.raises(RuntimeError):
        encoder.close()


@given(
    st.lists(json_values, max_size=6),
    st.sampled_from([b",", b"\n,\r\n", b" , ", b"\r\n,"]),
    st.sampled_from([None, 2]),
    st.lists(st.integers(min_value=0, max_value=600), max_size=8),
)
def test_encode_decode_round_trip_any_split(
    values: list[Any], separator: bytes, indent: int | None, cuts: list[int]
) -> None:
    encoder = JSONArrayEncoder(separator, indent=indent)
    body = b"".join(encoder.encode(v) for v in values) + encoder.close()
    assert run(JSONArrayDecoder, split_at(body, cuts)) == values


_TOKENS = [b"[", b"]", b"{", b"}", b'"', b"\\", b":", b",", b"1", b"-", b"e", b"true", b" ", b"\r\n", b"\xc3\xa9"]
_TOKENS += [b"\xff", b'{"a":', b'"x"', b"null"]


@given(
    st.lists(st.sampled_from(_TOKENS), max_size=40).map(b"".join) | st.binary(max_size=200),
    st.lists(st.integers(min_value=0, max_value=200), max_size=10),
)
def test_any_split_gives_the_same_output_or_error(body: bytes, cuts: list[int]) -> None:
    # Only FramingError is caught by `outcome`: anything else escapes and fails the test.
    assert outcome(JSONArrayDecoder, split_at(body, cuts)) == outcome(JSONArrayDecoder, [body])


@given(st.lists(json_values, min_size=1, max_size=4), st.integers(min_value=0, max_value=10_000))
def test_any_split_of_a_valid_array_prefix_is_incomplete_not_wrong(values: list[Any], cut: int) -> None:
    encoder = JSONArrayEncoder()
    body = b"".join(encoder.encode(v) for v in values) + encoder.close()
    cut %= len(body)
    decoder = JSONArrayDecoder()
    got = decoder.feed(body[:cut])
    assert got == values[: len(got)]
    with pytest.raises(FramingError, match=r"not closed|no JSON array"):
        decoder.close()
