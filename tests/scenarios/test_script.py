"""Scripted replies as IR: complete streams are grammar-valid, cuts happen where the scenario says."""

from __future__ import annotations

import pytest

from harness import ir
from harness.scenarios import Chunking, ReplyOk, Scenario, load_scenarios, scripted_events, scripted_response
from harness.stream import accumulate, validate
from tests.conftest import REPO


def _ok_scenarios() -> list[Scenario]:
    return [s for s in load_scenarios(REPO / "scenarios") if isinstance(s.reply, ReplyOk)]


def _reply(**kwargs: object) -> ReplyOk:
    return ReplyOk.model_validate({"content": [{"kind": "text", "text": "abcdefgh"}], **kwargs})


@pytest.mark.parametrize("scenario", _ok_scenarios(), ids=lambda s: s.id)
def test_scripted_stream_is_valid_and_accumulates_to_the_scripted_response(scenario: Scenario) -> None:
    reply = scenario.reply
    assert isinstance(reply, ReplyOk)
    events = scripted_events(reply, scenario.chunking)
    if reply.truncate_after is not None:
        assert events[-1].kind not in ir.TERMINAL_KINDS
        return
    assert validate(events) == []
    if reply.midstream_error is None:
        result = accumulate(events)
        assert result.response.content == scripted_response(reply).content
        assert result.response.stop_reason == reply.stop_reason


def test_long_output_has_more_than_500_deltas() -> None:
    scenario = next(s for s in _ok_scenarios() if s.id == "long-output")
    assert isinstance(scenario.reply, ReplyOk)
    deltas = [e for e in scripted_events(scenario.reply, scenario.chunking) if isinstance(e, ir.TextDelta)]
    assert len(deltas) == 546
    assert deltas[0].text == "1 " and deltas[-1].text == "0"


def test_unicode_one_code_point_per_delta() -> None:
    scenario = next(s for s in _ok_scenarios() if s.id == "unicode-multibyte")
    assert isinstance(scenario.reply, ReplyOk)
    deltas = [e.text for e in scripted_events(scenario.reply, scenario.chunking) if isinstance(e, ir.TextDelta)]
    assert "".join(deltas) == scenario.expect.text_equals
    assert all(len(d) == 1 for d in deltas)
    assert deltas[13:16] == ["👩", "\u200d", "💻"]


def test_midstream_error_closes_the_open_block_before_the_error() -> None:
    error = {"kind": "overloaded", "message": "Overloaded"}
    reply = _reply(midstream_error={"after_events": 3, "error": error})
    events = scripted_events(reply, Chunking(text_chunk_size=3))
    assert events == [
        ir.MessageStart(),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="abc"),
        ir.TextEnd(index=0),
        ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded")),
    ]


def test_truncation_is_a_bare_prefix() -> None:
    events = scripted_events(_reply(truncate_after=4), Chunking(text_chunk_size=3))
    assert events == [
        ir.MessageStart(),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="abc"),
        ir.TextDelta(index=0, text="def"),
    ]


def test_tool_arguments_are_cut_by_their_own_chunk_size() -> None:
    reply = ReplyOk.model_validate(
        {"content": [{"kind": "tool_call", "id": "c1", "name": "f", "arguments": {"a": 1}}], "id": "r1"}
    )
    events = scripted_events(reply, Chunking(arguments_chunk_size=3), model="m")
    assert events[0] == ir.MessageStart(id="r1", model="m")
    assert [e.arguments for e in events if isinstance(e, ir.ToolCallDelta)] == ['{"a', '":1', "}"]


def test_thinking_signature_rides_on_the_end_event() -> None:
    reply = ReplyOk.model_validate({"content": [{"kind": "thinking", "text": "hmm", "signature": "sig"}]})
    events = scripted_events(reply)
    assert events[1:4] == [
        ir.ThinkingStart(index=0),
        ir.ThinkingDelta(index=0, text="hmm"),
        ir.ThinkingEnd(index=0, signature="sig"),
    ]
