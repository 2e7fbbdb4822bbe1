"""Workers AI native requests (`POST .../ai/run/{model}`): JSON <-> IR.

Written from the text-generation input schema Cloudflare documents per model (e.g. llama-3.3-70b-instruct-fp8-fast):
`messages` (or a bare `prompt`), `stream`, `max_tokens`, `temperature`, `top_p`, `tools`, `response_format`, and
sampling knobs with no IR meaning (`top_k`, `seed`, `repetition_penalty`, `frequency_penalty`,
`presence_penalty`, `raw`, `lora`, `chat_template_kwargs`, ...), which go to `provider_fields["cloudflare"]`.
- The model is in the path (see `paths`); a body `model` is ignored by Cloudflare and kept raw here.
- `tools` come in two shapes: OpenAI's `{"type": "function", "function": {...}}` (what the encoder writes) and
  the older flat `{"name", "description", "parameters"}`.
- `response_format`: `{"type": "json_object"}`, or `{"type": "json_schema", "json_schema": SCHEMA}` with the bare
  schema (JSON mode); newer models also accept OpenAI's `{"name", "schema", "strict"}` wrapper, which is read.
- Messages are OpenAI-shaped: `content` a string or an array of `text` / `image_url` parts; assistant
  `tool_calls` (OpenAI form, or the flat `{"name", "arguments"}` the legacy models return); tool results
  `{"role": "tool", "content", "tool_call_id"?, "name"?}`. A result without an id answers the earliest
  unanswered call of the same name.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.cloudflare import paths
from harness.protocols.cloudflare.paths import PROTOCOL, READ
from harness.wire.http import HttpRequest

_KNOWN = frozenset({"messages", "prompt", "stream", "max_tokens", "temperature", "top_p", "tools", "response_format"})
_ROLES = frozenset({"system", "user", "assistant", "tool"})
ACCOUNT_FIELD = "account_id"
"""`provider_fields["cloudflare"]` key of a request's account id (kept only when it is not the placeholder)."""


def decode_request(request: HttpRequest) -> ir.Request:
    """A native Workers AI request -> IR."""
    body = common.load_object(PROTOCOL, request.body, what="request body")
    extra: dict[str, Any] = {k: v for k, v in body.items() if k not in _KNOWN}
    if request.path:
        account, model = paths.parse(request.path)
    else:  # a bare body (`conformance decode` of a raw file): only a body `model` can name it
        account, model = paths.ACCOUNT_PLACEHOLDER, extra.pop("model", None)
        if not isinstance(model, str):
            raise READ.error("a bare request body names no model (it is in the request path)")
    if account != paths.ACCOUNT_PLACEHOLDER:
        extra[ACCOUNT_FIELD] = account
    messages = _decode_messages(body)
    system = None
    if messages and messages[0].role == "system" and all(isinstance(p, ir.TextPart) for p in messages[0].content):
        system = "".join(p.text for p in messages[0].content if isinstance(p, ir.TextPart))
        messages = messages[1:]
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise READ.error(f"request.stream is {type(stream).__name__}, expected a boolean")
    return ir.Request(
        model=model,
        system=system,
        messages=messages,
        tools=[_decode_tool(t, f"request.tools[{i}]") for i, t in enumerate(READ.get_list(body, "tools", "request"))],
        temperature=READ.get_float(body, "temperature", "request"),
        top_p=READ.get_float(body, "top_p", "request"),
        max_tokens=READ.get_count(body, "max_tokens", "request"),
        response_format=_decode_format(READ.get_obj(body, "response_format", "request")),
        stream=stream,
        provider_fields={PROTOCOL: extra} if extra else {},
    )


def _decode_messages(body: dict[str, Any]) -> list[ir.Message]:
    prompt = READ.get_str(body, "prompt", "request")
    if "messages" not in body and prompt is not None:
        return [ir.Message(role="user", content=[ir.TextPart(text=prompt)])]
    out: list[ir.Message] = []
    pending: list[ir.ToolCallPart] = []
    for i, value in enumerate(READ.get_list(body, "messages", "request")):
        where = f"request.messages[{i}]"
        msg = READ.as_obj(value, where)
        role = READ.get_str(msg, "role", where)
        if role not in _ROLES:
            raise READ.error(f"{where}.role is {role!r}, expected one of {sorted(_ROLES)}")
        if role == "tool":
            out.append(ir.Message(role="tool", content=[_decode_result(msg, where, pending)]))
            continue
        parts = _decode_content(msg.get("content"), where)
        calls = [
            decode_call(c, j, f"{where}.tool_calls[{j}]") for j, c in enumerate(READ.get_list(msg, "tool_calls", where))
        ]
        if role == "assistant":
            pending = list(calls)
        out.append(ir.Message(role=role, content=[*parts, *calls]))
    return out


def _decode_content(value: Any, where: str) -> list[ir.ContentPart]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [ir.TextPart(text=value)]
    if not isinstance(value, list):
        raise READ.error(f"{where}.content is {type(value).__name__}, expected a string or an array")
    parts: list[ir.ContentPart] = []
    for j, item in enumerate(value):
        part = READ.as_obj(item, f"{where}.content[{j}]")
        kind = READ.get_str(part, "type", f"{where}.content[{j}]")
        if kind == "text":
            parts.append(ir.TextPart(text=READ.get_str(part, "text", f"{where}.content[{j}]") or ""))
        elif kind == "image_url":
            image = READ.get_obj(part, "image_url", f"{where}.content[{j}]") or {}
            url = READ.get_str(image, "url", f"{where}.content[{j}].image_url")
            if url is None:
                raise READ.error(f"{where}.content[{j}].image_url has no url")
            parts.append(ir.ImagePart(source=_image_source(url)))
        else:
            raise READ.error(f"{where}.content[{j}].type is {kind!r}, expected text or image_url")
    return parts


def _image_source(url: str) -> ir.ImageSource:
    if url.startswith("data:") and ";base64," in url:
        head, _, data = url.partition(";base64,")
        return ir.Base64Image(media_type=head.removeprefix("data:"), data=data)
    return ir.UrlImage(url=url)


def decode_call(value: Any, ordinal: int, where: str) -> ir.ToolCallPart:
    """One tool call: OpenAI's `{id?, type, function: {name, arguments}}` or the flat `{name, arguments}`."""
    call = READ.as_obj(value, where)
    function = READ.get_obj(call, "function", where) or call
    name = READ.get_str(function, "name", where)
    if name is None:
        raise READ.error(f"{where} has no name")
    arguments = function.get("arguments")
    raw = arguments if isinstance(arguments, str) else common.dump_text({} if arguments is None else arguments)
    parsed = common.parse_arguments(raw)
    call_id = READ.get_str(call, "id", where) or call_id_for(ordinal, name, raw)
    return ir.ToolCallPart(id=call_id, name=name, arguments=parsed, arguments_raw=raw)


def call_id_for(ordinal: int, name: str, raw: str) -> str:
    """The id of a tool call that came without one: deterministic from its position, name and arguments."""
    return common.synth_tool_id("call_", ordinal, name, raw)


def _decode_result(msg: dict[str, Any], where: str, pending: list[ir.ToolCallPart]) -> ir.ToolResultPart:
    name = READ.get_str(msg, "name", where)
    call_id = READ.get_str(msg, "tool_call_id", where)
    match = next((c for c in pending if c.id == call_id or (call_id is None and name in (None, c.name))), None)
    if match is not None:
        pending.remove(match)
    if call_id is None:
        call_id = match.id if match is not None else common.synth_tool_id("call_", where, name or "")
    content = [p for p in _decode_content(msg.get("content"), where) if isinstance(p, ir.TextPart | ir.ImagePart)]
    return ir.ToolResultPart(tool_call_id=call_id, name=name, content=content)


def _decode_tool(value: Any, where: str) -> ir.Tool:
    tool = READ.as_obj(value, where)
    function = READ.get_obj(tool, "function", where) or tool
    name = READ.get_str(function, "name", where)
    if name is None:
        raise READ.error(f"{where} has no name")
    parameters = READ.get_obj(function, "parameters", where)
    description = READ.get_str(function, "description", where)
    if parameters is None:
        return ir.Tool(name=name, description=description)
    return ir.Tool(name=name, description=description, parameters=parameters)


def _decode_format(value: dict[str, Any] | None) -> ir.ResponseFormat | None:
    if value is None:
        return None
    kind = READ.get_str(value, "type", "request.response_format")
    if kind == "text":
        return ir.ResponseFormatText()
    if kind == "json_object":
        return ir.ResponseFormatJsonObject()
    if kind != "json_schema":
        raise READ.error(f"request.response_format.type is {kind!r}, expected json_object or json_schema")
    schema = READ.get_obj(value, "json_schema", "request.response_format") or {}
    wrapped = READ.get_obj(schema, "schema", "request.response_format.json_schema")
    if wrapped is not None and ("name" in schema or "strict" in schema):
        strict = schema.get("strict")
        return ir.ResponseFormatJsonSchema(
            name=READ.get_str(schema, "name", "request.response_format.json_schema") or "response",
            schema_=wrapped,
            strict=strict if isinstance(strict, bool) else None,
        )
    return ir.ResponseFormatJsonSchema(schema_=schema)


def encode_request(request: ir.Request) -> HttpRequest:
    """IR -> the native request a REST client sends (the model and account in the path, no auth)."""
    extra = dict(request.provider_fields.get(PROTOCOL, {}))
    account = extra.pop(ACCOUNT_FIELD, None)
    body: dict[str, Any] = {"messages": _encode_messages(request)}
    if request.tools:
        body["tools"] = [_encode_tool(t) for t in request.tools]
    optional = {
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "top_p": request.top_p,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    if request.response_format is not None and not isinstance(request.response_format, ir.ResponseFormatText):
        body["response_format"] = _encode_format(request.response_format)
    body["stream"] = request.stream
    body.update(extra)
    headers = {"content-type": "application/json"}
    if request.stream:
        headers["accept"] = "text/event-stream"
    path = paths.build(request.model, account if isinstance(account, str) else None)
    return HttpRequest(method="POST", path=path, headers=headers, body=common.dump_json(body))


def _encode_format(fmt: ir.ResponseFormat) -> dict[str, Any]:
    if isinstance(fmt, ir.ResponseFormatJsonSchema):
        return {"type": "json_schema", "json_schema": fmt.schema_}
    return {"type": "json_object"}


def _encode_tool(tool: ir.Tool) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        function["description"] = tool.description
    function["parameters"] = tool.parameters
    return {"type": "function", "function": function}


def _encode_messages(request: ir.Request) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if request.system is not None:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        group: list[ir.ContentPart] = []
        for part in message.content:
            if isinstance(part, ir.ToolResultPart):
                if group:
                    out.append(_encode_message(message.role, group))
                    group = []
                out.append(_encode_result(part))
            elif not isinstance(part, ir.ThinkingPart | ir.RedactedThinkingPart):  # no request field for them
                group.append(part)
        if group or not message.content:
            out.append(_encode_message(message.role, group))
    return out


def _encode_message(role: str, parts: list[ir.ContentPart]) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": role, "content": _encode_content(parts)}
    calls = [p for p in parts if isinstance(p, ir.ToolCallPart)]
    if calls:
        msg["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_raw}} for c in calls
        ]
    return msg


def _encode_content(parts: list[Any]) -> str | list[dict[str, Any]]:
    if not any(isinstance(p, ir.ImagePart) for p in parts):
        return "".join(p.text for p in parts if isinstance(p, ir.TextPart))
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ir.TextPart):
            out.append({"type": "text", "text": part.text})
        elif isinstance(part, ir.ImagePart):
            source = part.source
            url = f"data:{source.media_type};base64,{source.data}" if isinstance(source, ir.Base64Image) else source.url
            out.append({"type": "image_url", "image_url": {"url": url}})
    return out


def _encode_result(part: ir.ToolResultPart) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "role": "tool",
        "content": _encode_content(list(part.content)),
        "tool_call_id": part.tool_call_id,
    }
    if part.name is not None:
        msg["name"] = part.name
    return msg
