"""Two text blocks of one answer arrive as one through a wire with no text block boundaries (Chat Completions'
one content string, Gemini's, Ollama's and Workers AI's runs of text): the backend protocol's loss
(`ProtocolFacts.text_runs_joined`), so both runs are compared with adjacent text blocks joined. A text the proxy
drops or changes still differs."""

from __future__ import annotations

from typing import Any

import pytest

from harness import ir
from harness.diff.normalize import coalesce_deltas, text_runs_joined
from harness.protocols import registry

View = dict[str, Any]


def _view(*blocks: tuple[str, str]) -> View:
    content: list[ir.OutputPart] = []
    events: list[ir.StreamEvent] = [ir.MessageStart(id="m")]
    for i, (kind, text) in enumerate(blocks):
        if kind == "text":
            content.append(ir.TextPart(text=text))
            events += [ir.TextStart(index=i), ir.TextDelta(index=i, text=text), ir.TextEnd(index=i)]
        else:
            content.append(ir.ToolCallPart(id="c", name=text, arguments={}, arguments_raw="{}"))
            events += [ir.ToolCallStart(index=i, id="c", name=text), ir.ToolCallEnd(index=i)]
    events.append(ir.Done(stop_reason=ir.StopReason(kind="end_turn")))
    response = ir.Response(id="m", content=content, stop_reason=ir.StopReason(kind="end_turn"))
    return {"response": ir.to_json(response), "events": ir.events_to_json(events), "error": None, "exception": None}


def test_two_anthropic_text_blocks_through_a_chat_style_backend_compare_as_one() -> None:
    two = _view(("text", "4200 + 42 = 4242"), ("text", "Second block."), ("tool", "now"))
    one = _view(("text", "4200 + 42 = 4242Second block."), ("tool", "now"))
    assert coalesce_deltas(text_runs_joined(two)) == coalesce_deltas(text_runs_joined(one)) == coalesce_deltas(one)


@pytest.mark.parametrize(
    "other",
    [
        _view(("text", "4200 + 42 = 4242"), ("tool", "now")),  # the second block dropped
        _view(("text", "4200 + 42 = 4242Second"), ("tool", "now")),  # changed
        _view(("text", "Second block.4200 + 42 = 4242"), ("tool", "now")),  # reordered
    ],
)
def test_a_dropped_or_changed_text_block_still_differs(other: View) -> None:
    two = _view(("text", "4200 + 42 = 4242"), ("text", "Second block."), ("tool", "now"))
    assert coalesce_deltas(text_runs_joined(two)) != coalesce_deltas(text_runs_joined(other))


def test_text_blocks_apart_stay_apart() -> None:
    apart = _view(("text", "a"), ("tool", "now"), ("text", "b"))
    assert text_runs_joined(apart) == apart


def test_chat_style_wires_declare_they_join_text_runs_and_block_wires_do_not() -> None:
    joined = {name for name in registry.names() if registry.facts(name).text_runs_joined}
    assert {"openai", "groq", "openrouter", "gemini", "vertex-gemini", "ollama", "cloudflare"} <= joined
    assert not joined & {"anthropic", "vertex-anthropic", "bedrock", "responses", "swink"}
