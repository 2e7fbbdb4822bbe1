"""Wire request (`POST /v1/responses` body) -> IR request.

`instructions` is the system prompt; without it, a leading text-only system or developer message is. `input` is a
string (one user turn) or items: messages, and the assistant side of earlier turns (`reasoning`,
`function_call`) joined into one IR assistant message per run of such items; a run of `function_call_output`
items is one IR tool message. A tool result's name comes from the call with the same `call_id`.

Fields with no IR equivalent (`store`, `previous_response_id`, `metadata`, `include`, `truncation`, ...) go to
`provider_fields["responses"]` verbatim; how IR-mapped values were shaped on the wire (a string `input`, item
keys such as `type`, `id`, `status`, `phase`, image `detail`, tool `strict`, the reasoning object, items with no
IR form such as hosted-tool calls or `item_reference`) goes under its reserved `_shape` key, so the same codec's
encoder reproduces the client's request.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols.common import DATA_URL
from harness.protocols.responses import compaction, ids, items
from harness.protocols.responses.mapping import reasoning_effort
from harness.protocols.responses.reader import NAME, JSONDict, Reader, load_object

SHAPE = "_shape"
"""Reserved `provider_fields["responses"]` key holding wire-shape hints (never a Responses field name)."""

MAPPED_FIELDS = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "temperature",
        "top_p",
        "max_output_tokens",
        "text",
        "reasoning",
        "stream",
    }
)
MESSAGE_KEYS = frozenset({"role", "content"})
CALL_KEYS = frozenset({"type", "call_id", "name", "arguments"})
OUTPUT_KEYS = frozenset({"type", "call_id", "output"})
REASONING_KEYS = frozenset({"type", "summary", "content", "encrypted_content"})
TOOL_KEYS = frozenset({"type", "name", "description", "parameters"})
SCHEMA_KEYS = frozenset({"type", "name", "schema", "strict"})
REASONING_SETTINGS = frozenset({"effort", "summary"})
_ASSISTANT_SIDE = ("reasoning", "function_call")


def reasoning_id(parts: list[ir.ContentPart]) -> str:
    """The id the encoder gives a reasoning item of these parts (a stored item's real id is kept as a hint)."""
    texts = [p.text for p in parts if isinstance(p, ir.ThinkingPart)]
    last = parts[-1]
    encrypted = last.data if isinstance(last, ir.RedactedThinkingPart) else getattr(last, "signature", None)
    return ids.derived(ids.REASONING, *texts, encrypted)


def default_summary(thinking: ir.ThinkingConfig | None) -> str | None:
    """The `reasoning.summary` the encoder asks for: `auto` with thinking on, so the client sees reasoning text
    as it would from other providers; none otherwise."""
    return "auto" if thinking is not None and thinking.enabled else None


class _Decoder:
    """One request's decoding state: the reader, the shape hints and the tool names seen."""

    def __init__(self) -> None:
        self.r = Reader(NAME)
        self.shape: JSONDict = {}
        self.tool_names: dict[str, str] = {}
        self.messages: list[ir.Message] = []
        self.mergeable = False  # whether the last IR message came from assistant-side or tool-output items

    def hint(self, group: str, key: str, value: Any) -> None:
        """Record one keyed shape hint (e.g. extra keys of input item 3)."""
        self.shape.setdefault(group, {})[key] = value

    def extras(self, index: int, item: JSONDict, known: frozenset[str]) -> None:
        """Remember the keys of input item `index` the IR does not model."""
        rest = {k: v for k, v in item.items() if k not in known}
        if rest:
            self.hint("items", str(index), rest)

    def add(self, role: str, parts: list[ir.ContentPart], *, merge: bool) -> None:
        """Append parts as a message, joining the previous one when both come from mergeable items, unless the
        encoder would have put the two items' parts into one item (two text items, two reasoning items whose
        first has no encrypted content): those were two turns, and stay two messages."""
        last = self.messages[-1] if self.messages else None
        boundary = last is not None and bool(parts) and items.continues(last.content[-1:], parts[0])
        if merge and self.mergeable and last is not None and last.role == role and not boundary:
            self.messages[-1] = ir.Message(role=last.role, content=[*last.content, *parts])
        else:
            self.messages.append(ir.Message(role=role, content=parts))
        self.mergeable = merge

    # --- input items ------------------------------------------------------------------------------------
    def input(self, value: Any, system: str | None) -> str | None:
        """Decode `input` into `self.messages`; returns the system prompt (from a leading item when no
        `instructions` gave one)."""
        if isinstance(value, str):
            self.shape["input_string"] = True
            self.messages.append(ir.Message(role="user", content=[ir.TextPart(text=value)] if value else []))
            return system
        for i, raw in enumerate(self.r.lst(value, "input")):
            where = f"input[{i}]"
            item = self.r.obj(raw, where)
            kind = item.get("type", "message")
            if kind == "message":
                leading = self.message(i, item, where, leading=i == 0 and system is None)
                if leading is not None:
                    system = leading
            elif kind == "reasoning":
                parts, full = items.reasoning_parts(self.r, item, where)
                if full:
                    self.shape.setdefault("reasoning_text", []).append(i)
                if not parts:  # a bare reference to a stored reasoning item: no IR form
                    self.opaque(i, item)
                    continue
                derived = reasoning_id(parts)
                self.extras(i, item, REASONING_KEYS | ({"id"} if item.get("id") == derived else set()))
                if "id" not in item:
                    self.shape.setdefault("reasoning_without_id", []).append(i)
                self.add("assistant", parts, merge=True)
            elif kind == "function_call":
                call = items.function_call(self.r, item, where)
                self.tool_names[call.id] = call.name
                self.extras(i, item, CALL_KEYS)
                self.add("assistant", [call], merge=True)
            elif kind == "function_call_output":
                self.extras(i, item, OUTPUT_KEYS)
                self.add("tool", [self.tool_result(i, item, where)], merge=True)
            else:
                self.r.str_(kind, f"{where}.type")
                self.opaque(i, item)
        return system

    def opaque(self, index: int, item: JSONDict) -> None:
        """An item with no IR form (hosted-tool calls, `item_reference`, a bare reasoning reference): kept
        verbatim to be re-sent at the same place; it ends the IR message before it."""
        self.hint("opaque", str(index), item)
        self.mergeable = False

    def message(self, index: int, item: JSONDict, where: str, *, leading: bool) -> str | None:
        """A `message` item; returns its text when it is the leading system prompt."""
        role = self.r.str_(item.get("role"), f"{where}.role")
        if role not in ("user", "assistant", "system", "developer"):
            self.r.fail(f"{where}.role", f"unsupported role {role!r}")
        self.extras(index, item, MESSAGE_KEYS)
        value = item.get("content")
        if isinstance(value, str):
            content: list[ir.ContentPart] = [ir.TextPart(text=value)] if value else []
        else:
            content = self.parts(index, self.r.lst(value, f"{where}.content"), f"{where}.content", role)
        if role in ("system", "developer"):
            if leading and len(content) == 1 and isinstance(content[0], ir.TextPart):
                self.shape["system_item"] = role
                return content[0].text
            if role == "developer":
                self.hint("roles", str(index), role)
            self.add("system", content, merge=False)
        elif role == "assistant":
            self.add("assistant", content, merge=True)
        else:
            self.add("user", content, merge=False)
        return None

    def parts(self, index: int, raw: list[Any], where: str, role: str) -> list[ir.ContentPart]:
        """A content array of text, image and file parts (a message's `content`, a tool output's `output`)."""
        if len(raw) <= 1 and all(isinstance(e, dict) and e.get("type") in items.MESSAGE_TEXT_TYPES for e in raw):
            self.shape.setdefault("content_list", []).append(index)  # the encoder would write a plain string
        default = "output_text" if role == "assistant" else "input_text"
        parts: list[ir.ContentPart] = []
        for j, entry in enumerate(raw):
            at = f"{where}[{j}]"
            part = self.r.obj(entry, at)
            kind = part.get("type")
            if kind in items.MESSAGE_TEXT_TYPES:
                if kind != default:
                    self.hint("part_types", f"{index}.{j}", kind)
                key = "refusal" if kind == "refusal" else "text"
                rest = {k: v for k, v in part.items() if k not in ("type", key)}
                if rest:  # e.g. the `annotations` of an output_text sent back
                    self.hint("part_extras", f"{index}.{j}", rest)
                parts.append(ir.TextPart(text=self.r.str_(part.get(key), f"{at}.{key}")))
            elif kind == "input_image" and role != "assistant":
                parts.append(self.image(part, at, f"{index}.{j}"))
            elif kind == "input_file" and role != "assistant":
                parts.append(self.file(part, at))
            else:
                self.r.fail(f"{at}.type", f"unsupported content part type {kind!r} in a {role} message")
        return parts

    def image(self, part: JSONDict, where: str, key: str) -> ir.ImagePart:
        """An `input_image` part: a data URL is inline base64, any other URL a URL image; `detail` is kept when
        it is not `auto` (what the encoder sends)."""
        url = part.get("image_url")
        if url is None:
            self.r.fail(f"{where}.image_url", "an image by file_id has no IR form")
        url = self.r.str_(url, f"{where}.image_url")
        if "detail" not in part or part["detail"] != "auto":
            self.hint("image_detail", key, part.get("detail"))
        if url.startswith("data:"):
            match = DATA_URL.fullmatch(url)
            if match is None:
                self.r.fail(f"{where}.image_url", "data URL is not `data:<type>;base64,<data>`")
            return ir.ImagePart(source=ir.Base64Image(media_type=match.group(1), data=match.group(2)))
        return ir.ImagePart(source=ir.UrlImage(url=url))

    def file(self, part: JSONDict, where: str) -> ir.FilePart:
        """An `input_file` part in one of its three forms: `file_data` (a data URL), `file_url` (no media type on
        the wire) or `file_id` (OpenAI's Files); exactly one."""
        name = self.r.opt_str(part.get("filename"), f"{where}.filename")
        forms = [key for key in ("file_data", "file_url", "file_id") if part.get(key) is not None]
        if len(forms) != 1:
            self.r.fail(
                where, f"an input_file has exactly one of file_data, file_url and file_id, got {forms or 'none'}"
            )
        if forms == ["file_url"]:
            return ir.FilePart(url=self.r.str_(part["file_url"], f"{where}.file_url"), filename=name)
        if forms == ["file_id"]:
            return ir.FilePart(file_id=self.r.str_(part["file_id"], f"{where}.file_id"), filename=name)
        match = DATA_URL.fullmatch(self.r.str_(part["file_data"], f"{where}.file_data"))
        if match is None:
            self.r.fail(f"{where}.file_data", "file_data is not `data:<type>;base64,<data>`")
        return ir.FilePart(media_type=match.group(1), data=match.group(2), filename=name)

    def tool_result(self, index: int, item: JSONDict, where: str) -> ir.ToolResultPart:
        """A `function_call_output` item; its tool name comes from the earlier call with the same id."""
        call_id = self.r.str_(item.get("call_id"), f"{where}.call_id")
        output = item.get("output")
        if isinstance(output, str):
            content: list[ir.ContentPart] = [ir.TextPart(text=output)] if output else []
        else:
            content = self.parts(index, self.r.lst(output, f"{where}.output"), f"{where}.output", "tool")
        if any(isinstance(p, ir.FilePart) for p in content):
            self.r.fail(f"{where}.output", "a file in a function_call_output has no IR form")
        kept = [p for p in content if isinstance(p, ir.TextPart | ir.ImagePart)]
        return ir.ToolResultPart(tool_call_id=call_id, name=self.tool_names.get(call_id), content=kept)

    # --- top level ------------------------------------------------------------------------------------
    def tools(self, raw: list[Any]) -> list[ir.Tool]:
        """Function tools; hosted tools (web search, file search, MCP, ...) are kept verbatim in place."""
        out: list[ir.Tool] = []
        for i, entry in enumerate(raw):
            where = f"tools[{i}]"
            tool = self.r.obj(entry, where)
            if tool.get("type") != "function":
                self.r.str_(tool.get("type"), f"{where}.type")
                self.hint("hosted_tools", str(i), tool)
                continue
            rest = {k: v for k, v in tool.items() if k not in TOOL_KEYS}
            if "strict" not in tool:
                self.shape.setdefault("tools_without_strict", []).append(i)
            elif rest.get("strict") is False:
                del rest["strict"]  # what the encoder sends by default
            if rest:
                self.hint("tools", str(i), rest)
            params = self.r.opt_obj(tool.get("parameters"), f"{where}.parameters")
            out.append(
                ir.Tool(
                    name=self.r.str_(tool.get("name"), f"{where}.name"),
                    description=self.r.opt_str(tool.get("description"), f"{where}.description"),
                    parameters=params if params is not None else {"type": "object", "properties": {}},
                )
            )
        return out

    def tool_choice(self, value: Any, raw_fields: JSONDict) -> ir.ToolChoice | None:
        """`tool_choice`: a mode or a named function; other forms (`allowed_tools`, hosted tools) are kept raw."""
        modes: dict[Any, ir.ToolChoice] = {
            "auto": ir.ToolChoiceAuto(),
            "none": ir.ToolChoiceNone(),
            "required": ir.ToolChoiceRequired(),
        }
        if value is None:
            return None
        if isinstance(value, str) and value in modes:
            return modes[value]
        if isinstance(value, dict) and value.get("type") == "function" and set(value) == {"type", "name"}:
            return ir.ToolChoiceTool(name=self.r.str_(value.get("name"), "tool_choice.name"))
        raw_fields["tool_choice"] = value
        return None

    def text(self, value: Any) -> ir.ResponseFormat | None:
        """`text.format` (text, json_object, json_schema); the other `text` keys (`verbosity`) are kept."""
        text = self.r.opt_obj(value, "text")
        if text is None:
            return None
        rest = {k: v for k, v in text.items() if k != "format"}
        if rest or text.get("format") is None:  # the encoder writes a `text` object only around a format
            self.shape["text"] = rest
        spec = self.r.opt_obj(text.get("format"), "text.format")
        if spec is None:
            return None
        kind = spec.get("type")
        if kind == "text":
            return ir.ResponseFormatText()
        if kind == "json_object":
            return ir.ResponseFormatJsonObject()
        if kind != "json_schema":
            self.r.fail("text.format.type", f"unsupported format {kind!r}")
        rest = {k: v for k, v in spec.items() if k not in SCHEMA_KEYS}
        if rest:
            self.shape["json_schema"] = rest
        return ir.ResponseFormatJsonSchema(
            name=self.r.str_(spec.get("name"), "text.format.name"),
            schema_=self.r.obj(spec.get("schema"), "text.format.schema"),
            strict=self.r.opt_bool(spec.get("strict"), "text.format.strict"),
        )

    def reasoning(self, value: Any) -> ir.ThinkingConfig | None:
        """`reasoning` as IR thinking: on unless the effort is `none` (the wire has no budget). Each setting that
        re-encoding would not give back (an effort such as `minimal` or none at all, a summary other than
        `auto`, other keys) is kept in the `reasoning` hint, a missing one as null."""
        spec = self.r.opt_obj(value, "reasoning")
        if spec is None:
            return None
        effort = self.r.opt_str(spec.get("effort"), "reasoning.effort")
        self.r.opt_str(spec.get("summary"), "reasoning.summary")
        config = ir.ThinkingConfig(enabled=effort != "none")
        kept = {k: v for k, v in spec.items() if k not in REASONING_SETTINGS}
        if effort != reasoning_effort(config):
            kept["effort"] = effort
        if spec.get("summary") != default_summary(config):
            kept["summary"] = spec.get("summary")
        if kept:
            self.shape["reasoning"] = kept
        return config


def decode_request(body: bytes) -> ir.Request:
    """A `POST /v1/responses` body -> IR request."""
    d = _Decoder()
    req = d.r.obj(load_object(body, what="request body"), "body")
    raw_fields: JSONDict = {k: v for k, v in req.items() if k not in MAPPED_FIELDS}
    instructions = d.r.opt_str(req.get("instructions"), "instructions")
    if "input" not in req:
        d.shape["no_input"] = True
    system = d.input(compaction.expand(req.get("input", [])), instructions)
    thinking = d.reasoning(req.get("reasoning"))
    stream = d.r.opt_bool(req.get("stream"), "stream")
    if stream is False:
        d.shape["stream_false"] = True
    request = ir.Request(
        model=d.r.str_(req.get("model"), "model"),
        system=system,
        messages=d.messages,
        tools=d.tools(d.r.opt_lst(req.get("tools"), "tools")),
        tool_choice=d.tool_choice(req.get("tool_choice"), raw_fields),
        parallel_tool_calls=d.r.opt_bool(req.get("parallel_tool_calls"), "parallel_tool_calls"),
        temperature=d.r.opt_float(req.get("temperature"), "temperature"),
        top_p=d.r.opt_float(req.get("top_p"), "top_p"),
        max_tokens=d.r.opt_int(req.get("max_output_tokens"), "max_output_tokens"),
        response_format=d.text(req.get("text")),
        stream=bool(stream),
        thinking=thinking,
    )
    for key, value in defaults(request).items():
        if key not in req:
            d.shape.setdefault("omitted", []).append(key)
        elif raw_fields.get(key) == value:
            del raw_fields[key]  # re-encoding adds it back
    if d.shape:
        raw_fields[SHAPE] = d.shape
    if raw_fields:
        request = request.model_copy(update={"provider_fields": {NAME: raw_fields}})
    return request


def defaults(request: ir.Request) -> JSONDict:
    """Fields the encoder adds that no IR value names: a translation is stateless, so `store` is false, and with
    thinking on the reasoning comes back encrypted (`include`), the only way a later turn can send it back."""
    out: JSONDict = {"store": False}
    if request.thinking is not None and request.thinking.enabled:
        out["include"] = ["reasoning.encrypted_content"]
    return out
