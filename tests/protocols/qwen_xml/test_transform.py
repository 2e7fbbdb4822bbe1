"""The IR event transformers on pure IR streams: text tool calls <-> structured tool calls."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.protocols import common
from harness.protocols.qwen_xml import OWN_LOSSES, RESHAPES, XmlToolCallDecoder, XmlToolCallEncoder, render_call
from harness.protocols.qwen_xml.transform import decode_response, encode_response
from harness.stream import accumulate, validate
from tests import strategies


def run(transformer: XmlToolCallDecoder | XmlToolCallEncoder, events: list[ir.StreamEvent]) -> list[ir.StreamEvent]:
    return [out for event in events for out in transformer.feed(event)]


def text_stream(pieces: list[str], stop: str = "end_turn") -> list[ir.StreamEvent]:
    """A base protocol's decoded stream of one text block, delivered in `pieces`."""
    deltas: list[ir.StreamEvent] = [ir.TextDelta(index=0, text=p) for p in pieces if p]
    return [
        ir.MessageStart(id="chatcmpl-7", model="qwen3"),
        ir.TextStart(index=0),
        *deltas,
        ir.TextEnd(index=0),
        ir.Done(stop_reason=ir.StopReason(kind=stop, raw="stop"), usage=ir.Usage(input_tokens=5, output_tokens=9)),
    ]


def merged(events: list[ir.StreamEvent]) -> list[ir.StreamEvent]:
    """Adjacent text deltas of one block merged (how many deltas carry the text is the split's business)."""
    out: list[ir.StreamEvent] = []
    for event in events:
        prev = out[-1] if out else None
        if isinstance(event, ir.TextDelta) and isinstance(prev, ir.TextDelta) and prev.index == event.index:
            out[-1] = ir.TextDelta(index=event.index, text=prev.text + event.text)
        else:
            out.append(event)
    return out


TEXT = 'I will look.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def test_text_call_becomes_structured_events_and_tool_use() -> None:
    decoder = XmlToolCallDecoder()
    events = run(decoder, text_stream([TEXT]))
    assert validate(events) == []
    assert [e.kind for e in events] == [
        "message_start", "text_start", "text_delta", "text_end",
        "tool_call_start", "tool_call_delta", "tool_call_end", "done",
    ]  # fmt: skip
    start = events[4]
    assert isinstance(start, ir.ToolCallStart)
    assert (start.index, start.name) == (1, "get_weather")
    assert start.id.startswith("call_")
    assert events[5] == ir.ToolCallDelta(index=1, arguments='{"city":"Paris"}')
    done = events[-1]
    assert isinstance(done, ir.Done)
    assert done.stop_reason == ir.StopReason(kind="tool_use", raw="stop")
    assert decoder.calls == 1
    assert decoder.warnings == []
    result = accumulate(events).response
    assert result.content[0] == ir.TextPart(text="I will look.")


def test_max_tokens_stop_is_kept_even_with_calls() -> None:
    events = run(XmlToolCallDecoder(), text_stream([TEXT], stop="max_tokens"))
    assert isinstance(events[-1], ir.Done)
    assert events[-1].stop_reason is not None and events[-1].stop_reason.kind == "max_tokens"


def test_malformed_call_is_text_and_a_recorded_warning() -> None:
    decoder = XmlToolCallDecoder()
    events = run(decoder, text_stream(["a <tool_call>{oops}</tool_call> b"]))
    assert validate(events) == []
    assert accumulate(events).response.content == [ir.TextPart(text="a <tool_call>{oops}</tool_call> b")]
    assert len(decoder.warnings) == 1
    assert isinstance(events[-1], ir.Done) and events[-1].stop_reason is not None
    assert events[-1].stop_reason.kind == "end_turn"


def test_unterminated_call_when_the_stream_errors_is_flushed_as_text() -> None:
    decoder = XmlToolCallDecoder()
    error = ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "cut"))
    events = run(decoder, [ir.MessageStart(), ir.TextStart(index=0), ir.TextDelta(index=0, text="<tool_call>{"), error])
    assert validate(events) == []
    assert accumulate(events).response.content == [ir.TextPart(text="<tool_call>{")]
    assert decoder.warnings == ["unterminated <tool_call> at the end of the text; passed on as text"]


def test_other_blocks_pass_through_renumbered() -> None:
    events: list[ir.StreamEvent] = [
        ir.MessageStart(),
        ir.ThinkingStart(index=0),
        ir.ThinkingDelta(index=0, text="hmm"),
        ir.ThinkingEnd(index=0, signature="sig"),
        ir.TextStart(index=1),
        ir.TextDelta(index=1, text=TEXT),
        ir.TextEnd(index=1),
        ir.ToolCallStart(index=2, id="call_base", name="native"),
        ir.ToolCallDelta(index=2, arguments="{}"),
        ir.ToolCallEnd(index=2),
        ir.Done(stop_reason=ir.StopReason(kind="tool_use")),
    ]
    out = run(XmlToolCallDecoder(), events)
    assert validate(out) == []
    content = accumulate(out).response.content
    assert [p.kind for p in content] == ["thinking", "text", "tool_call", "tool_call"]
    assert content[0] == ir.ThinkingPart(text="hmm", signature="sig")
    assert isinstance(content[3], ir.ToolCallPart) and content[3].id == "call_base"


@st.composite
def texts_with_calls(draw: st.DrawFn) -> tuple[str, list[ir.ToolCallPart]]:
    parts = draw(st.lists(strategies.nonempty_text | strategies.tool_call_parts(), max_size=5))
    text = ""
    for part in parts:
        text += part if isinstance(part, str) else "\n" + render_call(part.name, part.arguments) + "\n"
    return text, [p for p in parts if isinstance(p, ir.ToolCallPart)]


@given(texts_with_calls(), st.lists(st.integers(0, 500), max_size=10))
def test_any_split_of_the_text_gives_the_same_events(case: tuple[str, list[ir.ToolCallPart]], cuts: list[int]) -> None:
    text, calls = case
    points = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    pieces = [text[a:b] for a, b in itertools.pairwise(points)]
    whole = run(XmlToolCallDecoder(), text_stream([text]))
    split = run(XmlToolCallDecoder(), text_stream(pieces))
    assert merged(split) == merged(whole)
    assert validate(split) == []
    found = [p for p in accumulate(split).response.content if isinstance(p, ir.ToolCallPart)]
    assert [(p.name, p.arguments) for p in found] == [(c.name, c.arguments) for c in calls]


def project(response: ir.Response) -> ir.Response:
    """What survives the text form of tool calls, per OWN_LOSSES and RESHAPES."""
    content: list[Any] = []
    for part in response.content:
        if isinstance(part, ir.ToolCallPart):
            assert {"response.ToolCallPart.id", "response.ToolCallPart.arguments_raw"} <= set(OWN_LOSSES)
            part = part.model_copy(update={"id": "", "arguments_raw": common.dump_json(part.arguments).decode()})
        if isinstance(part, ir.TextPart) and content and isinstance(content[-1], ir.TextPart):
            assert "Response.content text around calls" in RESHAPES
            content[-1] = ir.TextPart(text=content[-1].text + part.text)
        else:
            content.append(part)
    stop = response.stop_reason
    return response.model_copy(update={"content": content, "stop_reason": stop and ir.StopReason(kind=stop.kind)})


def _blank_ids(response: ir.Response) -> ir.Response:
    content = [p.model_copy(update={"id": ""}) if isinstance(p, ir.ToolCallPart) else p for p in response.content]
    stop = response.stop_reason
    return response.model_copy(update={"content": content, "stop_reason": stop and ir.StopReason(kind=stop.kind)})


@given(strategies.responses(), st.sampled_from(["hermes", "coder"]))
def test_encoder_then_decoder_returns_the_tool_calls(response: ir.Response, style: str) -> None:
    if style == "coder":
        # Coder bodies carry strings raw: without a schema a string that looks like JSON changes type.
        response = response.model_copy(update={"content": [_stringless(p) for p in response.content]})
    events = run(XmlToolCallEncoder(style=style), strategies.events_for(response))
    assert validate(events) == []
    assert not any(e.kind.startswith("tool_call") for e in events)
    decoded = run(XmlToolCallDecoder(), events)
    assert validate(decoded) == []
    assert _blank_ids(accumulate(decoded).response) == project(response)
    # Whole responses take the same path.
    back, warnings = decode_response(encode_response(response, style=style))
    assert warnings == []
    assert _blank_ids(back) == project(response)


def _stringless(part: Any) -> Any:
    if not isinstance(part, ir.ToolCallPart):
        return part
    args = {k: v for k, v in part.arguments.items() if not isinstance(v, str)}
    return part.model_copy(update={"arguments": args, "arguments_raw": common.dump_json(args).decode()})


def test_stream_and_whole_response_decoding_give_the_same_ids() -> None:
    events = run(XmlToolCallDecoder(), text_stream([TEXT]))
    streamed = accumulate(events).response
    whole, _ = decode_response(ir.Response(id="chatcmpl-7", content=[ir.TextPart(text=TEXT)]))
    assert [p for p in whole.content if p.kind == "tool_call"] == [p for p in streamed.content if p.kind == "tool_call"]


def test_a_held_back_tag_start_stays_in_its_text_part() -> None:
    # The scanner holds back a '<' that may open a tool-call tag and hands it over as a segment of its own; a whole
    # response's text must not come back split in two parts (hypothesis found '0<').
    response = ir.Response(
        id="r", model="m", content=[ir.TextPart(text="0<")], stop_reason=ir.StopReason(kind="end_turn")
    )
    back, warnings = decode_response(response)
    assert warnings == []
    assert back.content == [ir.TextPart(text="0<")]
