"""`POST /v1/stream` requests: swink JSON <-> IR.

Written from `ProxyRequest` in swink-agent's `adapters/src/proxy.rs` and the message types of `src/types/mod.rs`:
`{"model", "system", "messages": [LlmMessage], "options": {"temperature"?, "max_tokens"?, "session_id"?}}`.
- `system` is always a string; "" means no system prompt.
- `messages` are `LlmMessage`s tagged by `role`: `user` (`content`, `timestamp`), `assistant` (`content`,
  `provider`, `model_id`, `usage`, `cost`, `stop_reason`, `error_message`, `timestamp`) and `tool_result`
  (`tool_call_id`, `content`, `is_error`, `timestamp`, `details`). Content blocks are tagged by `type`: `text`,
  `thinking` (`thinking`, `signature`), `tool_call` (`id`, `name`, `arguments` as a JSON value, `partial_json`),
  `image` (`source`: `base64` / `url` / `file`), `extension`.
- There are no tools, tool_choice, stop sequences, response format or thinking switch in the request: the proxy
  server owns them. There is no `stream` flag either: the answer is always a stream.
- The assistant turn's bookkeeping (provider, model_id, usage, cost, stop_reason, timestamps) has no IR form; the
  decoder drops it and the encoder writes neutral values (zero usage and cost, timestamp 0).
- `options.session_id` and any field without an IR meaning go to `provider_fields["swink"]`.
"""

from __future__ import annotations

import mimetypes
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.swink.events import PROTOCOL, READ, STREAM_PATH
from harness.wire.http import HttpRequest

TOP_LEVEL = frozenset({"model", "system", "messages", "options"})
_IR_OPTIONS = frozenset({"temperature", "max_tokens"})
ZERO_USAGE: dict[str, int] = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "total": 0}
"""swink's `Usage` with every counter zero (all five fields are required by its deserializer)."""
ZERO_COST: dict[str, float] = {"input": 0.0, "output": 0.0, "cache_read": 0.0, "cache_write": 0.0, "total": 0.0}
"""swink's `Cost` with every figure zero."""


def decode_request(request: HttpRequest) -> ir.Request:
    """A swink `/v1/stream` request -> IR (always a streamed request)."""
    if request.path and not request.path.endswith(STREAM_PATH):
        raise READ.error(f"not a stream request: {request.method} {request.path}")
    body = common.load_object(PROTOCOL, request.body, what="request body")
    model = READ.need_str(body, "model", "request")
    system = READ.get_str(body, "system", "request")
    options = READ.get_obj(body, "options", "request") or {}
    extra: dict[str, Any] = {k: v for k, v in body.items() if k not in TOP_LEVEL}
    extra_options = {k: v for k, v in options.items() if k not in _IR_OPTIONS}
    if "session_id" in extra_options:
        extra["session_id"] = extra_options.pop("session_id")
    if extra_options:
        extra["options"] = extra_options
    return ir.Request(
        model=model,
        system=system or None,
        messages=[
            _decode_message(m, f"request.messages[{i}]")
            for i, m in enumerate(READ.get_list(body, "messages", "request"))
        ],
        temperature=READ.get_float(options, "temperature", "request.options"),
        max_tokens=READ.get_count(options, "max_tokens", "request.options"),
        stream=True,
        provider_fields={PROTOCOL: extra} if extra else {},
    )


def _decode_message(value: Any, where: str) -> ir.Message:
    msg = READ.as_obj(value, where)
    role = READ.need_str(msg, "role", where)
    blocks = [_decode_block(b, f"{where}.content[{j}]") for j, b in enumerate(READ.get_list(msg, "content", where))]
    if role == "user":
        return ir.Message(role="user", content=blocks)
    if role == "assistant":
        return ir.Message(role="assistant", content=blocks)
    if role == "tool_result":
        results: list[ir.TextPart | ir.ImagePart] = []
        for block in blocks:
            if not isinstance(block, ir.TextPart | ir.ImagePart):
                raise READ.error(f"{where}.content holds a {block.kind} block; a tool result carries text and images")
            results.append(block)
        is_error = msg.get("is_error", False)
        if not isinstance(is_error, bool):
            raise READ.error(f"{where}.is_error is {type(is_error).__name__}, expected a boolean")
        call_id = READ.need_str(msg, "tool_call_id", where)
        return ir.Message(
            role="tool", content=[ir.ToolResultPart(tool_call_id=call_id, content=results, is_error=is_error)]
        )
    raise READ.error(f"{where}.role is {role!r}, expected user, assistant or tool_result")


def _decode_block(value: Any, where: str) -> ir.ContentPart:
    block = READ.as_obj(value, where)
    kind = READ.need_str(block, "type", where)
    if kind == "text":
        return ir.TextPart(text=READ.need_str(block, "text", where))
    if kind == "thinking":
        return ir.ThinkingPart(
            text=READ.need_str(block, "thinking", where), signature=READ.get_str(block, "signature", where)
        )
    if kind == "tool_call":
        arguments = block.get("arguments")
        partial = READ.get_str(block, "partial_json", where)
        raw = partial if arguments is None and partial is not None else common.dump_text(arguments)
        parsed = arguments if arguments is not None else common.parse_arguments(raw)
        return ir.ToolCallPart(
            id=READ.need_str(block, "id", where),
            name=READ.need_str(block, "name", where),
            arguments=parsed,
            arguments_raw=raw,
        )
    if kind == "image":
        return ir.ImagePart(source=_decode_source(READ.get_obj(block, "source", where), f"{where}.source"))
    # `extension` blocks are plugin data with no IR form; saying so beats dropping them unseen.
    raise READ.error(f"{where}.type is {kind!r}, which has no IR form (text, thinking, tool_call and image do)")


def _decode_source(source: dict[str, Any] | None, where: str) -> ir.ImageSource:
    if source is None:
        raise READ.error(f"{where} is missing")
    kind = READ.need_str(source, "type", where)
    if kind == "base64":
        return ir.Base64Image(
            media_type=READ.need_str(source, "media_type", where), data=READ.need_str(source, "data", where)
        )
    if kind == "url":
        return ir.UrlImage(url=READ.need_str(source, "url", where))
    raise READ.error(f"{where}.type is {kind!r}: a path on the client's disk cannot be sent on (base64 and url can)")


def encode_request(request: ir.Request) -> HttpRequest:
    """IR -> the `/v1/stream` request `ProxyStreamFn` sends (no auth)."""
    extra = dict(request.provider_fields.get(PROTOCOL, {}))
    options: dict[str, Any] = {}
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.max_tokens is not None:
        options["max_tokens"] = request.max_tokens
    if "session_id" in extra:
        options["session_id"] = extra.pop("session_id")
    extra_options = extra.pop("options", None)
    if isinstance(extra_options, dict):
        options.update(extra_options)
    body: dict[str, Any] = {
        "model": request.model,
        "system": request.system or "",
        "messages": [m for message in request.messages for m in _encode_message(message, request.model)],
        "options": options,
    }
    body.update(extra)
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    return HttpRequest(method="POST", path=STREAM_PATH, headers=headers, body=common.dump_json(body))


def _encode_message(message: ir.Message, model: str) -> list[dict[str, Any]]:
    if message.role == "system":
        raise ValueError("swink: messages have no system role; only the leading system prompt can be sent")
    out: list[dict[str, Any]] = []
    group: list[dict[str, Any]] = []
    role = "assistant" if message.role == "assistant" else "user"
    for part in message.content:
        if isinstance(part, ir.ToolResultPart):
            if group:
                out.append(_turn(role, group, model))
                group = []
            out.append(_tool_result(part))
        elif isinstance(part, ir.RedactedThinkingPart | ir.FilePart):
            continue  # no swink block carries it (see the losses table)
        else:
            group.append(_encode_block(part, role))
    if group or (not message.content and message.role != "tool"):
        out.append(_turn(role, group, model))
    return out


def _turn(role: str, blocks: list[dict[str, Any]], model: str) -> dict[str, Any]:
    if role == "user":
        return {"role": "user", "content": blocks, "timestamp": 0}
    calls = any(b["type"] == "tool_call" for b in blocks)
    return {
        "role": "assistant",
        "content": blocks,
        "provider": "",
        "model_id": model,
        "usage": dict(ZERO_USAGE),
        "cost": dict(ZERO_COST),
        "stop_reason": "tool_use" if calls else "stop",
        "error_message": None,
        "timestamp": 0,
    }


def _tool_result(part: ir.ToolResultPart) -> dict[str, Any]:
    return {
        "role": "tool_result",
        "tool_call_id": part.tool_call_id,
        "content": [_encode_block(p, "tool_result") for p in part.content],
        "is_error": part.is_error,
        "timestamp": 0,
        "details": None,
    }


def _encode_block(part: ir.ContentPart, role: str) -> dict[str, Any]:
    if isinstance(part, ir.TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ir.ImagePart) and role != "assistant":
        return {"type": "image", "source": _encode_source(part.source)}
    if isinstance(part, ir.ThinkingPart) and role == "assistant":
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    if isinstance(part, ir.ToolCallPart) and role == "assistant":
        arguments = part.arguments if part.arguments is not None else common.parse_arguments(part.arguments_raw)
        partial = None if arguments is not None else part.arguments_raw
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": arguments, "partial_json": partial}
    raise ValueError(f"swink: a {role} message cannot carry a {part.kind} block")


def _encode_source(source: ir.ImageSource) -> dict[str, Any]:
    if isinstance(source, ir.Base64Image):
        return {"type": "base64", "media_type": source.media_type, "data": source.data}
    # swink's url source needs a media type the IR does not keep: guessed from the URL's extension.
    media_type = mimetypes.guess_type(source.url)[0] or "application/octet-stream"
    return {"type": "url", "url": source.url, "media_type": media_type}
