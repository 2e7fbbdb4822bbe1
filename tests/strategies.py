"""Hypothesis strategies for Core IR values, shared by every round-trip property.

Each codec narrows these with its own projection (what it cannot carry, from its `losses` table).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from harness import ir
from harness.protocols.common import is_context_message

# Text without surrogates; includes multibyte characters, newlines and JSON-special characters.
text = st.text(st.characters(exclude_categories=["Cs"]), min_size=0, max_size=40)
nonempty_text = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40)
names = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_]{0,20}", fullmatch=True)
ids = st.from_regex(r"[a-zA-Z0-9_]{4,24}", fullmatch=True)
tokens = st.integers(min_value=0, max_value=1_000_000)

json_scalars = st.none() | st.booleans() | st.integers(-(10**9), 10**9) | text
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(names, json_values, max_size=4)

base64_data = st.binary(min_size=1, max_size=24).map(lambda b: __import__("base64").b64encode(b).decode())
media_types = st.sampled_from(["image/png", "image/jpeg", "image/gif", "image/webp"])

text_parts = nonempty_text.map(lambda t: ir.TextPart(text=t))
image_parts = st.one_of(
    st.builds(ir.Base64Image, media_type=media_types, data=base64_data),
    st.from_regex(r"https://example\.com/[a-z]{1,10}\.png", fullmatch=True).map(lambda u: ir.UrlImage(url=u)),
).map(lambda s: ir.ImagePart(source=s))
file_parts = st.builds(
    ir.FilePart,
    media_type=st.just("application/pdf"),
    data=base64_data,
    filename=st.none() | st.from_regex(r"[a-z]{1,8}(\.pdf)?", fullmatch=True),
)


@st.composite
def tool_call_parts(draw: st.DrawFn) -> ir.ToolCallPart:
    """A tool call whose raw arguments are the compact JSON of its parsed arguments."""
    import json

    args = draw(json_objects)
    return ir.ToolCallPart(
        id=draw(ids), name=draw(names), arguments=args, arguments_raw=json.dumps(args, separators=(",", ":"))
    )


tool_result_parts = st.builds(
    ir.ToolResultPart,
    tool_call_id=ids,
    name=names,
    content=st.lists(text_parts, min_size=1, max_size=2),
    is_error=st.booleans(),
)
thinking_parts = st.builds(ir.ThinkingPart, text=nonempty_text, signature=st.none() | ids)
redacted_parts = st.builds(ir.RedactedThinkingPart, data=ids)

user_messages = st.builds(
    ir.Message, role=st.just("user"), content=st.lists(text_parts | image_parts | file_parts, min_size=1, max_size=3)
)
assistant_messages = st.builds(
    ir.Message,
    role=st.just("assistant"),
    content=st.lists(text_parts | tool_call_parts() | thinking_parts, min_size=1, max_size=3),
)
tool_messages = st.builds(ir.Message, role=st.just("tool"), content=st.lists(tool_result_parts, min_size=1, max_size=2))
messages = st.lists(user_messages | assistant_messages | tool_messages, min_size=1, max_size=4)

tools = st.builds(
    ir.Tool,
    name=names,
    description=st.none() | nonempty_text,
    parameters=st.just({"type": "object", "properties": {"x": {"type": "string"}}}),
)
tool_choices = st.one_of(
    st.just(ir.ToolChoiceAuto()),
    st.just(ir.ToolChoiceNone()),
    st.just(ir.ToolChoiceRequired()),
    names.map(lambda n: ir.ToolChoiceTool(name=n)),
)
response_formats = st.one_of(
    st.just(ir.ResponseFormatText()),
    st.just(ir.ResponseFormatJsonObject()),
    st.builds(
        ir.ResponseFormatJsonSchema,
        name=names,
        schema=st.just({"type": "object", "properties": {"a": {"type": "integer"}}}),
        strict=st.none() | st.booleans(),
    ),
)
unit_floats = st.floats(min_value=0, max_value=1, allow_nan=False).map(lambda f: round(f, 3))

requests = st.builds(
    ir.Request,
    model=names,
    system=st.none() | nonempty_text,
    messages=messages,
    tools=st.lists(tools, max_size=3, unique_by=lambda t: t.name),
    tool_choice=st.none() | tool_choices,
    temperature=st.none() | unit_floats,
    top_p=st.none() | unit_floats,
    max_tokens=st.none() | st.integers(1, 100_000),
    stop=st.lists(nonempty_text, max_size=3),
    response_format=st.none() | response_formats,
    stream=st.booleans(),
    thinking=st.none() | st.builds(ir.ThinkingConfig, enabled=st.just(True), budget_tokens=st.integers(1024, 32000)),
)

usages = st.builds(
    ir.Usage,
    input_tokens=st.none() | tokens,
    output_tokens=st.none() | tokens,
    cache_read_tokens=st.none() | tokens,
    cache_write_tokens=st.none() | tokens,
    reasoning_tokens=st.none() | tokens,
)
stop_kinds = st.sampled_from(["end_turn", "max_tokens", "stop_sequence", "tool_use", "content_filter"])
error_kinds = st.sampled_from(list(ir.ErrorKind))

output_parts = st.lists(text_parts | tool_call_parts() | thinking_parts | redacted_parts, min_size=0, max_size=4)


@st.composite
def responses(draw: st.DrawFn) -> ir.Response:
    """A response whose stop reason agrees with its content (tool_use iff it ends with tool calls)."""
    content = draw(output_parts)
    kind = (
        "tool_use"
        if any(p.kind == "tool_call" for p in content)
        else draw(stop_kinds.filter(lambda k: k != "tool_use"))
    )
    return ir.Response(
        id=draw(ids),
        model=draw(names),
        content=content,
        stop_reason=ir.StopReason(kind=kind),
        usage=draw(usages),
    )


def events_for(response: ir.Response, *, chunk: int = 3) -> list[ir.StreamEvent]:
    """The canonical event stream of a response: start, blocks in order with text split every `chunk`
    characters, done. Used to test encode_stream -> decode_stream."""
    events: list[ir.StreamEvent] = [ir.MessageStart(id=response.id, model=response.model)]
    for i, part in enumerate(response.content):
        if isinstance(part, ir.TextPart):
            events.append(ir.TextStart(index=i))
            events += [ir.TextDelta(index=i, text=part.text[j : j + chunk]) for j in range(0, len(part.text), chunk)]
            events.append(ir.TextEnd(index=i))
        elif isinstance(part, ir.ThinkingPart):
            events.append(ir.ThinkingStart(index=i))
            events += [
                ir.ThinkingDelta(index=i, text=part.text[j : j + chunk]) for j in range(0, len(part.text), chunk)
            ]
            events.append(ir.ThinkingEnd(index=i, signature=part.signature))
        elif isinstance(part, ir.RedactedThinkingPart):
            events.append(ir.RedactedThinking(index=i, data=part.data))
        elif isinstance(part, ir.ToolCallPart):
            events.append(ir.ToolCallStart(index=i, id=part.id, name=part.name, call_type=part.call_type))
            raw = part.arguments_raw
            events += [ir.ToolCallDelta(index=i, arguments=raw[j : j + chunk]) for j in range(0, len(raw), chunk)]
            events.append(ir.ToolCallEnd(index=i))
    events.append(ir.Done(stop_reason=response.stop_reason, usage=response.usage))
    return events


errors = st.builds(
    ir.IRError.of,
    error_kinds,
    # A message that reads as a context overflow ("context window", ...) decodes as one where the wire carries no
    # code for it: that heuristic is what real servers need, and has tests of its own.
    nonempty_text.filter(lambda message: not is_context_message(message)),
    retry_after=st.none() | st.integers(1, 120).map(float),
)
