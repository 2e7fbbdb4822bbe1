"""Incremental IR events -> a Responses SSE stream, in the API's own event order.

`response.created` and `response.in_progress` open the stream. Each output item opens with
`response.output_item.added` and closes with `response.output_item.done` carrying the whole item; every event
in between names its item by `output_index` and `item_id`:
- text: `response.content_part.added`, `response.output_text.delta`*, `response.output_text.done`,
  `response.content_part.done` (by `content_index` in its message item); a refusal block (`TextStart.refusal`)
  the same with a `refusal` part and `response.refusal.delta` / `.done`;
- thinking: `response.reasoning_summary_part.added`, `response.reasoning_summary_text.delta`*,
  `response.reasoning_summary_text.done`, `response.reasoning_summary_part.done` (by `summary_index`); the
  signature is the item's `encrypted_content`, on `output_item.done` only;
- a tool call: its own `function_call` item, `response.function_call_arguments.delta`*, then `.done`; a custom
  tool call (`call_type` `custom`) its `custom_tool_call` item, `response.custom_tool_call_input.delta`*, then
  `.done`; a built-in client call (`local_shell`, `shell`, `apply_patch`) its item, added whole when the call ends
  (its fields are JSON, which has no partial form: see `client_calls`).
Message and reasoning items close lazily: the next text block joins an open message item, the next thinking block
an open reasoning item whose last part had no signature (the grouping of `items`). `Done` closes what is open and
ends with `response.completed` or `response.incomplete` (token limit, content filter) carrying the whole response;
an `ErrorEvent` becomes one `error` event (see `errors`). `sequence_number` counts every event from 0; there is
no `[DONE]`. Mid-stream `UsageEvent`s and the start's usage are merged into the final response's usage.

Like the API, every event's keys but `type` are sorted, and each text or argument delta carries `obfuscation`
(padding that hides the delta's length: up to 16 characters with it; none when the request said
`stream_options.include_obfuscation: false`). The Responses extras of `MessageStart` go into every response
object and their per-item `output` entries into the items as they are added; the final response object takes
those of `Done` too (see `extras`). A Responses `ProviderEvent` is written back as it came (with this stream's
`sequence_number`); another protocol's is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness import ir
from harness.protocols.common import JsonTemplate, dump_text
from harness.protocols.reference import token
from harness.protocols.responses import client_calls, extras, ids, items
from harness.protocols.responses.errors import stream_error_event
from harness.protocols.responses.mapping import encode_usage, status_of
from harness.protocols.responses.reader import NAME, JSONDict
from harness.protocols.responses.response import response_object
from harness.wire.sse import encode_sse

_PREFIX = {"message": ids.MESSAGE, "reasoning": ids.REASONING, "function_call": ids.FUNCTION_CALL}


@dataclass
class _Item:
    """An output item being streamed."""

    kind: str
    output_index: int
    id: str
    texts: list[str] = field(default_factory=list)
    """Text of each content (or summary) part; a function call's arguments as its one entry."""
    open_parts: set[int] = field(default_factory=set)
    refusals: set[int] = field(default_factory=set)
    """Content parts that are refusal parts (`TextStart.refusal`)."""
    continuable: bool = True
    encrypted: str | None = None
    call: ir.ToolCallStart | None = None
    held: bool = False
    """A built-in client call, whose `output_item.added` waits for its end."""
    templates: dict[int, tuple[JsonTemplate, str] | None] = field(default_factory=dict)
    """Per part, the template of its delta events and their SSE event name (`_delta`); None: no template."""


class ResponsesStreamEncoder:
    """Feed IR events one at a time, get the SSE bytes to send now."""

    def __init__(self, request: ir.Request | None = None) -> None:
        self.request = request
        options = (request.provider_fields.get(NAME, {}) if request is not None else {}).get("stream_options")
        self._obfuscate = not (isinstance(options, dict) and options.get("include_obfuscation") is False)
        self._extras: ir.ProviderExtras | None = None
        self._seq = 0
        self._id = ids.PLACEHOLDER_RESPONSE_ID
        self._model: str | None = None
        self._held: ir.MessageStart | None = None
        self._usage: ir.Usage | None = None
        self._output: list[JSONDict | None] = []  # done items by output index (None while open)
        self._open: dict[int, _Item] = {}
        self._blocks: dict[int, tuple[_Item, int]] = {}  # IR index -> (item, part index)
        self._current: _Item | None = None  # the message or reasoning item the next block may join

    def encode(self, event: ir.StreamEvent) -> bytes:
        """Bytes for one IR event (possibly empty)."""
        if isinstance(event, ir.ProviderEvent) and event.protocol != NAME:
            return b""  # another provider's event has no meaning on this wire
        if isinstance(event, ir.MessageStart) and event == ir.MessageStart():
            # What a decoder synthesizes for a stream that failed before its own start: sent only if more follows.
            self._held = event
            return b""
        out = b""
        if self._held is not None and not isinstance(event, ir.ErrorEvent):
            out += self._start(self._held)
        self._held = None
        return out + self._encode(event)

    def close(self) -> bytes:
        """Nothing follows the terminal event (a held start is sent if nothing came after it)."""
        held, self._held = self._held, None
        return self._start(held) if held is not None else b""

    def _event(self, data: JSONDict) -> bytes:
        number, padding = self._stamp(data.get("delta"))
        return encode_sse(dump_text(self._numbered(data, number, padding)), event=data["type"])

    def _stamp(self, delta: Any) -> tuple[int, str | None]:
        """The next event's `sequence_number`, and its `obfuscation` padding when it is a delta being obfuscated."""
        number = self._seq
        self._seq += 1
        if not self._obfuscate or not isinstance(delta, str):
            return number, None
        return number, obfuscation(delta, f"{self._id}/{self._seq}")

    def _numbered(self, data: JSONDict, sequence_number: Any, padding: Any) -> JSONDict:
        """An event's data with its `sequence_number` and `obfuscation` (when obfuscating a delta), in the API's
        key order."""
        data["sequence_number"] = sequence_number
        if padding is not None:
            data["obfuscation"] = padding
        return extras.api_order(data, ("type",))

    def _delta(self, item: _Item, part: int, data: Callable[[str], JSONDict], delta: str) -> bytes:
        """`_event(data(delta))` for a delta of `item`'s part `part`, written from the part's template
        (`common.JsonTemplate`, its holes the delta, the sequence number and the padding): the data of a part's
        deltas differ only there, and building, ordering and encoding it all again was most of a delta's cost."""
        if part not in item.templates:
            obfuscated = self._obfuscate
            build = lambda d, n, p: self._numbered(data(d), n, p if obfuscated else None)  # noqa: E731
            template = JsonTemplate.of(build, 3)
            item.templates[part] = None if template is None else (template, data("")["type"])
        found = item.templates[part]
        if found is None:
            return self._event(data(delta))
        template, event = found
        return encode_sse(template.fill(delta, *self._stamp(delta)), event=event)

    def _provider_event(self, event: ir.ProviderEvent) -> bytes:
        if not isinstance(event.data, dict):
            return encode_sse(str(event.data), event=event.type)
        data = {**event.data, "type": event.data.get("type", event.type)}
        data.pop("obfuscation", None)  # written anew with the delta, if it has one
        return self._event(data)

    def _encode(self, event: ir.StreamEvent) -> bytes:
        match event:
            case ir.MessageStart():
                return self._start(event)
            case ir.TextStart():
                return self._part_start(event.index, "message", refusal=event.refusal)
            case ir.ThinkingStart():
                return self._part_start(event.index, "reasoning")
            case ir.TextDelta() | ir.ThinkingDelta():
                return self._text_delta(event.index, event.text)
            case ir.TextEnd():
                return self._part_end(event.index, None)
            case ir.ThinkingEnd():
                return self._part_end(event.index, event.signature)
            case ir.RedactedThinking():
                out, item = self._new_item("reasoning")
                item.encrypted = event.data
                return out + self._close(item)
            case ir.ToolCallStart():
                out, item = self._new_item("function_call", call=event)
                self._blocks[event.index] = (item, 0)
                return out
            case ir.ToolCallDelta():
                return self._arguments(event.index, event.arguments)
            case ir.ToolCallEnd():
                item, _ = self._block(event.index)
                return self._arguments_done(item) + self._close(item)
            case ir.UsageEvent():
                self._merge(event.usage)
                return b""
            case ir.ProviderEvent():
                return self._provider_event(event)
            case ir.Done():
                return self._done(event)
            case ir.ErrorEvent():
                return self._event(stream_error_event(event.error))
        raise TypeError(f"not an IR stream event: {event!r}")

    # --- the response ---------------------------------------------------------------------------------
    def _start(self, event: ir.MessageStart) -> bytes:
        self._id = ids.response_id(event.id)
        self._model = event.model
        self._extras = event.extras
        if event.usage is not None:
            self._merge(event.usage)
        out = b""
        for kind in ("response.created", "response.in_progress"):
            response = response_object(self._id, self._model, status="in_progress", output=[], usage=None,
                                       request=self.request, extras=self._extras)  # fmt: skip
            out += self._event({"type": kind, "response": response})
        return out

    def _merge(self, usage: ir.Usage) -> None:
        self._usage = usage if self._usage is None else self._usage.merged(usage)

    def _done(self, event: ir.Done) -> bytes:
        status, reason = status_of(event.stop_reason)
        item_status = "incomplete" if status == "incomplete" else "completed"
        out = b""
        # A grammar-valid stream has ended every block already; end any left so clients stay consistent.
        for item in sorted(self._open.values(), key=lambda i: i.output_index):
            if item.kind == "function_call":
                out += self._arguments_done(item)
            for part in sorted(item.open_parts):
                out += self._part_done(item, part)
            out += self._close(item, item_status)
        if event.usage is not None:
            self._merge(event.usage)
        output = [i for i in self._output if i is not None]
        usage = encode_usage(self._usage) if self._usage is not None else None
        final = ir.merge_extras(self._extras, event.extras)
        response = response_object(self._id, self._model, status=status, reason=reason, output=output,
                                   usage=usage, request=self.request, extras=final)  # fmt: skip
        return out + self._event({"type": f"response.{status}", "response": response})

    # --- items ----------------------------------------------------------------------------------------
    def _new_item(self, kind: str, call: ir.ToolCallStart | None = None) -> tuple[bytes, _Item]:
        """Close the item a block could have joined (once its parts are done) and open a new one."""
        out = b""
        current, self._current = self._current, None
        if current is not None:
            current.continuable = False
            if not current.open_parts:
                out += self._close(current)
        at = len(self._output)
        call_type = call.call_type if call is not None else None
        prefix = client_calls.PREFIX.get(call_type or "", _PREFIX[kind])
        item = _Item(kind, at, items.item_id(prefix, self._id, at), call=call)
        if call is not None:
            item.texts, item.open_parts, item.continuable = [""], {0}, False
            item.held = call_type not in (None, client_calls.CUSTOM)
        self._output.append(None)
        self._open[at] = item
        return (out if item.held else out + self._added(item)), item

    def _added(self, item: _Item) -> bytes:
        added = {"type": "response.output_item.added", "item": self._item(item, "in_progress")}
        return self._event({**added, "output_index": item.output_index})

    def _close(self, item: _Item, status: str = "completed") -> bytes:
        self._open.pop(item.output_index, None)
        if self._current is item:
            self._current = None
        done = self._item(item, status)
        self._output[item.output_index] = done
        return self._event({"type": "response.output_item.done", "item": done, "output_index": item.output_index})

    def _item(self, item: _Item, status: str) -> JSONDict:
        finished = status != "in_progress"
        per_item = (self._extras or {}).get(NAME, {}).get("output")
        if item.kind == "message":
            wire = items.message_item(item.id, item.texts if finished else [], status, item.refusals)
        elif item.kind == "reasoning":
            wire = items.reasoning_item(item.id, item.texts if finished else [], item.encrypted if finished else None)
        else:
            assert item.call is not None
            arguments = item.texts[0] if finished or item.held else ""
            call = ir.ToolCallPart(id=item.call.id, name=item.call.name, arguments_raw=arguments,
                                   call_type=item.call.call_type)  # fmt: skip
            if call.call_type is not None:
                wire = client_calls.item(item.id, call, status)
            else:
                wire = items.function_call_item(item.id, call, status)
        return extras.item_with(wire, per_item, item.output_index)

    def _where(self, item: _Item) -> JSONDict:
        return {"item_id": item.id, "output_index": item.output_index}

    def _block(self, index: int) -> tuple[_Item, int]:
        if index not in self._blocks:
            raise ValueError(f"IR event for content index {index}, which was never started")
        return self._blocks[index]

    # --- parts ----------------------------------------------------------------------------------------
    def _part_start(self, index: int, kind: str, *, refusal: bool = False) -> bytes:
        out = b""
        item = self._current
        if item is None or item.kind != kind or not item.continuable:
            out, item = self._new_item(kind)
            self._current = item
        part = len(item.texts)
        item.texts.append("")
        item.open_parts.add(part)
        self._blocks[index] = (item, part)
        if kind == "message" and refusal:
            item.refusals.add(part)
            data = {"type": "response.content_part.added", "content_index": part, "part": items.refusal("")}
        elif kind == "message":
            data = {"type": "response.content_part.added", "content_index": part, "part": items.output_text("")}
        else:
            data = {"type": "response.reasoning_summary_part.added", "summary_index": part,
                    "part": items.summary_text("")}  # fmt: skip
        return out + self._event({**data, **self._where(item)})

    def _text_delta(self, index: int, text: str) -> bytes:
        if not text:
            return b""
        item, part = self._block(index)
        item.texts[part] += text

        def data(delta: str) -> JSONDict:
            if part in item.refusals:
                head = {"type": "response.refusal.delta", "content_index": part, "delta": delta}
            elif item.kind == "message":
                head = {"type": "response.output_text.delta", "content_index": part, "delta": delta, "logprobs": []}
            else:
                head = {"type": "response.reasoning_summary_text.delta", "summary_index": part, "delta": delta}
            return {**head, **self._where(item)}

        return self._delta(item, part, data, text)

    def _part_end(self, index: int, signature: str | None) -> bytes:
        item, part = self._block(index)
        out = self._part_done(item, part)
        if signature:
            item.encrypted, item.continuable = signature, False
            if self._current is item:
                self._current = None
        if not item.continuable and not item.open_parts:
            out += self._close(item)
        return out

    def _part_done(self, item: _Item, part: int) -> bytes:
        item.open_parts.discard(part)
        text, where = item.texts[part], self._where(item)
        if part in item.refusals:
            done = {"type": "response.refusal.done", "content_index": part, "refusal": text}
            closed = {"type": "response.content_part.done", "content_index": part, "part": items.refusal(text)}
        elif item.kind == "message":
            done = {"type": "response.output_text.done", "content_index": part, "text": text, "logprobs": []}
            closed = {"type": "response.content_part.done", "content_index": part, "part": items.output_text(text)}
        else:
            done = {"type": "response.reasoning_summary_text.done", "summary_index": part, "text": text}
            closed = {"type": "response.reasoning_summary_part.done", "summary_index": part,
                      "part": items.summary_text(text)}  # fmt: skip
        return self._event({**done, **where}) + self._event({**closed, **where})

    def _arguments(self, index: int, fragment: str) -> bytes:
        if not fragment:
            return b""
        item, _ = self._block(index)
        item.texts[0] += fragment
        if item.held:
            return b""

        def data(delta: str) -> JSONDict:
            if item.call is not None and item.call.call_type == client_calls.CUSTOM:
                head = {"type": "response.custom_tool_call_input.delta", "delta": delta}
            else:
                head = {"type": "response.function_call_arguments.delta", "delta": delta}
            return {**head, **self._where(item)}

        return self._delta(item, 0, data, fragment)

    def _arguments_done(self, item: _Item) -> bytes:
        item.open_parts.clear()
        if item.held:  # a built-in client call: added whole, then done
            out, item.held = self._added(item), False
            return out
        if item.call is not None and item.call.call_type == client_calls.CUSTOM:
            data = {"type": "response.custom_tool_call_input.done", "input": item.texts[0]}
        else:
            data = {"type": "response.function_call_arguments.done", "arguments": item.texts[0]}
        return self._event({**data, **self._where(item)})


def obfuscation(delta: str, seed: str) -> str:
    """The `obfuscation` of a delta event: random-looking characters that pad the delta to 16 (none when it is
    longer), derived from `seed` so the same stream always pads the same."""
    return token(seed, max(0, 16 - len(delta)))
