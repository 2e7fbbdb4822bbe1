"""Wire request (`POST /v1/chat/completions` body) -> IR request.

Fields with no IR equivalent go to `provider_fields[<profile name>]` verbatim; how IR-mapped fields were shaped
on the wire (the `developer` role, `max_completion_tokens`, a string `stop`, `stream_options`, per-message and
per-tool extra keys, image `detail`) goes under its reserved `_shape` key, so the same codec's encoder
reproduces the client's request. Consecutive `tool` messages become one IR tool message (the form Anthropic and
Gemini need); a tool result's `name` is recovered from the assistant tool call with the same id.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.jsonread import Reader
from harness.protocols.openai.mapping import first_reasoning, reasoning_effort
from harness.protocols.openai.profile import JSONDict, Profile

SHAPE = "_shape"
"""Reserved `provider_fields[<name>]` key holding wire-shape hints (never an OpenAI field name)."""

# Top-level request fields the IR models; every other field is kept raw.
MAPPED_FIELDS = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "stop",
        "response_format",
        "stream",
        "stream_options",
    }
)
MESSAGE_FIELDS = frozenset({"role", "content", "tool_calls", "tool_call_id", "reasoning_content", "reasoning"})
FUNCTION_FIELDS = frozenset({"name", "description", "parameters"})
JSON_SCHEMA_FIELDS = frozenset({"name", "schema", "strict"})


class _RequestDecoder:
    """One request's decoding state: the reader, the shape hints collected and the tool names seen."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.r = Reader(profile.name)
        self.shape: JSONDict = {}
        self.tool_names: dict[str, str] = {}
        self.system_roles: list[str] = []

    def hint(self, group: str, key: str, value: Any) -> None:
        """Record one keyed shape hint (e.g. extra fields of wire message 3)."""
        self.shape.setdefault(group, {})[key] = value

    # --- messages -------------------------------------------------------------------------------------
    def messages(self, raw: list[Any]) -> tuple[str | None, list[ir.Message]]:
        """The leading system prompt and the IR messages of the wire `messages` array."""
        system: str | None = None
        out: list[ir.Message] = []
        for i, item in enumerate(raw):
            path = f"messages[{i}]"
            msg = self.r.obj(item, path)
            role = self.r.str_(msg.get("role"), f"{path}.role")
            extras = {k: v for k, v in msg.items() if k not in MESSAGE_FIELDS}
            if extras:
                self.hint("messages", str(i), extras)
            if role in ("system", "developer"):
                self.system_roles.append(role)
                if i == 0:
                    system = self.system_prompt(msg.get("content"), path)
                    continue
                out.append(ir.Message(role="system", content=self.text_parts(msg.get("content"), path)))
            elif role == "user":
                out.append(ir.Message(role="user", content=self.user_parts(msg.get("content"), path, i)))
            elif role == "assistant":
                out.append(self.assistant(msg, path))
            elif role == "tool":
                part = self.tool_result(msg, path)
                if out and out[-1].role == "tool":
                    out[-1] = ir.Message(role="tool", content=[*out[-1].content, part])
                else:
                    out.append(ir.Message(role="tool", content=[part]))
            else:
                self.r.fail(f"{path}.role", f"unsupported role {role!r}")
        return system, out

    def system_prompt(self, content: Any, path: str) -> str:
        """The leading system/developer message's text (an array of text parts is joined)."""
        if isinstance(content, list):
            self.shape["system_parts"] = True
            return "\n".join(p.text for p in self.text_parts(content, path) if isinstance(p, ir.TextPart))
        return self.r.str_(content, f"{path}.content")

    def text_parts(self, content: Any, path: str) -> list[ir.ContentPart]:
        """Content that may only hold text: a string or an array of text parts."""
        if content is None or content == "":
            return []
        if isinstance(content, str):
            return [ir.TextPart(text=content)]
        parts: list[ir.ContentPart] = []
        for j, item in enumerate(self.r.lst(content, f"{path}.content")):
            part = self.r.obj(item, f"{path}.content[{j}]")
            if part.get("type") != "text":
                self.r.fail(f"{path}.content[{j}].type", f"expected a text part, got {part.get('type')!r}")
            parts.append(ir.TextPart(text=self.r.str_(part.get("text"), f"{path}.content[{j}].text")))
        return parts

    def user_parts(self, content: Any, path: str, index: int) -> list[ir.ContentPart]:
        """User content: a string, or text and `image_url` parts."""
        if content is None or isinstance(content, str):
            return self.text_parts(content, path)
        parts: list[ir.ContentPart] = []
        for j, item in enumerate(self.r.lst(content, f"{path}.content")):
            where = f"{path}.content[{j}]"
            part = self.r.obj(item, where)
            kind = part.get("type")
            if kind == "text":
                parts.append(ir.TextPart(text=self.r.str_(part.get("text"), f"{where}.text")))
            elif kind == "image_url":
                parts.append(self.image(part.get("image_url"), where, f"{index}.{j}"))
            elif kind == "file":
                parts.append(self.file(part.get("file"), f"{where}.file"))
            else:
                self.r.fail(f"{where}.type", f"unsupported content part type {kind!r}")
        return parts

    def image(self, value: Any, where: str, key: str) -> ir.ImagePart:
        """An `image_url` part: a data URL becomes inline base64, anything else a URL image."""
        if isinstance(value, str):
            url = value
        else:
            spec = self.r.obj(value, f"{where}.image_url")
            url = self.r.str_(spec.get("url"), f"{where}.image_url.url")
            detail = spec.get("detail")
            if detail is not None:
                self.hint("image_detail", key, detail)
        if url.startswith("data:"):
            match = common.DATA_URL.fullmatch(url)
            if match is None:
                self.r.fail(f"{where}.image_url.url", "data URL is not `data:<type>;base64,<data>`")
            return ir.ImagePart(source=ir.Base64Image(media_type=match.group(1), data=match.group(2)))
        return ir.ImagePart(source=ir.UrlImage(url=url))

    def file(self, value: Any, where: str) -> ir.FilePart:
        """A `file` part given inline (`file_data`, a data URL) or as a stored file (`file_id`, an upload)."""
        spec = self.r.obj(value, where)
        name = self.r.opt_str(spec.get("filename"), f"{where}.filename")
        data, file_id = spec.get("file_data"), spec.get("file_id")
        if (data is None) == (file_id is None):
            self.r.fail(where, "a file part has exactly one of file_data and file_id")
        if file_id is not None:
            return ir.FilePart(file_id=self.r.str_(file_id, f"{where}.file_id"), filename=name)
        match = common.DATA_URL.fullmatch(self.r.str_(data, f"{where}.file_data"))
        if match is None:
            self.r.fail(f"{where}.file_data", "file_data is not `data:<type>;base64,<data>`")
        return ir.FilePart(media_type=match.group(1), data=match.group(2), filename=name)

    def assistant(self, msg: JSONDict, path: str) -> ir.Message:
        """An assistant turn: reasoning (compatible servers), text, then tool calls."""
        parts: list[ir.ContentPart] = []
        reasoning = first_reasoning(self.profile, self.r, msg, path)
        if reasoning:
            parts.append(ir.ThinkingPart(text=reasoning))
        content = msg.get("content")
        if isinstance(content, list):
            for j, item in enumerate(content):
                part = self.r.obj(item, f"{path}.content[{j}]")
                kind = part.get("type")
                if kind not in ("text", "refusal"):
                    self.r.fail(f"{path}.content[{j}].type", f"unsupported assistant part type {kind!r}")
                parts.append(ir.TextPart(text=self.r.str_(part.get(kind), f"{path}.content[{j}].{kind}")))
        elif self.r.opt_str(content, f"{path}.content"):
            parts.append(ir.TextPart(text=content))
        for j, item in enumerate(self.r.opt_lst(msg.get("tool_calls"), f"{path}.tool_calls")):
            parts.append(self.tool_call(item, f"{path}.tool_calls[{j}]"))
        return ir.Message(role="assistant", content=parts)

    def tool_call(self, item: Any, where: str) -> ir.ToolCallPart:
        """One entry of an assistant message's `tool_calls`."""
        call = self.r.obj(item, where)
        function = self.r.obj(call.get("function"), f"{where}.function")
        name = self.r.str_(function.get("name"), f"{where}.function.name")
        raw = self.r.opt_str(function.get("arguments"), f"{where}.function.arguments") or ""
        call_id = self.r.opt_str(call.get("id"), f"{where}.id")
        if call_id is None:
            call_id = common.synth_tool_id(self.profile.tool_id_prefix, name, raw, where)
        self.tool_names[call_id] = name
        return ir.ToolCallPart(id=call_id, name=name, arguments=common.parse_arguments(raw), arguments_raw=raw)

    def tool_result(self, msg: JSONDict, path: str) -> ir.ToolResultPart:
        """A `tool` message; its tool name comes from the earlier call with the same id, when there is one."""
        call_id = self.r.str_(msg.get("tool_call_id"), f"{path}.tool_call_id")
        content = [p for p in self.text_parts(msg.get("content"), path) if isinstance(p, ir.TextPart)]
        return ir.ToolResultPart(tool_call_id=call_id, name=self.tool_names.get(call_id), content=[*content])

    # --- top level ------------------------------------------------------------------------------------
    def tools(self, raw: list[Any]) -> list[ir.Tool]:
        """The `tools` array (function tools only)."""
        out: list[ir.Tool] = []
        for i, item in enumerate(raw):
            where = f"tools[{i}]"
            tool = self.r.obj(item, where)
            if tool.get("type", "function") != "function":
                self.r.fail(f"{where}.type", f"unsupported tool type {tool.get('type')!r}")
            function = self.r.obj(tool.get("function"), f"{where}.function")
            extras = {k: v for k, v in function.items() if k not in FUNCTION_FIELDS}
            if extras:
                self.hint("tools", str(i), extras)
            params = self.r.opt_obj(function.get("parameters"), f"{where}.function.parameters")
            out.append(
                ir.Tool(
                    name=self.r.str_(function.get("name"), f"{where}.function.name"),
                    description=self.r.opt_str(function.get("description"), f"{where}.function.description"),
                    parameters=params if params is not None else {"type": "object", "properties": {}},
                )
            )
        return out

    def tool_choice(self, value: Any, raw_fields: JSONDict) -> ir.ToolChoice | None:
        """`tool_choice`: a mode string or a named function; other shapes are kept raw."""
        if value is None:
            return None
        modes: dict[str, ir.ToolChoice] = {
            "auto": ir.ToolChoiceAuto(),
            "none": ir.ToolChoiceNone(),
            "required": ir.ToolChoiceRequired(),
        }
        if isinstance(value, str) and value in modes:
            return modes[value]
        if isinstance(value, dict) and value.get("type") == "function" and isinstance(value.get("function"), dict):
            return ir.ToolChoiceTool(name=self.r.str_(value["function"].get("name"), "tool_choice.function.name"))
        raw_fields["tool_choice"] = value  # e.g. {"type": "allowed_tools", ...}: no IR equivalent
        return None

    def response_format(self, value: Any) -> ir.ResponseFormat | None:
        """`response_format`: text, json_object or json_schema."""
        spec = self.r.opt_obj(value, "response_format")
        if spec is None:
            return None
        kind = spec.get("type")
        if kind == "text":
            return ir.ResponseFormatText()
        if kind == "json_object":
            return ir.ResponseFormatJsonObject()
        if kind != "json_schema":
            self.r.fail("response_format.type", f"unsupported response format {kind!r}")
        inner = self.r.obj(spec.get("json_schema"), "response_format.json_schema")
        extras = {k: v for k, v in inner.items() if k not in JSON_SCHEMA_FIELDS}
        if extras:
            self.shape["json_schema"] = extras
        return ir.ResponseFormatJsonSchema(
            name=self.r.str_(inner.get("name", "response"), "response_format.json_schema.name"),
            schema_=self.r.opt_obj(inner.get("schema"), "response_format.json_schema.schema") or {},
            strict=self.r.opt_bool(inner.get("strict"), "response_format.json_schema.strict"),
        )

    def max_tokens(self, body: JSONDict, raw_fields: JSONDict) -> int | None:
        """`max_completion_tokens` or the older `max_tokens`; which one the client used is remembered."""
        field = "max_completion_tokens" if body.get("max_completion_tokens") is not None else "max_tokens"
        other = "max_tokens" if field == "max_completion_tokens" else "max_completion_tokens"
        if other in body:
            raw_fields[other] = body[other]
        value = self.r.opt_int(body.get(field), field)
        if value is not None and field != self.profile.max_tokens_field:
            self.shape["max_tokens_field"] = field
        return value

    def stop(self, value: Any) -> list[str]:
        """`stop`: a string or an array of strings."""
        if value is None:
            return []
        if isinstance(value, str):
            self.shape["stop_string"] = True
            return [value]
        return [self.r.str_(s, f"stop[{i}]") for i, s in enumerate(self.r.lst(value, "stop"))]

    def thinking(self, raw_fields: JSONDict) -> ir.ThinkingConfig | None:
        """`reasoning_effort` as IR thinking settings (enabled unless `none`; the wire has no budget). The level
        is remembered when re-encoding the settings would not give it back (`minimal`, `xhigh`, ...)."""
        if not self.profile.reasoning_effort or "reasoning_effort" not in raw_fields:
            return None
        effort = self.r.opt_str(raw_fields.pop("reasoning_effort"), "reasoning_effort")
        if effort is None:
            return None
        config = ir.ThinkingConfig(enabled=effort != "none")
        if reasoning_effort(config) != effort:
            self.shape["reasoning_effort"] = effort
        return config

    def stream_options(self, body: JSONDict, stream: bool) -> None:
        """Remember `stream_options` when it differs from what the encoder sends by default."""
        default = {"include_usage": True} if stream and self.profile.sends_stream_options else None
        actual = body.get("stream_options")
        if actual != default:
            self.shape["stream_options"] = actual


def _model(d: _RequestDecoder, req: JSONDict, path_model: str | None) -> str:
    """The model: the body's `model`, or the deployment named in the path (Azure), which wins when both are
    given because it is what the service routes by. How the body differed is remembered for re-encoding."""
    if path_model is None:
        return d.r.str_(req.get("model"), "model")
    body_model = d.r.opt_str(req.get("model"), "model")
    if body_model != path_model:
        d.shape["body_model"] = body_model
    return path_model


def decode_request(
    profile: Profile, body: bytes, *, path_model: str | None = None, query: dict[str, str] | None = None
) -> ir.Request:
    """A Chat Completions request body -> IR request. `path_model` is the model named by the URL path (Azure
    deployments); `query` the request's query parameters, remembered when they differ from the profile's."""
    d = _RequestDecoder(profile)
    req = common.load_object(profile.name, body, what="request body")
    raw_fields: JSONDict = {k: v for k, v in req.items() if k not in MAPPED_FIELDS}
    stream = d.r.opt_bool(req.get("stream"), "stream") or False
    system, messages = d.messages(d.r.lst(req.get("messages"), "messages"))
    if query is not None and profile.query and query != dict(profile.query):
        d.shape["query"] = query
    request = ir.Request(
        model=_model(d, req, path_model),
        system=system,
        messages=messages,
        tools=d.tools(d.r.opt_lst(req.get("tools"), "tools")),
        tool_choice=d.tool_choice(req.get("tool_choice"), raw_fields),
        parallel_tool_calls=d.r.opt_bool(req.get("parallel_tool_calls"), "parallel_tool_calls"),
        temperature=d.r.opt_float(req.get("temperature"), "temperature"),
        top_p=d.r.opt_float(req.get("top_p"), "top_p"),
        max_tokens=d.max_tokens(req, raw_fields),
        stop=d.stop(req.get("stop")),
        response_format=d.response_format(req.get("response_format")),
        stream=stream,
        thinking=d.thinking(raw_fields),
    )
    d.stream_options(req, stream)
    if "developer" in d.system_roles:
        d.shape["system_roles"] = d.system_roles
    if d.shape:
        raw_fields[SHAPE] = d.shape
    if raw_fields:
        request = request.model_copy(update={"provider_fields": {profile.name: raw_fields}})
    return request
