"""The faults' implementations: `TranslateHooks` values that reproduce one real bug class each.

Hooks that need per-stream state are built per request (`TranslateHooks(per_request=...)`), so concurrent
requests never share it. Hooks that only matter for one protocol look at the `HookContext` and change nothing
elsewhere, so a fault switched on for every model of a `conformance serve` config stays faithful to its bug.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from harness import ir
from harness.faults.wire_edits import DROP, edit_sse
from harness.proxy import HookContext, TranslateHooks

Events = Sequence[ir.StreamEvent]


def _per_request(build: Callable[[HookContext], TranslateHooks]) -> TranslateHooks:
    return TranslateHooks(per_request=build)


# --- request side --------------------------------------------------------------------------------------------


def _drop_tools_on_stream(request: ir.Request) -> ir.Request:
    # The streaming code path builds its upstream body separately and forgets the tools.
    return request.model_copy(update={"tools": [], "tool_choice": None}) if request.stream else request


def _rename_tool_results(name: str) -> Callable[[ir.Request], ir.Request]:
    def rename(request: ir.Request) -> ir.Request:
        messages = []
        for message in request.messages:
            content = [
                part.model_copy(update={"name": name}) if isinstance(part, ir.ToolResultPart) else part
                for part in message.content
            ]
            messages.append(message.model_copy(update={"content": content}))
        return request.model_copy(update={"messages": messages})

    return rename


def map_request_parts(request: ir.Request, change: Callable[[Any], Any]) -> ir.Request:
    """`request` with `change` applied to every content part of every message."""
    messages = [m.model_copy(update={"content": [change(p) for p in m.content]}) for m in request.messages]
    return request.model_copy(update={"messages": messages})


def without_parts(kind: type[ir.ContentPart]) -> Callable[[ir.Request], ir.Request]:
    """A request change that leaves every content part of `kind` out of every message."""

    def drop(request: ir.Request) -> ir.Request:
        messages = [
            m.model_copy(update={"content": [p for p in m.content if not isinstance(p, kind)]})
            for m in request.messages
        ]
        return request.model_copy(update={"messages": messages})

    return drop


def _file_as_image(part: Any) -> Any:
    if not isinstance(part, ir.FilePart):
        return part
    return ir.ImagePart(source=ir.Base64Image(media_type=part.media_type, data=part.data))


TOOLS_DROPPED_ON_STREAM = TranslateHooks(on_upstream_request=_drop_tools_on_stream)
SYSTEM_DROPPED = TranslateHooks(on_upstream_request=lambda r: r.model_copy(update={"system": None}))
TEMPERATURE_DROPPED = TranslateHooks(on_upstream_request=lambda r: r.model_copy(update={"temperature": None}))
IMAGE_DROPPED = TranslateHooks(on_upstream_request=without_parts(ir.ImagePart))
FILE_SENT_AS_IMAGE = TranslateHooks(on_upstream_request=lambda r: map_request_parts(r, _file_as_image))


def _gemini_function_response_name(context: HookContext) -> TranslateHooks:
    # Only the Gemini encoding path writes functionResponse.name; other upstreams are left alone.
    if context.upstream_protocol != "gemini":
        return TranslateHooks()
    return TranslateHooks(on_upstream_request=_rename_tool_results("function"))


GEMINI_FUNCTION_RESPONSE_NAME = _per_request(_gemini_function_response_name)


# --- response side: events and whole responses -----------------------------------------------------------------


class _SecondCallDropper:
    """Keeps the first tool call of a turn and drops the second (its start, fragments and end)."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def event(self, event: ir.StreamEvent) -> Events:
        if isinstance(event, ir.ToolCallStart):
            self.calls.append(event.index)
        dropped = self.calls[1] if len(self.calls) > 1 else None
        if isinstance(event, ir.ToolCallStart | ir.ToolCallDelta | ir.ToolCallEnd) and event.index == dropped:
            return ()
        return (event,)


def _drop_second_part(response: ir.Response) -> ir.Response:
    calls = [i for i, part in enumerate(response.content) if isinstance(part, ir.ToolCallPart)]
    if len(calls) < 2:
        return response
    return response.model_copy(update={"content": [p for i, p in enumerate(response.content) if i != calls[1]]})


SECOND_PARALLEL_CALL_DROPPED = _per_request(
    lambda _: TranslateHooks(on_upstream_event=_SecondCallDropper().event, on_upstream_response=_drop_second_part)
)


class _WholeArgumentsDropper:
    """Drops the argument fragment that arrives right with its call's name when it is already the whole object
    (Gemini and Ollama deliver whole arguments; OpenAI-compatible servers often send name and arguments in one
    chunk): the converter only forwards fragments that follow a separate name chunk."""

    def __init__(self) -> None:
        self.just_started: int | None = None

    def event(self, event: ir.StreamEvent) -> Events:
        started, self.just_started = self.just_started, None
        if isinstance(event, ir.ToolCallStart):
            self.just_started = event.index
        elif isinstance(event, ir.ToolCallDelta) and event.index == started and _is_whole_json(event.arguments):
            return ()
        return (event,)


def _is_whole_json(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


ARGUMENTS_LOST_WITH_NAME = _per_request(lambda _: TranslateHooks(on_upstream_event=_WholeArgumentsDropper().event))

DUPLICATE_MESSAGE_START = TranslateHooks(on_upstream_event=lambda e: (e, e) if isinstance(e, ir.MessageStart) else (e,))

_AS_TEXT: dict[type[Any], Callable[[Any], ir.StreamEvent]] = {
    ir.ThinkingStart: lambda e: ir.TextStart(index=e.index),
    ir.ThinkingDelta: lambda e: ir.TextDelta(index=e.index, text=e.text),
    ir.ThinkingEnd: lambda e: ir.TextEnd(index=e.index),
}


def _thinking_event_as_text(event: ir.StreamEvent) -> Events:
    convert = _AS_TEXT.get(type(event))
    return (convert(event),) if convert is not None else (event,)


def _thinking_part_as_text(response: ir.Response) -> ir.Response:
    content = [ir.TextPart(text=p.text) if isinstance(p, ir.ThinkingPart) else p for p in response.content]
    return response.model_copy(update={"content": content})


THINKING_AS_TEXT = TranslateHooks(
    on_upstream_event=_thinking_event_as_text, on_upstream_response=_thinking_part_as_text
)


def _length_as_stop(reason: ir.StopReason | None) -> ir.StopReason | None:
    if reason is not None and reason.kind == "max_tokens":
        return ir.StopReason(kind="end_turn", raw="stop")
    return reason


def _length_event(event: ir.StreamEvent) -> Events:
    if isinstance(event, ir.Done):
        return (event.model_copy(update={"stop_reason": _length_as_stop(event.stop_reason)}),)
    return (event,)


STOP_REASON_LENGTH_AS_STOP = TranslateHooks(
    on_upstream_event=_length_event,
    on_upstream_response=lambda r: r.model_copy(update={"stop_reason": _length_as_stop(r.stop_reason)}),
)


class _FragmentSwapper:
    """Holds each tool call's argument fragments and releases them at its end with neighbours swapped, as a
    converter that collects fragments in a dict keyed by something other than their order would."""

    def __init__(self) -> None:
        self.held: dict[int, list[ir.ToolCallDelta]] = {}

    def event(self, event: ir.StreamEvent) -> Events:
        if isinstance(event, ir.ToolCallDelta):
            self.held.setdefault(event.index, []).append(event)
            return ()
        if isinstance(event, ir.ToolCallEnd):
            fragments = self.held.pop(event.index, [])
            swapped = [f for pair in zip(fragments[1::2], fragments[0::2], strict=False) for f in pair]
            if len(fragments) % 2:
                swapped.append(fragments[-1])
            return (*swapped, event)
        return (event,)


TOOL_FRAGMENTS_REORDERED = _per_request(lambda _: TranslateHooks(on_upstream_event=_FragmentSwapper().event))


class _TextBuffer:
    """Holds every text delta of a block and sends the block's text as one delta when the block ends."""

    def __init__(self) -> None:
        self.held: dict[int, str] = {}

    def event(self, event: ir.StreamEvent) -> Events:
        if isinstance(event, ir.TextDelta):
            self.held[event.index] = self.held.get(event.index, "") + event.text
            return ()
        if isinstance(event, ir.TextEnd) and self.held.get(event.index):
            return (ir.TextDelta(index=event.index, text=self.held.pop(event.index)), event)
        return (event,)


TEXT_BUFFERED = _per_request(lambda _: TranslateHooks(on_upstream_event=_TextBuffer().event))

BlockEnd = ir.TextEnd | ir.ThinkingEnd | ir.ToolCallEnd


def _end_of(event: ir.StreamEvent) -> type[BlockEnd] | None:
    if isinstance(event, ir.TextStart):
        return ir.TextEnd
    if isinstance(event, ir.ThinkingStart):
        return ir.ThinkingEnd
    if isinstance(event, ir.ToolCallStart):
        return ir.ToolCallEnd
    return None


class _ErrorSwallower:
    """Turns an error inside the stream into a normal stop, closing the blocks it left open."""

    def __init__(self) -> None:
        self.open: dict[int, type[BlockEnd]] = {}

    def event(self, event: ir.StreamEvent) -> Events:
        end = _end_of(event)
        if end is not None and isinstance(event, ir.TextStart | ir.ThinkingStart | ir.ToolCallStart):
            self.open[event.index] = end
        elif isinstance(event, ir.TextEnd | ir.ThinkingEnd | ir.ToolCallEnd):
            self.open.pop(event.index, None)
        if not isinstance(event, ir.ErrorEvent):
            return (event,)
        closing = [cls(index=index) for index, cls in self.open.items()]
        return (*closing, ir.Done(stop_reason=ir.StopReason(kind="end_turn", raw="stop")))


MIDSTREAM_ERROR_AS_STOP = _per_request(lambda _: TranslateHooks(on_upstream_event=_ErrorSwallower().event))


def _throttled_as_server(error: ir.IRError) -> ir.IRError:
    if error.kind != ir.ErrorKind.THROTTLED:
        return error
    # The catch-all exception handler: status 500, no Retry-After.
    return ir.IRError.of(ir.ErrorKind.SERVER, f"Internal server error: {error.message}", status=500)


RATE_LIMIT_AS_SERVER_ERROR = TranslateHooks(on_error=_throttled_as_server)


def _corrupt_split_characters(chunk: bytes) -> bytes:
    # Each network chunk decoded on its own: a character split across two chunks becomes U+FFFD twice.
    return chunk.decode("utf-8", "replace").encode("utf-8")


MULTIBYTE_SPLIT_CORRUPTED = TranslateHooks(on_upstream_bytes=_corrupt_split_characters)


def _key_echo(context: HookContext) -> TranslateHooks:
    key = context.upstream_key
    if not key:
        return TranslateHooks()

    def echo(error: ir.IRError) -> ir.IRError:
        # The upstream call's headers end up in the exception text the client receives.
        detail = f"{error.message} (request headers: {{'authorization': 'Bearer {key}'}})"
        return error.model_copy(update={"message": detail})

    return TranslateHooks(on_error=echo)


UPSTREAM_KEY_ECHOED = _per_request(_key_echo)


# --- frontend wire: Anthropic and OpenAI byte-level faults -----------------------------------------------------


def _only_for(protocol: str, hooks: Callable[[], TranslateHooks]) -> TranslateHooks:
    return _per_request(lambda c: hooks() if c.frontend_protocol == protocol else TranslateHooks())


def _done_marker() -> bytes:
    return b"data: [DONE]\n\n"


DONE_APPENDED_TO_ANTHROPIC = _only_for("anthropic", lambda: TranslateHooks(on_frontend_end=_done_marker))


def _drop_first_text_block_start() -> TranslateHooks:
    dropped = False

    def edit(name: str, data: Any) -> Any:
        nonlocal dropped
        block = data.get("content_block") if isinstance(data, dict) else None
        if name == "content_block_start" and not dropped and isinstance(block, dict) and block.get("type") == "text":
            dropped = True
            return DROP
        return data

    return TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, edit))


DELTA_WITHOUT_BLOCK_START = _only_for("anthropic", _drop_first_text_block_start)


def _zero_start_usage(name: str, data: Any) -> Any:
    if name == "message_start" and isinstance(data.get("message"), dict):
        data["message"]["usage"] = {"input_tokens": 0, "output_tokens": 0}
    elif name == "message_delta" and isinstance(data.get("usage"), dict):
        # The real figures never follow: message_delta carries output_tokens only.
        data["usage"] = {"output_tokens": data["usage"].get("output_tokens", 0)}
    return data


ZEROED_START_USAGE = _only_for(
    "anthropic", lambda: TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _zero_start_usage))
)


def _zero_start_input(name: str, data: Any) -> Any:
    message = data.get("message") if isinstance(data, dict) else None
    if name == "message_start" and isinstance(message, dict) and isinstance(message.get("usage"), dict):
        # Only the start lies: message_delta still carries the real cumulative counts.
        message["usage"] = {**message["usage"], "input_tokens": 0}
    return data


ZERO_INPUT_AT_MESSAGE_START = _only_for(
    "anthropic", lambda: TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _zero_start_input))
)


def _drop_usage_chunk(name: str, data: Any) -> Any:
    if isinstance(data, dict) and data.get("choices") == [] and "usage" in data:
        return DROP
    return data


USAGE_CHUNK_DROPPED = _only_for(
    "openai", lambda: TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _drop_usage_chunk))
)

__all__ = [
    "ARGUMENTS_LOST_WITH_NAME",
    "DELTA_WITHOUT_BLOCK_START",
    "DONE_APPENDED_TO_ANTHROPIC",
    "DUPLICATE_MESSAGE_START",
    "GEMINI_FUNCTION_RESPONSE_NAME",
    "IMAGE_DROPPED",
    "MIDSTREAM_ERROR_AS_STOP",
    "MULTIBYTE_SPLIT_CORRUPTED",
    "RATE_LIMIT_AS_SERVER_ERROR",
    "SECOND_PARALLEL_CALL_DROPPED",
    "STOP_REASON_LENGTH_AS_STOP",
    "SYSTEM_DROPPED",
    "TEMPERATURE_DROPPED",
    "TEXT_BUFFERED",
    "THINKING_AS_TEXT",
    "TOOLS_DROPPED_ON_STREAM",
    "TOOL_FRAGMENTS_REORDERED",
    "UPSTREAM_KEY_ECHOED",
    "USAGE_CHUNK_DROPPED",
    "ZEROED_START_USAGE",
    "ZERO_INPUT_AT_MESSAGE_START",
]
