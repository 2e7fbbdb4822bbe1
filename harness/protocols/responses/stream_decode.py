"""Incremental Responses SSE stream -> IR events.

Wire facts this follows (the corpus has them all but `error` and `response.failed`):
- every event has `type` and `sequence_number`, which starts at 0 and goes up by exactly one from event to event
  (a gap, a repeat or another start is a `DecodeError`: events were lost or sent twice, or a client resuming
  after event N would skip one); the `event:` name, when given, is the `type`. OpenAI's streams before the field
  existed (before about April 2025) number no event: the first event says which kind of stream this is, and a
  stream that numbers some events and not others is a `DecodeError`;
- `response.created` comes first (an `error` may come instead) and gives the id and model, and its response
  object's fields beyond the codec's the start's extras (`extras`); `in_progress` and `queued` carry nothing
  new; any other type (`output_text.annotation.added`, hosted-tool progress events, a type added after this
  decoder was written) is kept as a `ProviderEvent`, as OpenAI adds event types that clients must skip;
- output items and their parts are checked as `stream_state` says, and map to IR blocks: an `output_text` or
  `refusal` part is a text block, a reasoning item's summary part (or `reasoning_text` content part) a thinking
  block whose signature is the item's `encrypted_content`, a reasoning item with only encrypted content a
  redacted-thinking block, a `function_call` item a tool call (the IR id is its `call_id`), a client-executed
  item a tool call with a `call_type` (`client_calls`: a custom call streams its input, a built-in one comes
  whole with its `output_item.done`, its progress events read past); items of hosted tools have no IR form;
- `response.completed` / `response.incomplete` end the stream with `Done` (the response's `status`, when given,
  must be the one the event names: a cut answer sent as `response.completed` is a `DecodeError`; its `id` is not
  matched, see `stream_state`; stop reason from the status, `incomplete_details.reason` and whether a call was
  output; usage from the response; the
  final response object's fields beyond the codec's as its extras); items the
  stream never opened but the final response lists are decoded from it; `response.failed` and `error` end it
  with an `ErrorEvent` (OpenAI follows an `error` with the `response.failed` of the same failure: that one is
  read as part of it). A stream that stops before any of them ends with a `malformed_stream` error from
  `close()`. Nothing may follow the terminal event but a `[DONE]`, which some gateways add and the SDK skips.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness import ir
from harness.protocols.base import DecodeError, decode_each
from harness.protocols.responses import client_calls, extras
from harness.protocols.responses import items as wire_items
from harness.protocols.responses.errors import error_from_object, stream_error
from harness.protocols.responses.mapping import decode_usage
from harness.protocols.responses.reader import NAME, JSONDict, Reader, load_object
from harness.protocols.responses.response import finished
from harness.protocols.responses.stream_state import Item, Items, Part, end_event, extend, text_event
from harness.wire.sse import SSEDecoder, SSEEvent

_IGNORED = frozenset({"response.in_progress", "response.queued"})
_PROGRESS = frozenset(
    {
        "response.apply_patch_call_operation_diff.delta",
        "response.apply_patch_call_operation_diff.done",
        "response.shell_call_command.added",
        "response.shell_call_command.delta",
        "response.shell_call_command.done",
    }
)
"""Progress events of built-in client calls (see `_progress`)."""


def _streamed(item: Item) -> bool:
    """Whether a call item's IR call streams as it comes (a function call, a custom tool call): a built-in client
    call's fields arrive whole only with its `output_item.done`."""
    return item.kind == "function_call" or item.call_type == client_calls.CUSTOM


class ResponsesStreamDecoder:
    """Feed SSE bytes, get IR events; `close()` at end of input."""

    def __init__(self) -> None:
        self._sse = SSEDecoder()
        self._out: list[ir.StreamEvent] = []
        self._items = Items()
        self._seq: int | None = None
        self._numbered: bool | None = None  # set by the first event: whether this stream numbers its events
        self._id: str | None = None
        self._started = False
        self._ended = False
        self._error_event = False  # the stream was ended by an `error` event

    def feed(self, chunk: bytes) -> list[ir.StreamEvent]:
        """Consume the next bytes; return the IR events they complete."""
        return decode_each(self._sse.feed(chunk), self._one)

    def close(self) -> list[ir.StreamEvent]:
        """End of input; a stream cut before its terminal event ends with a malformed_stream error event."""
        for event in self._sse.close():
            if self._ended:
                break
            try:
                self._event(event)
            except DecodeError as exc:
                if event.terminated:
                    raise
                # An event cut off by EOF is a truncated stream, not undecodable bytes.
                self._fail(ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"stream cut inside an event: {exc}"))
        if not self._ended:
            where = "before response.created" if not self._started else "without response.completed"
            self._fail(ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"responses stream ended {where}"))
        return self._take()

    def _take(self) -> list[ir.StreamEvent]:
        out, self._out = self._out, []
        return out

    def _one(self, event: SSEEvent) -> list[ir.StreamEvent]:
        """The IR events of one SSE event."""
        self._event(event)
        return self._take()

    # --- one SSE event ------------------------------------------------------------------------------------
    def _event(self, event: SSEEvent) -> None:
        if event.data.strip() == "[DONE]":
            return  # not a Responses event; the SDK skips it, and close() judges what came before
        r = Reader(NAME, event.offset)
        if self._ended and self._failed_after_error(r, event):
            return
        if self._ended:
            r.fail("event", f"{event.event} after the end of the stream")
        data = load_object(event.data, offset=event.offset, what="stream event data")
        kind = r.str_(data.get("type"), "type")
        if event.event not in ("message", kind):
            r.fail("event", f"SSE event name {event.event!r} is not the data's type {kind!r}")
        self._sequence(r, r.opt_int(data.get("sequence_number"), f"{kind}.sequence_number"), kind)
        self._items.r = r
        if kind == "error":
            self._fail(stream_error(data))
            self._error_event = True
        elif kind == "response.created":
            self._created(r, data)
        elif not self._started:
            r.fail("type", f"{kind} before response.created")
        elif kind in _HANDLERS:
            _HANDLERS[kind](self, data, kind)
        else:
            self._out.append(ir.ProviderEvent(protocol=NAME, type=kind, data=data))

    def _failed_after_error(self, r: Reader, event: SSEEvent) -> bool:
        """Whether `event` is the `response.failed` OpenAI sends after an `error` event (numbered next)."""
        if not self._error_event or event.event not in ("message", "response.failed"):
            return False
        data = load_object(event.data, offset=event.offset, what="stream event data")
        if data.get("type") != "response.failed":
            return False
        self._sequence(r, r.opt_int(data.get("sequence_number"), "response.failed.sequence_number"), "response.failed")
        self._error_event = False  # only one
        return True

    def _sequence(self, r: Reader, number: int | None, kind: str) -> None:
        if self._numbered is None:
            self._numbered = number is not None
        if not self._numbered:
            if number is not None:
                r.fail(f"{kind}.sequence_number", f"{number} in a stream whose first event had none")
            return
        if number is None:
            r.fail(f"{kind}.sequence_number", f"missing after {self._seq}: expected an integer, got NoneType")
        if self._seq is None and number != 0:
            r.fail("sequence_number", f"the first event is numbered {number}, not 0")
        if self._seq is not None and number != self._seq + 1:
            r.fail("sequence_number", f"{number} after {self._seq}")
        self._seq = number

    def _created(self, r: Reader, data: JSONDict) -> None:
        if self._started:
            r.fail("type", "a second response.created")
        response = r.obj(data.get("response"), "response")
        self._started = True
        self._id = r.opt_str(response.get("id"), "response.id")
        model = r.opt_str(response.get("model"), "response.model")
        found = extras.decode(r, response, "response.output")
        self._out.append(ir.MessageStart(id=self._id, model=model, extras=found))

    # --- items --------------------------------------------------------------------------------------------
    def _item_added(self, data: JSONDict, kind: str) -> None:
        r = self._items.r
        value = data.get("item")
        item = self._items.add(r.int_(data.get("output_index"), f"{kind}.output_index"), value)
        if item is None or item.kind not in ("function_call", "client_call"):
            return
        call = self._call_part(item, r.obj(value, "item"))
        item.call_id, item.name, item.call_type = call.id, call.name, call.call_type
        item.ir_index = self._items.ir_index()
        self._items.calls = True
        if _streamed(item):  # a built-in client call is read whole from its output_item.done
            self._start_call(item, call)

    def _item_done(self, data: JSONDict, kind: str) -> None:
        r = self._items.r
        index = r.int_(data.get("output_index"), f"{kind}.output_index")
        item = self._items.by_index.get(index)
        if item is None or item.done:
            r.fail(f"{kind}.output_index", f"{index} names no open output item")
        wire = r.obj(data.get("item"), "item")
        self._items.named(item, r.opt_str(wire.get("id"), "item.id"), "item.id")  # the item output_index names
        if self._items.kind(wire) != item.kind:
            r.fail("item.type", f"output item {index} was added as a {item.kind} item, done as {wire.get('type')!r}")
        self._finish_item(item, wire)

    def _finish_item(self, item: Item, wire: JSONDict) -> None:
        """Everything an item still owes the IR, from its final form (`output_item.done`, or the final response
        for an item the stream never opened)."""
        r = self._items.r
        item.done = True
        if item.kind == "message":
            if not item.content:  # a server that sent the item whole: its parts come from the final form
                texts, refused = wire_items.message_texts(r, r.opt_lst(wire.get("content"), "item.content"), "item")
                self._items.refused = self._items.refused or refused
                for text in texts:
                    self._whole("text", text.text)
            self._out += [end_event(p) for p in item.content.values() if not p.ended]
        elif item.kind == "reasoning":
            self._finish_reasoning(r, item, wire)
        elif item.kind in ("function_call", "client_call"):
            call = self._call_part(item, wire)
            if (call.id, call.name) != (item.call_id, item.name):
                r.fail("item", f"tool call {item.call_id!r} {item.name!r} came back as {call.id!r} {call.name!r}")
            if not _streamed(item):
                self._start_call(item, call)
            self._arguments_to(item, call.arguments_raw)
            self._out.append(ir.ToolCallEnd(index=item.ir_index))

    def _call_part(self, item: Item, wire: JSONDict) -> ir.ToolCallPart:
        """The IR call of a `function_call` or client-executed item."""
        r = self._items.r
        if item.kind == "function_call":
            return wire_items.function_call(r, wire, "item")
        return client_calls.decode(r, wire, "item")

    def _start_call(self, item: Item, call: ir.ToolCallPart) -> None:
        self._out.append(ir.ToolCallStart(index=item.ir_index, id=call.id, name=call.name, call_type=call.call_type))
        self._arguments_to(item, call.arguments_raw)

    def _finish_reasoning(self, r: Reader, item: Item, wire: JSONDict) -> None:
        parts, _ = wire_items.reasoning_parts(r, wire, "item")
        signature = r.opt_str(wire.get("encrypted_content"), "item.encrypted_content") or None
        open_parts = [p for p in (*item.summary.values(), *item.content.values()) if not p.ended]
        if item.held is None and not open_parts and not item.summary and not item.content:
            for part in parts:  # the item came whole: its blocks come from the final form
                if isinstance(part, ir.RedactedThinkingPart):
                    self._out.append(ir.RedactedThinking(index=self._items.ir_index(), data=part.data))
                elif isinstance(part, ir.ThinkingPart):
                    self._whole("thinking", part.text, part.signature)
            return
        ending = [p for p in (item.held, *open_parts) if p is not None]
        for i, held in enumerate(ending):
            held.ended = True
            self._out.append(end_event(held, signature if i == len(ending) - 1 else None))
        item.held = None

    def _whole(self, kind: str, text: str, signature: str | None = None) -> None:
        part = Part(kind, self._items.ir_index())
        self._out.append(ir.TextStart(index=part.ir_index) if kind == "text" else ir.ThinkingStart(index=part.ir_index))
        if text:
            self._out.append(text_event(kind, part.ir_index, text))
        self._out.append(end_event(part, signature))

    # --- parts --------------------------------------------------------------------------------------------
    def _content_part_added(self, data: JSONDict, kind: str) -> None:
        item = self._items.open(data, kind)
        if item.kind == "other":
            return
        r = self._items.r
        part_type = r.str_(r.obj(data.get("part"), "part").get("type"), "part.type")
        expected = ("output_text", "refusal") if item.kind == "message" else ("reasoning_text",)
        if part_type not in expected:
            r.fail("part.type", f"{part_type!r} in a {item.kind} item")
        index = r.int_(data.get("content_index"), f"{kind}.content_index")
        if item.kind == "message":
            self._items.refused = self._items.refused or part_type == "refusal"
            part = self._items.new_part(item, item.content, index, "text", dense=True)
            self._out.append(ir.TextStart(index=part.ir_index, refusal=part_type == "refusal"))
        else:
            self._thinking_start(item, item.content, index, dense=True)

    def _thinking_start(self, item: Item, parts: dict[int, Part], index: int, *, dense: bool) -> None:
        if item.held is not None:  # a later part: the held block ends without a signature
            self._out.append(end_event(item.held))
            item.held = None
        part = self._items.new_part(item, parts, index, "thinking", dense=dense)
        self._out.append(ir.ThinkingStart(index=part.ir_index))

    def _summary_part_added(self, data: JSONDict, kind: str) -> None:
        item = self._reasoning(data, kind)
        index = self._items.r.int_(data.get("summary_index"), f"{kind}.summary_index")
        self._thinking_start(item, item.summary, index, dense=False)

    def _reasoning(self, data: JSONDict, kind: str) -> Item:
        item = self._items.open(data, kind)
        if item.kind != "reasoning":
            self._items.r.fail(kind, f"on a {item.kind} item")
        return item

    def _delta(self, data: JSONDict, kind: str) -> None:
        item = self._items.open(data, kind)
        if item.kind == "other":
            return
        part = self._named_part(item, data, kind)
        text = self._items.r.str_(data.get("delta"), f"{kind}.delta")
        part.text += text
        if text:
            self._out.append(text_event(part.kind, part.ir_index, text))

    def _named_part(self, item: Item, data: JSONDict, kind: str) -> Part:
        """The open part an event names: by `summary_index` in a reasoning item's summary, else by
        `content_index` in its item's content; text events go with message items, reasoning events with
        reasoning items."""
        if kind.startswith("response.reasoning_summary"):
            wanted, parts, key = "reasoning", item.summary, "summary_index"
        elif kind.startswith("response.reasoning_text"):
            wanted, parts, key = "reasoning", item.content, "content_index"
        elif kind.startswith(("response.output_text", "response.refusal")):
            wanted, parts, key = "message", item.content, "content_index"
        else:  # content_part.done, of a message or a reasoning item
            wanted, parts, key = item.kind, item.content, "content_index"
        if item.kind != wanted:
            self._items.r.fail(kind, f"on a {item.kind} item")
        return self._items.part(parts, data.get(key), f"{kind}.{key}")

    def _extend(self, part: Part, full: Any, what: str) -> None:
        text = self._items.r.str_(full, what)
        extend(self._items.r, part, text, what, self._emitter(part))

    def _emitter(self, part: Part) -> Callable[[str], None]:
        return lambda rest: self._out.append(text_event(part.kind, part.ir_index, rest))

    def _text_done(self, data: JSONDict, kind: str) -> None:
        item = self._items.open(data, kind)
        if item.kind == "other":
            return
        part = self._named_part(item, data, kind)
        key = "refusal" if kind == "response.refusal.done" else "text"
        self._extend(part, data.get(key), f"{kind}.{key}")

    def _part_done(self, data: JSONDict, kind: str) -> None:
        item = self._items.open(data, kind)
        if item.kind == "other":
            return
        part = self._named_part(item, data, kind)
        wire = self._items.r.obj(data.get("part"), "part")
        self._extend(part, wire.get("refusal") if wire.get("type") == "refusal" else wire.get("text"), f"{kind}.part")
        part.ended = True
        if part.kind == "text":
            self._out.append(end_event(part))
        else:
            item.held = part  # its end waits for the next part or the item's encrypted content

    def _arguments_delta(self, data: JSONDict, kind: str) -> None:
        item = self._call(data, kind)
        self._arguments_to(item, item.arguments + self._items.r.str_(data.get("delta"), f"{kind}.delta"))

    def _arguments_done(self, data: JSONDict, kind: str) -> None:
        item = self._call(data, kind)
        self._arguments_to(item, self._items.r.str_(data.get("arguments"), f"{kind}.arguments"))

    def _call(self, data: JSONDict, kind: str) -> Item:
        item = self._items.open(data, kind)
        wanted = "client_call" if kind.startswith("response.custom_tool_call") else "function_call"
        if item.kind != wanted or not _streamed(item):
            self._items.r.fail(kind, f"on a {item.kind} item")
        return item

    def _custom_input(self, data: JSONDict, kind: str) -> None:
        """A custom tool call's input `.delta` or `.done`; a hosted tool's (xAI's server-side search, see
        `client_calls`) is kept as it came."""
        if self._items.open(data, kind).kind == "other":
            self._out.append(ir.ProviderEvent(protocol=NAME, type=kind, data=data))
            return
        item, r = self._call(data, kind), self._items.r
        if kind.endswith(".delta"):
            self._arguments_to(item, item.arguments + r.str_(data.get("delta"), f"{kind}.delta"))
        else:
            self._arguments_to(item, r.str_(data.get("input"), f"{kind}.input"))

    def _progress(self, data: JSONDict, kind: str) -> None:
        """A built-in client call's progress (its command or patch as it is written, which its
        `output_item.done` carries whole); the same events of a hosted tool's item are kept as they came."""
        index = data.get("output_index")
        item = self._items.by_index.get(index) if isinstance(index, int) else None
        if item is None or item.kind != "client_call" or item.done:
            self._out.append(ir.ProviderEvent(protocol=NAME, type=kind, data=data))

    def _arguments_to(self, item: Item, full: str) -> None:
        if not full.startswith(item.arguments):
            self._items.r.fail("arguments", f"the arguments of {item.call_id!r} are not those of its deltas")
        rest, item.arguments = full[len(item.arguments) :], full
        if rest:
            self._out.append(ir.delta("tool_call", item.ir_index, rest))

    def _skip(self, data: JSONDict, kind: str) -> None:
        """A lifecycle event that carries nothing new."""

    # --- the end ------------------------------------------------------------------------------------------
    def _terminal(self, data: JSONDict, kind: str) -> None:
        r = self._items.r
        response = r.obj(data.get("response"), "response")
        r.opt_str(response.get("id"), "response.id")  # not matched: one stream is one response (stream_state)
        output = r.opt_lst(response.get("output"), "response.output")
        for index, value in enumerate(output):
            if index > self._items.last_output:  # never streamed: decoded from the final response
                self._item_added({"output_index": index, "item": value}, "response.output")
                item = self._items.by_index.get(index)
                if item is not None:
                    self._finish_item(item, r.obj(value, "item"))
        self._close_items()
        if kind == "response.failed":
            error = r.opt_obj(response.get("error"), "response.error") or {"message": "response failed"}
            self._fail(error_from_object(error, None))
            return
        said = kind.removeprefix("response.")
        if response.get("status") not in (None, said):
            r.fail("response.status", f"{kind} carries a response whose status is {response.get('status')!r}")
        status = {**response, "status": said}
        stop = finished(r, status, calls=self._items.calls, refused=self._items.refused)
        usage = decode_usage(r, response.get("usage"), "response.usage")
        self._out.append(ir.Done(stop_reason=stop, usage=usage, extras=extras.decode(r, response, "response.output")))
        self._ended = True

    def _close_items(self) -> None:
        """End what a finished or failed stream left open (a grammar-valid IR stream closes every block)."""
        for item in self._items.by_index.values():
            if item.done or item.kind == "other":
                continue
            if item.kind in ("function_call", "client_call"):
                if _streamed(item):  # a built-in client call never started: nothing to end
                    self._out.append(ir.ToolCallEnd(index=item.ir_index))
            else:
                held = [item.held] if item.held is not None else []
                parts = [p for p in (*item.summary.values(), *item.content.values()) if not p.ended]
                self._out += [end_event(p) for p in (*held, *parts)]
            item.done = True

    def _fail(self, error: ir.IRError) -> None:
        if not self._started:
            self._out.append(ir.MessageStart())  # the IR wants a start first
            self._started = True
        self._close_items()
        self._out.append(ir.ErrorEvent(error=error))
        self._ended = True


_Handler = Callable[[ResponsesStreamDecoder, JSONDict, str], None]
_HANDLERS: dict[str, _Handler] = {
    "response.output_item.added": ResponsesStreamDecoder._item_added,
    "response.output_item.done": ResponsesStreamDecoder._item_done,
    "response.content_part.added": ResponsesStreamDecoder._content_part_added,
    "response.content_part.done": ResponsesStreamDecoder._part_done,
    "response.output_text.delta": ResponsesStreamDecoder._delta,
    "response.output_text.done": ResponsesStreamDecoder._text_done,
    "response.refusal.delta": ResponsesStreamDecoder._delta,
    "response.refusal.done": ResponsesStreamDecoder._text_done,
    "response.reasoning_summary_part.added": ResponsesStreamDecoder._summary_part_added,
    "response.reasoning_summary_part.done": ResponsesStreamDecoder._part_done,
    "response.reasoning_summary_text.delta": ResponsesStreamDecoder._delta,
    "response.reasoning_summary_text.done": ResponsesStreamDecoder._text_done,
    "response.reasoning_text.delta": ResponsesStreamDecoder._delta,
    "response.reasoning_text.done": ResponsesStreamDecoder._text_done,
    "response.function_call_arguments.delta": ResponsesStreamDecoder._arguments_delta,
    "response.function_call_arguments.done": ResponsesStreamDecoder._arguments_done,
    "response.custom_tool_call_input.delta": ResponsesStreamDecoder._custom_input,
    "response.custom_tool_call_input.done": ResponsesStreamDecoder._custom_input,
    **dict.fromkeys(_PROGRESS, ResponsesStreamDecoder._progress),
    "response.completed": ResponsesStreamDecoder._terminal,
    "response.incomplete": ResponsesStreamDecoder._terminal,
    "response.failed": ResponsesStreamDecoder._terminal,
    **dict.fromkeys(_IGNORED, ResponsesStreamDecoder._skip),
}
