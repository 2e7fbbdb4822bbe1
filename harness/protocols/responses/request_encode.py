"""IR request -> wire request body for `POST /v1/responses`.

Reads the `_shape` hints the same codec's decoder left in `provider_fields["responses"]`, so a decoded request
re-encodes as the client sent it. Without hints (a request from another protocol) the encoder writes what a
stateless translation needs: the system prompt as `instructions`, conversation turns as items (see `items` for
how parts group into them), function tools with `strict: false` (an IR tool promises no strict schema, and the
API's default would enforce one), `reasoning` with `summary: auto` so reasoning text comes back, and the
`defaults` of `request_decode` (`store: false`, encrypted reasoning included).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from harness import ir
from harness.protocols.responses import client_calls, items
from harness.protocols.responses.mapping import reasoning_effort
from harness.protocols.responses.reader import NAME, JSONDict, hint_list, hint_table
from harness.protocols.responses.request_decode import SHAPE, default_summary, defaults, reasoning_id

PATH = "/v1/responses"
"""Where a Responses request goes."""


class _Encoder:
    """One request's encoding state: the raw fields, the shape hints and the input items written so far."""

    def __init__(self, request: ir.Request) -> None:
        raw = dict(request.provider_fields.get(NAME, {}))
        shape = raw.pop(SHAPE, {})
        self.raw: JSONDict = raw
        self.shape: JSONDict = shape if isinstance(shape, dict) else {}
        self.opaque = hint_table(self.shape, "opaque")
        self.items: list[JSONDict] = []

    def keyed(self, group: str, key: str) -> Any:
        """One keyed hint, or None."""
        return hint_table(self.shape, group).get(key)

    def listed(self, group: str, index: int) -> bool:
        """Whether an index-listed hint names `index`."""
        return index in hint_list(self.shape, group)

    def emit(self, item: JSONDict) -> None:
        """Append an input item (after any kept opaque item due before it), restoring the keys the decoder saw."""
        self._flush_opaque()
        extras = self.keyed("items", str(len(self.items)))
        if isinstance(extras, dict):
            item.update(extras)
        self.items.append(item)

    def _flush_opaque(self) -> None:
        while str(len(self.items)) in self.opaque:
            self.items.append(self.opaque[str(len(self.items))])

    def finish(self) -> list[JSONDict]:
        """The input items, with kept opaque items that came after everything else."""
        self._flush_opaque()
        for key in sorted((k for k in self.opaque if k.isdigit() and int(k) >= len(self.items)), key=int):
            self.items.append(self.opaque[key])
        return self.items

    # --- content ----------------------------------------------------------------------------------------
    def content(self, index: int, parts: Sequence[ir.ContentPart], role: str) -> str | list[JSONDict]:
        """Message content: one text as a plain string (as SDK users write it), else an array of parts."""
        texts = [p for p in parts if isinstance(p, ir.TextPart)]
        if len(parts) == len(texts) <= 1 and not self.listed("content_list", index):
            return texts[0].text if texts else ""
        default = "output_text" if role == "assistant" else "input_text"
        out: list[JSONDict] = []
        for j, part in enumerate(parts):
            if isinstance(part, ir.TextPart):
                kind = self.keyed("part_types", f"{index}.{j}") or default
                extras = self.keyed("part_extras", f"{index}.{j}")
                text = {"type": kind, "refusal" if kind == "refusal" else "text": part.text}
                out.append({**text, **extras} if isinstance(extras, dict) else text)
            elif isinstance(part, ir.ImagePart):
                out.append(self.image(part, f"{index}.{j}"))
            elif isinstance(part, ir.FilePart):
                out.append(file_item(part))
        return out

    def image(self, part: ir.ImagePart, key: str) -> JSONDict:
        """An `input_image` part (inline images as data URLs), `detail` as the client wrote it or `auto`."""
        src = part.source
        url = src.url if isinstance(src, ir.UrlImage) else f"data:{src.media_type};base64,{src.data}"
        out: JSONDict = {"type": "input_image", "image_url": url}
        details = hint_table(self.shape, "image_detail")
        if key not in details:
            out["detail"] = "auto"
        elif details[key] is not None:
            out["detail"] = details[key]
        return out

    # --- items ------------------------------------------------------------------------------------------
    def message(self, role: str, parts: Sequence[ir.ContentPart]) -> None:
        """A `message` item of text (and, outside assistant turns, image) parts."""
        index = self._next_index()
        if role == "system":
            role = self.keyed("roles", str(index)) or "system"
        self.emit({"role": role, "content": self.content(index, parts, role)})

    def reasoning(self, group: Sequence[ir.ContentPart]) -> None:
        """A `reasoning` item: summaries (or full reasoning text, as the client sent it) and encrypted content."""
        index = self._next_index()
        last = group[-1]
        encrypted = last.data if isinstance(last, ir.RedactedThinkingPart) else getattr(last, "signature", None)
        texts = [p.text for p in group if isinstance(p, ir.ThinkingPart)]
        item: JSONDict = {"type": "reasoning"}
        if not self.listed("reasoning_without_id", index):
            item["id"] = reasoning_id(list(group))
        if self.listed("reasoning_text", index):
            item["summary"] = []
            item["content"] = [{"type": "reasoning_text", "text": t} for t in texts]
        else:
            item["summary"] = [items.summary_text(t) for t in texts]
        if encrypted is not None:
            item["encrypted_content"] = encrypted
        self.emit(item)

    def tool_result(self, part: ir.ToolResultPart) -> None:
        """A `function_call_output` item (a single text as a plain string)."""
        index = self._next_index()
        output = self.content(index, part.content, "tool")
        self.emit({"type": "function_call_output", "call_id": part.tool_call_id, "output": output})

    def _next_index(self) -> int:
        self._flush_opaque()
        return len(self.items)

    def parts(self, role: str, parts: Sequence[ir.ContentPart]) -> None:
        """One IR message as items: text (and image) runs as messages of its role (a tool turn's as user
        messages; an assistant turn's images have no wire form), the assistant side of a turn as reasoning and
        function_call items, tool results as function_call_output items. An empty message stays one."""
        if not parts and role != "tool":
            self.message(role, [])
        groups = items.group_parts(parts) if role == "assistant" else _runs(parts)
        for group in groups:
            first = group[0]
            media = isinstance(first, ir.ImagePart | ir.FilePart)
            if isinstance(first, ir.TextPart) or (media and role != "assistant"):
                self.message("user" if role == "tool" else role, group)
            elif isinstance(first, ir.ThinkingPart | ir.RedactedThinkingPart):
                self.reasoning(group)
            elif isinstance(first, ir.ToolCallPart) and first.call_type is not None:
                self.emit(client_calls.item(None, first, None))
            elif isinstance(first, ir.ToolCallPart):
                call = {"type": "function_call", "call_id": first.id, "name": first.name}
                self.emit({**call, "arguments": first.arguments_raw})
            elif isinstance(first, ir.ToolResultPart):
                self.tool_result(first)


def _runs(parts: Sequence[ir.ContentPart]) -> Iterable[list[ir.ContentPart]]:
    """Outside assistant turns: runs of text, image and file parts form one message; every other part stands
    alone."""
    run: list[ir.ContentPart] = []
    for part in parts:
        if isinstance(part, ir.TextPart | ir.ImagePart | ir.FilePart):
            run.append(part)
            continue
        if run:
            yield run
            run = []
        yield [part]
    if run:
        yield run


def file_item(part: ir.FilePart) -> JSONDict:
    """An `input_file` part: the bytes as a data URL in `file_data`, a URL in `file_url` (its media type is not
    sent: the wire has no field for it), a stored file in `file_id`; and the name when there is one."""
    out: JSONDict = {"type": "input_file"}
    if part.data is not None:
        out["file_data"] = f"data:{part.media_type};base64,{part.data}"
    elif part.url is not None:
        out["file_url"] = part.url
    else:
        out["file_id"] = part.file_id
    if part.filename is not None:
        out["filename"] = part.filename
    return out


def tool_choice(choice: ir.ToolChoice) -> Any:
    if isinstance(choice, ir.ToolChoiceTool):
        return {"type": "function", "name": choice.name}
    return choice.kind


def response_format(fmt: ir.ResponseFormat, extras: Any = None) -> JSONDict:
    """`text.format` for text, json_object or json_schema (flat: name, schema and strict beside the type)."""
    if not isinstance(fmt, ir.ResponseFormatJsonSchema):
        return {"type": fmt.kind}
    out: JSONDict = {"type": "json_schema", "name": fmt.name, "schema": fmt.schema_}
    if fmt.strict is not None:
        out["strict"] = fmt.strict
    if isinstance(extras, dict):
        out.update(extras)
    return out


def tools(request: ir.Request, shape: JSONDict | None = None) -> list[JSONDict]:
    """The `tools` array: function tools (with the keys the decoder saw, `strict: false` unless the client left
    it out), and hosted tools kept verbatim at their places."""
    hosted, extras = hint_table(shape, "hosted_tools"), hint_table(shape, "tools")
    no_strict = hint_list(shape, "tools_without_strict")
    out: list[JSONDict] = []
    pending = list(request.tools)
    while pending or str(len(out)) in hosted:
        at = len(out)
        if str(at) in hosted:
            out.append(hosted[str(at)])
            continue
        tool = pending.pop(0)
        wire: JSONDict = {"type": "function", "name": tool.name}
        if tool.description is not None:
            wire["description"] = tool.description
        wire["parameters"] = tool.parameters
        if at not in no_strict:
            wire["strict"] = False
        if isinstance(extras.get(str(at)), dict):
            wire.update(extras[str(at)])
        out.append(wire)
    return out


def reasoning(thinking: ir.ThinkingConfig, kept: Any = None) -> JSONDict:
    """The `reasoning` object: the effort level of the settings and, with thinking on, `summary: auto`; the
    settings the decoder kept (a null one was absent) win."""
    out: JSONDict = {"effort": reasoning_effort(thinking)}
    summary = default_summary(thinking)
    if summary is not None:
        out["summary"] = summary
    if isinstance(kept, dict):
        out.update(kept)
    return {k: v for k, v in out.items() if v is not None}


def _input(e: _Encoder, request: ir.Request) -> list[JSONDict] | str:
    """The `input`: a bare string when the client sent one and the turn is still one plain user text."""
    messages = request.messages
    if e.shape.get("input_string") and len(messages) == 1 and messages[0].role == "user":
        parts = messages[0].content
        if all(isinstance(p, ir.TextPart) for p in parts) and len(parts) <= 1 and not e.opaque:
            return parts[0].text if parts and isinstance(parts[0], ir.TextPart) else ""
    if request.system is not None and e.shape.get("system_item") in ("system", "developer"):
        e.message(str(e.shape["system_item"]), [ir.TextPart(text=request.system)])
    for message in messages:
        e.parts(message.role, message.content)
    return e.finish()


def encode_request_body(request: ir.Request) -> JSONDict:
    """The JSON body of a Responses request for an IR request."""
    e = _Encoder(request)
    body: JSONDict = {"model": request.model}
    if request.system is not None and e.shape.get("system_item") not in ("system", "developer"):
        body["instructions"] = request.system
    wire_input = _input(e, request)
    if wire_input or not e.shape.get("no_input"):
        body["input"] = wire_input
    if request.tools or e.shape.get("hosted_tools"):
        body["tools"] = tools(request, e.shape)
    if request.tool_choice is not None:
        body["tool_choice"] = tool_choice(request.tool_choice)
    optional = {
        "parallel_tool_calls": request.parallel_tool_calls,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "max_output_tokens": request.max_tokens,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    text_extras = e.shape.get("text")
    if request.response_format is not None or isinstance(text_extras, dict):
        text: JSONDict = dict(text_extras) if isinstance(text_extras, dict) else {}
        if request.response_format is not None:
            text = {"format": response_format(request.response_format, e.shape.get("json_schema")), **text}
        body["text"] = text
    if request.thinking is not None:
        body["reasoning"] = reasoning(request.thinking, e.shape.get("reasoning"))
    if request.stream:
        body["stream"] = True
    elif e.shape.get("stream_false"):
        body["stream"] = False
    for key, value in e.raw.items():
        body.setdefault(key, value)
    omitted = hint_list(e.shape, "omitted")
    for key, value in defaults(request).items():
        if key not in omitted:
            body.setdefault(key, value)
    return body
