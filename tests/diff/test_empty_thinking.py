"""A signature-only thinking block whose signature a wire on the way cannot carry says nothing once that loss is
applied: both runs lose it when the reference has it (Gemini's `thoughtSignature` on a functionCall through
Ollama or Chat Completions); one only the proxy's answer has is still compared."""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.diff.normalize import empty_thinking_pair

View = dict[str, Any]


def _view(thinking: ir.ThinkingPart | None) -> View:
    events: list[ir.StreamEvent] = [ir.MessageStart(id="m")]
    content: list[ir.OutputPart] = []
    at = 0
    if thinking is not None:
        content.append(thinking)
        events.append(ir.ThinkingStart(index=0))
        events += [ir.ThinkingDelta(index=0, text=thinking.text)] if thinking.text else []
        events.append(ir.ThinkingEnd(index=0, signature=thinking.signature))
        at = 1
    content.append(ir.ToolCallPart(id="c", name="now", arguments={}, arguments_raw="{}"))
    events += [ir.ToolCallStart(index=at, id="c", name="now"), ir.ToolCallEnd(index=at), ir.Done()]
    response = ir.Response(id="m", content=content)
    return {"response": ir.to_json(response), "events": ir.events_to_json(events), "error": None, "exception": None}


def test_signature_only_thinking_block_lost_with_its_signature_is_no_divergence() -> None:
    unsigned = _view(ir.ThinkingPart(text=""))  # the reference once `ThinkingPart.signature` is stripped
    without = _view(None)
    assert empty_thinking_pair(unsigned, without) == (without, without)


def test_a_signed_or_worded_thinking_block_and_a_proxy_added_empty_one_stay_compared() -> None:
    without = _view(None)
    for kept in (_view(ir.ThinkingPart(text="", signature="c2ln")), _view(ir.ThinkingPart(text="Plan."))):
        assert empty_thinking_pair(kept, without) == (kept, without)
    added = _view(ir.ThinkingPart(text=""))
    assert empty_thinking_pair(without, added) == (without, added)
