"""`POST /api/chat` requests: Ollama JSON <-> IR.

Ollama specifics handled here:
- `stream` defaults to true when absent.
- `options` carries temperature, top_p, num_predict (-> max_tokens) and stop; every other option, and every
  top-level field without an IR equivalent (keep_alive, logprobs, a `think` level string, ...), goes to
  `provider_fields["ollama"]` and is written back by the encoder.
- `format`: "" -> text, "json" -> json_object, an object -> json_schema.
- `think`: true/false -> ThinkingConfig(enabled); a level ("low"/"medium"/"high") -> enabled, level kept.
- A message has one `content` string plus `images`, `thinking` and `tool_calls` fields; tool results are
  `{"role": "tool", "content", "tool_name", "tool_call_id"?}`. A result without `tool_call_id` (older
  Ollama) answers the earliest unanswered call of the same name in the previous assistant turn.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.ollama._fields import PROTOCOL, READ, decode_tool_call, encode_tool_call
from harness.protocols.ollama.images import sniff_media_type
from harness.wire.http import HttpRequest

CHAT_PATH = "/api/chat"
"""Path of the chat endpoint."""

TEXT_JOINER = "\n"
"""Separator used when several IR text parts must share one Ollama `content` string."""

_TOP_LEVEL = frozenset({"model", "messages", "tools", "stream", "format", "options", "think"})
_IR_OPTIONS = frozenset({"temperature", "top_p", "num_predict", "stop"})
_ROLES = frozenset({"system", "user", "assistant", "tool"})


def decode_request(request: HttpRequest) -> ir.Request:
    """An Ollama `/api/chat` request -> IR."""
    if request.path and not request.path.endswith(CHAT_PATH):
        raise READ.error(f"not a chat request: {request.method} {request.path}")
    body = common.load_object(PROTOCOL, request.body, what="request body")
    model = READ.get_str(body, "model", "request")
    if model is None:
        raise READ.error("request has no model")
    messages = _decode_messages(READ.get_list(body, "messages", "request"))
    system = None
    if messages and messages[0].role == "system" and all(p.kind == "text" for p in messages[0].content):
        system = "".join(p.text for p in messages[0].content if isinstance(p, ir.TextPart))
        messages = messages[1:]
    options = READ.get_obj(body, "options", "request") or {}
    extra: dict[str, Any] = {k: v for k, v in body.items() if k not in _TOP_LEVEL}
    extra_options = {k: v for k, v in options.items() if k not in _IR_OPTIONS}
    if extra_options:
        extra["options"] = extra_options
    thinking, level = _decode_think(body.get("think"))
    if level is not None:
        extra["think"] = level
    stream = body.get("stream", True)
    if not isinstance(stream, bool):
        raise READ.error(f"request.stream is {type(stream).__name__}, expected a boolean")
    return ir.Request(
        model=model,
        system=system,
        messages=messages,
        tools=[_decode_tool(t, i) for i, t in enumerate(READ.get_list(body, "tools", "request"))],
        temperature=READ.get_float(options, "temperature", "request.options"),
        top_p=READ.get_float(options, "top_p", "request.options"),
        max_tokens=READ.get_int(options, "num_predict", "request.options"),
        stop=_decode_stop(options.get("stop")),
        response_format=_decode_format(body.get("format")),
        stream=stream,
        thinking=thinking,
        provider_fields={PROTOCOL: extra} if extra else {},
    )


def _decode_stop(value: Any) -> list[str]:
    if value is None:
        return []
    # Ollama also accepts a single string here.
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
        raise READ.error("request.options.stop is not a list of strings")
    return list(items)


def _decode_think(value: Any) -> tuple[ir.ThinkingConfig | None, str | None]:
    if value is None:
        return None, None
    if isinstance(value, bool):
        return ir.ThinkingConfig(enabled=value), None
    if isinstance(value, str):
        return ir.ThinkingConfig(enabled=True), value
    raise READ.error(f"request.think is {type(value).__name__}, expected a boolean or a level string")


def _decode_format(value: Any) -> ir.ResponseFormat | None:
    if value is None:
        return None
    if value == "":
        return ir.ResponseFormatText()
    if value == "json":
        return ir.ResponseFormatJsonObject()
    if isinstance(value, dict):
        return ir.ResponseFormatJsonSchema(schema_=value)
    raise READ.error(f'request.format is {value!r}, expected "json" or a JSON Schema object')


def _decode_tool(value: Any, i: int) -> ir.Tool:
    where = f"request.tools[{i}]"
    tool = READ.as_obj(value, where)
    function = READ.get_obj(tool, "function", where)
    if function is None:
        raise READ.error(f"{where} has no function")
    name = READ.get_str(function, "name", f"{where}.function")
    if name is None:
        raise READ.error(f"{where}.function has no name")
    parameters = READ.get_obj(function, "parameters", f"{where}.function")
    description = READ.get_str(function, "description", f"{where}.function")
    if parameters is None:
        return ir.Tool(name=name, description=description)
    return ir.Tool(name=name, description=description, parameters=parameters)


def _decode_messages(values: list[Any]) -> list[ir.Message]:
    out: list[ir.Message] = []
    pending: list[ir.ToolCallPart] = []  # calls of the last assistant turn not yet answered
    for i, value in enumerate(values):
        where = f"request.messages[{i}]"
        msg = READ.as_obj(value, where)
        role = (READ.get_str(msg, "role", where) or "").lower()
        if role not in _ROLES:
            raise READ.error(f"{where}.role is {role!r}, expected one of {sorted(_ROLES)}")
        content = READ.get_str(msg, "content", where, "") or ""
        images = [_decode_image(v, f"{where}.images[{j}]") for j, v in enumerate(READ.get_list(msg, "images", where))]
        if role == "tool":
            out.append(ir.Message(role="tool", content=[_decode_tool_result(msg, where, content, images, pending)]))
            continue
        parts: list[ir.ContentPart] = []
        thinking = READ.get_str(msg, "thinking", where)
        if thinking:
            parts.append(ir.ThinkingPart(text=thinking))
        if content:
            parts.append(ir.TextPart(text=content))
        parts += images
        calls = [
            decode_tool_call(c, j, f"{where}.tool_calls[{j}]")
            for j, c in enumerate(READ.get_list(msg, "tool_calls", where))
        ]
        parts += calls
        if role == "assistant":
            pending = list(calls)
        out.append(ir.Message(role=role, content=parts))
    return out


def _decode_image(value: Any, where: str) -> ir.ImagePart:
    if not isinstance(value, str):
        raise READ.error(f"{where} is {type(value).__name__}, expected a base64 string")
    return ir.ImagePart(source=ir.Base64Image(media_type=sniff_media_type(value), data=value))


def _decode_tool_result(
    msg: dict[str, Any], where: str, content: str, images: list[ir.ImagePart], pending: list[ir.ToolCallPart]
) -> ir.ToolResultPart:
    name = READ.get_str(msg, "tool_name", where)
    call_id = READ.get_str(msg, "tool_call_id", where)
    match = next((c for c in pending if c.id == call_id or (call_id is None and name in (None, c.name))), None)
    if match is not None:
        pending.remove(match)
    if call_id is None:
        call_id = match.id if match is not None else common.synth_tool_id("call_", where, name or "")
    parts: list[ir.TextPart | ir.ImagePart] = [ir.TextPart(text=content)] if content else []
    return ir.ToolResultPart(tool_call_id=call_id, name=name, content=parts + images)


def encode_request(request: ir.Request) -> HttpRequest:
    """IR -> an Ollama `/api/chat` request (stream flag always explicit)."""
    extra = dict(request.provider_fields.get(PROTOCOL, {}))
    body: dict[str, Any] = {"model": request.model, "messages": _encode_messages(request)}
    if request.tools:
        body["tools"] = [_encode_tool(t) for t in request.tools]
    body["stream"] = request.stream
    if request.response_format is not None:
        body["format"] = _encode_format(request.response_format)
    if request.thinking is not None:
        body["think"] = request.thinking.enabled
    options: dict[str, Any] = {}
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.top_p is not None:
        options["top_p"] = request.top_p
    if request.max_tokens is not None:
        options["num_predict"] = request.max_tokens
    if request.stop:
        options["stop"] = list(request.stop)
    extra_options = extra.pop("options", None)
    if isinstance(extra_options, dict):
        options.update(extra_options)
    if options:
        body["options"] = options
    # Provider fields last: a `think` level string overrides the boolean derived from ThinkingConfig.
    body.update(extra)
    return HttpRequest(
        method="POST",
        path=CHAT_PATH,
        headers={"content-type": "application/json", "accept": "application/x-ndjson"},
        body=common.dump_json(body),
    )


def _encode_format(fmt: ir.ResponseFormat) -> Any:
    if isinstance(fmt, ir.ResponseFormatJsonSchema):
        return fmt.schema_
    return "json" if isinstance(fmt, ir.ResponseFormatJsonObject) else ""


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
            # Each tool result is its own Ollama message; the parts around it keep the message's role.
            if isinstance(part, ir.ToolResultPart):
                if group:
                    out.append(_encode_message(message.role, group))
                    group = []
                out.append(_encode_tool_result(part))
            else:
                group.append(part)
        if group or not message.content:
            out.append(_encode_message(message.role, group))
    return out


def _encode_message(role: str, parts: list[ir.ContentPart]) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "role": role,
        "content": TEXT_JOINER.join(p.text for p in parts if isinstance(p, ir.TextPart)),
    }
    thinking = [p.text for p in parts if isinstance(p, ir.ThinkingPart)]
    if thinking:
        msg["thinking"] = TEXT_JOINER.join(thinking)
    images = _encode_images(p for p in parts if isinstance(p, ir.ImagePart))
    if images:
        msg["images"] = images
    calls = [encode_tool_call(p) for p in parts if isinstance(p, ir.ToolCallPart)]
    if calls:
        msg["tool_calls"] = calls
    return msg


def _encode_images(parts: Any) -> list[str]:
    # URL images have no Ollama form (see the codec's losses); only inline bytes are sent.
    return [p.source.data for p in parts if isinstance(p.source, ir.Base64Image)]


def _encode_tool_result(part: ir.ToolResultPart) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "role": "tool",
        "content": TEXT_JOINER.join(p.text for p in part.content if isinstance(p, ir.TextPart)),
    }
    if part.name is not None:
        msg["tool_name"] = part.name
    msg["tool_call_id"] = part.tool_call_id
    images = _encode_images(p for p in part.content if isinstance(p, ir.ImagePart))
    if images:
        msg["images"] = images
    return msg
