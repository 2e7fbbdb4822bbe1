"""The wire excerpt's chunk boundaries and arrival times: kept where the tap has them, optional for older traces,
and checked for consistency when read."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import ValidationError

from harness.runner.execute import WIRE_EXCERPT, _excerpt
from harness.trace import RunTrace, Wire, validate
from harness.trace.identity import Run


def test_offsets_split_the_excerpt_at_the_chunk_boundaries() -> None:
    chunks = (b"data: a\n\n", b"data: b\n", b"\ndata: [DONE]\n\n")
    text, offsets, cut = _excerpt(chunks)
    assert [text[a:b] for a, b in zip(offsets, [*offsets[1:], len(text)], strict=True)] == [c.decode() for c in chunks]
    assert not cut


def test_a_character_split_between_chunks_belongs_to_the_chunk_that_completes_it() -> None:
    euro = "\u20ac".encode()  # three bytes
    text, offsets, _ = _excerpt((b"x" + euro[:1], euro[1:] + b"y"))
    assert text == "x\u20acy"
    assert offsets == [0, 1]  # chunk 1 shows "x"; the euro sign is whole in chunk 2
    assert "\ufffd" not in text


def test_the_excerpt_stops_at_its_limit_and_says_so() -> None:
    chunks = tuple(b"z" * 1000 for _ in range(40))
    text, offsets, cut = _excerpt(chunks, limit=16_384)
    assert len(text) == 16_384 and cut
    assert offsets == [i * 1000 for i in range(17)]  # chunks that begin inside the excerpt


def test_a_long_stream_is_kept_whole_not_cut_at_16_kib() -> None:
    chunks = tuple(b"data: " + b"z" * 994 + b"\n\n" for _ in range(200))  # 200 kB, past the old 16 KiB cut
    text, offsets, cut = _excerpt(chunks)
    assert not cut and text.encode() == b"".join(chunks) and len(offsets) == 200
    assert WIRE_EXCERPT >= 8 * 1024 * 1024


def _trace(**wire: object) -> RunTrace:
    run = Run("translated", "anthropic", "openai", "text-basic", True)
    return RunTrace.of(run, "c", wire=Wire(**wire))


def test_a_trace_written_before_chunk_times_still_reads_and_validates() -> None:
    old = {
        "cassette": "openai/text-basic.stream.yaml",
        "interaction": 0,
        "upstream": "data: x\n\n",
        "frontend": "",
        "upstream_chunks": 1,
        "frontend_chunks": 0,
        "truncated": False,
    }
    trace = _trace(**old)
    validate(trace.model_dump(mode="json"), "run")
    assert trace.wire.upstream_offsets == [] and trace.wire.upstream_times_ms == []


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ({"upstream": "ab", "upstream_chunks": 2, "upstream_offsets": [1, 0]}, "must ascend"),
        ({"upstream": "ab", "upstream_chunks": 1, "upstream_offsets": [0, 5]}, "must ascend"),
        ({"upstream": "ab", "upstream_chunks": 1, "upstream_times_ms": [1.0, 2.0]}, "more chunk offsets or times"),
        ({"frontend_chunks": 2, "frontend_times_ms": [1.0, 2.0], "frontend_events": [1]}, "one entry per client"),
        ({"frontend_chunks": 2, "frontend_times_ms": [1.0, 2.0], "frontend_events": [2, 1]}, "must not decrease"),
        ({"upstream_chunks": 1, "upstream_times_ms": [1.0], "event_chunks": [3]}, "must name upstream chunks"),
    ],
)
def test_inconsistent_chunk_facts_are_refused(wire: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _trace(**wire)


def test_event_places_need_one_entry_per_upstream_event() -> None:
    with pytest.raises(ValidationError, match="one entry per upstream event"):
        _trace(upstream_chunks=1, upstream_times_ms=[1.0], event_chunks=[0, 0])


def test_whole_chunk_excerpts_match_the_incremental_decoder() -> None:
    # Chunks that are each valid UTF-8 take a shortcut; a limit of exactly their size forces the incremental decoder.
    euro = "\u20ac".encode()
    for chunks in (
        (b"a",),
        (b"", b"x\xc3\xa9", euro, b"\n\n"),
        (euro + b"y", b"", b"z"),
        (b"x" + euro[:1], euro[1:] + b"y"),  # a split character: no shortcut
        (b"\xff", b"ok"),  # a byte to replace: no shortcut
    ):
        assert _excerpt(chunks) == _excerpt(chunks, limit=sum(len(c) for c in chunks))
    assert _excerpt(()) == ("", [], False)


@given(
    st.lists(st.sampled_from(["a", "\n", "\u00e9", "\u20ac", "\U0001f389"]), max_size=40).map("".join),
    st.lists(st.integers(min_value=0, max_value=160), max_size=30),
    st.sampled_from([b"", b"\xff", b"\xe2\x82"]),
)
def test_small_chunks_split_inside_characters_match_the_incremental_decoder(
    text: str, cuts: list[int], tail: bytes
) -> None:
    # Many small chunks with characters split between them are decoded whole and their offsets counted.
    body = text.encode() + tail
    assume(body)  # a limit of 0 keeps no chunk at all
    points = sorted({min(c, len(body)) for c in cuts} | {0, len(body)})
    chunks = tuple(body[a:b] for a, b in itertools.pairwise(points))
    assert _excerpt(chunks) == _excerpt(chunks, limit=len(body))
