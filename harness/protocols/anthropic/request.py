"""Messages API requests (`POST /v1/messages`, also `?beta=true`, and `/v1/messages/count_tokens`) <-> IR.

provider_fields["anthropic"] holds wire fields verbatim, under their wire names:
- every top-level field the IR has no place for (metadata, top_k, service_tier, container, cache_control, ...);
- `messages`, `tools`, `system`, `thinking`, `output_format` when the wire form carries more than the IR
  (cache_control, citations, server tools, blocks with no IR part, system as blocks, thinking display, ...);
  the encoder sends such a raw field only while it still decodes to the IR value, so a translation that
  changed the field is never overridden by stale raw data;
- `output_config` without its `format` (which is `Request.response_format`);
- `anthropic-beta`: the request header of that name (hyphenated, so it cannot clash with a body field);
- `anthropic-version`: the client's, when it is not the one the encoder pins (`ANTHROPIC_VERSION`): a proxy
  between an Anthropic client and Anthropic keeps the API version the client chose.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

from harness import ir
from harness.protocols.anthropic.blocks import block_from_part, part_from_block
from harness.protocols.anthropic.mapping import (
    ANTHROPIC_VERSION,
    DEFAULT_MAX_TOKENS,
    NAME,
    READ,
    dumps,
    load_object,
)
from harness.protocols.base import DecodeError
from harness.wire.http import HttpRequest

T = TypeVar("T")

MESSAGES_PATH = "/v1/messages"
BETA_HEADER = "anthropic-beta"
VERSION_HEADER = "anthropic-version"
_HEADERS = (BETA_HEADER, VERSION_HEADER)
"""Request headers kept in `provider_fields` (hyphenated, so they cannot clash with a body field)."""
# Top-level fields the IR carries; everything else goes to provider_fields verbatim.
_KNOWN = frozenset(
    {
        "model",
        "max_tokens",
        "messages",
        "system",
        "stop_sequences",
        "stream",
        "temperature",
        "top_p",
        "tools",
        "tool_choice",
        "thinking",
        "output_config",
        "output_format",
    }
)


# --- decode ---------------------------------------------------------------------------------------------


Role = Literal["user", "assistant", "tool"]


def _role_of(part: ir.ContentPart, wire_role: Role) -> Role:
    return "tool" if isinstance(part, ir.ToolResultPart) else wire_role


def decode_messages(raw: list[Any]) -> list[ir.Message]:
    """Wire messages -> IR messages.

    A user message's tool_result blocks become IR `tool` messages: a wire message is split into runs of
    tool results and of other blocks, in order. Blocks with no IR part are left out (a message keeps its
    place even when nothing of it maps).
    """
    names: dict[str, str] = {}
    out: list[ir.Message] = []
    for i, message in enumerate(raw):
        where = f"messages[{i}]"
        message = READ.as_obj(message, where)
        wire_role = READ.need_str(message, "role", where)
        if wire_role not in ("user", "assistant"):
            raise DecodeError(NAME, f"{where}.role is {wire_role!r}, expected 'user' or 'assistant'")
        role: Role = "user" if wire_role == "user" else "assistant"
        content = message.get("content")
        text = isinstance(content, str)
        blocks = [{"type": "text", "text": content}] if text else READ.need_list(message, "content", where)
        runs: list[ir.Message] = []
        for j, block in enumerate(blocks):
            part = part_from_block(READ.as_obj(block, f"{where}.content[{j}]"), f"{where}.content[{j}]", names)
            if part is None:
                continue
            if isinstance(part, ir.ToolCallPart):
                names[part.id] = part.name
            part_role = _role_of(part, role)
            if runs and runs[-1].role == part_role:
                runs[-1] = runs[-1].model_copy(update={"content": [*runs[-1].content, part]})
            else:
                runs.append(ir.Message(role=part_role, content=[part]))
        out.extend(runs or [ir.Message(role=role, content=[])])
    return out


def decode_tools(raw: list[Any]) -> list[ir.Tool]:
    """Client tools -> IR tools; server tools (web_search, code_execution, ...: a `type`, no input_schema)
    have no IR form and are left out."""
    tools: list[ir.Tool] = []
    for k, tool in enumerate(raw):
        where = f"tools[{k}]"
        tool = READ.as_obj(tool, where)
        if tool.get("type") not in (None, "custom") or "input_schema" not in tool:
            continue
        tools.append(
            ir.Tool(
                name=READ.need_str(tool, "name", where),
                description=READ.get_str(tool, "description", where),
                parameters=READ.need_obj(tool, "input_schema", where),
            )
        )
    return tools


def decode_tool_choice(raw: Any) -> tuple[ir.ToolChoice, bool | None]:
    """Wire tool_choice -> IR tool choice and parallel_tool_calls (from disable_parallel_tool_use)."""
    raw = READ.as_obj(raw, "tool_choice")
    kind = raw.get("type")
    choice: ir.ToolChoice
    if kind == "auto":
        choice = ir.ToolChoiceAuto()
    elif kind == "any":
        choice = ir.ToolChoiceRequired()
    elif kind == "none":
        choice = ir.ToolChoiceNone()
    elif kind == "tool":
        choice = ir.ToolChoiceTool(name=READ.need_str(raw, "name", "tool_choice"))
    else:
        raise DecodeError(NAME, f"tool_choice.type is {kind!r}, expected auto, any, tool or none")
    disable = READ.get_bool(raw, "disable_parallel_tool_use", "tool_choice")
    return choice, None if disable is None else not disable


def decode_thinking(raw: Any) -> ir.ThinkingConfig:
    """Wire thinking -> IR: enabled+budget; adaptive (and between_tools) = enabled without a budget."""
    raw = READ.as_obj(raw, "thinking")
    kind = raw.get("type")
    if kind == "enabled":
        return ir.ThinkingConfig(enabled=True, budget_tokens=READ.need_int(raw, "budget_tokens", "thinking"))
    if kind == "disabled":
        return ir.ThinkingConfig(enabled=False)
    if kind in ("adaptive", "between_tools"):
        return ir.ThinkingConfig(enabled=True)
    raise DecodeError(NAME, f"thinking.type is {kind!r}, expected enabled, disabled or adaptive")


def decode_system(raw: Any) -> str:
    """Wire system (a string, or text blocks joined by a blank line) -> IR system prompt."""
    if isinstance(raw, str):
        return raw
    texts = []
    for j, block in enumerate(READ.as_list(raw, "system")):
        texts.append(READ.need_str(READ.as_obj(block, f"system[{j}]"), "text", f"system[{j}]"))
    return "\n\n".join(texts)


def decode_format(raw: Any, where: str) -> ir.ResponseFormat | None:
    """A structured-output format (`{"type":"json_schema","schema":{..}}`) -> IR response format."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or raw.get("type") != "json_schema":
        raise DecodeError(NAME, f"{where} is {raw!r:.80}, expected a json_schema format")
    return ir.ResponseFormatJsonSchema(schema_=READ.need_obj(raw, "schema", where))


def _stop(body: Mapping[str, Any]) -> list[str]:
    return [READ.as_str(s, f"stop_sequences[{i}]") for i, s in enumerate(READ.get_list(body, "stop_sequences", "body"))]


def _response_format(body: Mapping[str, Any], extra: dict[str, Any]) -> ir.ResponseFormat | None:
    config = READ.get_obj(body, "output_config", "body")
    fmt = None
    if config is not None:
        fmt = decode_format(config.get("format"), "output_config.format")
        rest = {k: v for k, v in config.items() if k != "format"}
        if rest:
            extra["output_config"] = rest
    if body.get("output_format") is not None:  # the structured-outputs beta spelling
        fmt = decode_format(body["output_format"], "output_format")
        extra["output_format"] = body["output_format"]
    return fmt


def _keep_raw(extra: dict[str, Any], key: str, raw: Any, encoded: Any) -> None:
    # Raw wire data is kept only when the canonical encoding of the decoded value would lose something.
    if _canon(raw) != _canon(encoded):
        extra[key] = raw


def decode_request(request: HttpRequest) -> ir.Request:
    """A Messages (or count_tokens) request -> IR; max_tokens may be absent (count_tokens has none)."""
    body = load_object(request.body, what="request body")
    extra: dict[str, Any] = {k: v for k, v in body.items() if k not in _KNOWN}
    messages = decode_messages(READ.need_list(body, "messages", "body"))
    _keep_raw(extra, "messages", body["messages"], encode_messages(messages))
    tools: list[ir.Tool] = []
    if body.get("tools") is not None:
        tools = decode_tools(READ.get_list(body, "tools", "body"))
        _keep_raw(extra, "tools", body["tools"], [_tool(t) for t in tools])
    choice, parallel = decode_tool_choice(body["tool_choice"]) if body.get("tool_choice") is not None else (None, None)
    # `"system": ""` and `"system": []` (Portkey sends the latter) set no system prompt: the IR has none.
    system = decode_system(body["system"]) if body.get("system") is not None else None
    system = system or None
    if system is not None and not isinstance(body["system"], str):
        extra["system"] = body["system"]
    thinking = decode_thinking(body["thinking"]) if body.get("thinking") is not None else None
    if thinking is not None:
        _keep_raw(extra, "thinking", body["thinking"], _thinking(thinking))
    if BETA_HEADER in request.headers:
        extra[BETA_HEADER] = request.headers[BETA_HEADER]
    if request.headers.get(VERSION_HEADER, ANTHROPIC_VERSION) != ANTHROPIC_VERSION:
        extra[VERSION_HEADER] = request.headers[VERSION_HEADER]
    max_tokens = READ.get_int(body, "max_tokens", "body")
    return ir.Request(
        model=READ.need_str(body, "model", "body"),
        system=system,
        messages=messages,
        tools=tools,
        tool_choice=choice,
        parallel_tool_calls=parallel,
        temperature=READ.get_float(body, "temperature", "body"),
        top_p=READ.get_float(body, "top_p", "body"),
        max_tokens=max_tokens,
        stop=_stop(body),
        response_format=_response_format(body, extra),
        stream=READ.get_bool(body, "stream", "body") or False,
        thinking=thinking,
        provider_fields={NAME: extra} if extra else {},
    )


def is_stream_request(request: HttpRequest) -> bool:
    """Whether the body asks for a stream (`"stream": true`)."""
    return load_object(request.body, what="request body").get("stream") is True


# --- encode ---------------------------------------------------------------------------------------------


def encode_messages(messages: list[ir.Message]) -> list[dict[str, Any]]:
    """IR messages -> wire messages.

    `tool` messages become user messages of tool_result blocks; a user message right after a tool message
    joins it (tool results first, as the API requires), which decode_messages splits back the same way.
    In-conversation `system` messages have no wire role and are sent as user turns (see losses).
    """
    out: list[dict[str, Any]] = []
    previous_role: str | None = None
    for message in messages:
        blocks = [block_from_part(p) for p in message.content]
        if message.role == "user" and previous_role == "tool" and out:
            out[-1]["content"].extend(blocks)
        else:
            role = "assistant" if message.role == "assistant" else "user"
            out.append({"role": role, "content": blocks})
        previous_role = message.role
    for wire in out:  # the string shorthand for a lone text block, as SDK users mostly write it
        if len(wire["content"]) == 1 and wire["content"][0]["type"] == "text":
            wire["content"] = wire["content"][0]["text"]
    return out


def _tool(tool: ir.Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        out["description"] = tool.description
    out["input_schema"] = tool.parameters
    return out


def _tool_choice(request: ir.Request) -> dict[str, Any] | None:
    choice = request.tool_choice
    if choice is None and request.parallel_tool_calls is None:
        return None
    if isinstance(choice, ir.ToolChoiceNone):
        return {"type": "none"}  # cannot carry disable_parallel_tool_use (see losses)
    out: dict[str, Any]
    if isinstance(choice, ir.ToolChoiceRequired):
        out = {"type": "any"}
    elif isinstance(choice, ir.ToolChoiceTool):
        out = {"type": "tool", "name": choice.name}
    else:  # auto, or no choice but a parallel_tool_calls setting, which needs a tool_choice to ride on
        out = {"type": "auto"}
    if request.parallel_tool_calls is not None:
        out["disable_parallel_tool_use"] = not request.parallel_tool_calls
    return out


def _thinking(thinking: ir.ThinkingConfig) -> dict[str, Any]:
    if not thinking.enabled:
        return {"type": "disabled"}
    if thinking.budget_tokens is None:
        return {"type": "adaptive"}  # "think, amount unspecified" is exactly adaptive thinking
    return {"type": "enabled", "budget_tokens": thinking.budget_tokens}


def _same(decode: Callable[[Any], T], raw: Any, value: T) -> bool:
    # Whether stale raw wire data still says what the IR says; raw data that no longer decodes does not.
    try:
        return decode(raw) == value
    except DecodeError:
        return False


def _raw_or(extra: Mapping[str, Any], key: str, decode: Callable[[Any], T], value: T, encoded: Any) -> Any:
    # The raw wire form wins only while it still decodes to what the IR now says.
    if key in extra and _same(decode, extra[key], value):
        return extra[key]
    return encoded


def _output(request: ir.Request, extra: Mapping[str, Any], body: dict[str, Any]) -> None:
    fmt = request.response_format
    config = dict(extra.get("output_config") or {})
    if "output_format" in extra and _same(_decode_format, extra["output_format"], fmt):
        body["output_format"] = extra["output_format"]  # the client used the beta spelling: keep it
    elif isinstance(fmt, ir.ResponseFormatJsonSchema):
        config["format"] = {"type": "json_schema", "schema": fmt.schema_}
    # text is the default and json_object has no wire form: neither is sent (see losses)
    if config:
        body["output_config"] = config


def _decode_format(raw: Any) -> ir.ResponseFormat | None:
    return decode_format(raw, "output_format")


def encode_body(request: ir.Request) -> dict[str, Any]:
    """The JSON body of a Messages request for an IR request."""
    extra = request.provider_fields.get(NAME, {})
    body: dict[str, Any] = {k: v for k, v in extra.items() if k not in _KNOWN and k not in _HEADERS}
    body["model"] = request.model
    body["max_tokens"] = request.max_tokens if request.max_tokens is not None else DEFAULT_MAX_TOKENS
    if request.system:  # an empty prompt is none (the decoder reads `"system": ""` so): never sent empty
        body["system"] = _raw_or(extra, "system", decode_system, request.system, request.system)
    body["messages"] = _raw_or(extra, "messages", decode_messages, request.messages, None)
    if body["messages"] is None:
        body["messages"] = encode_messages(request.messages)
    if request.tools or "tools" in extra:
        body["tools"] = _raw_or(extra, "tools", decode_tools, request.tools, [_tool(t) for t in request.tools])
    choice = _tool_choice(request)
    if choice is not None:
        body["tool_choice"] = choice
    if request.thinking is not None:
        body["thinking"] = _raw_or(extra, "thinking", decode_thinking, request.thinking, _thinking(request.thinking))
    for key, value in (("temperature", request.temperature), ("top_p", request.top_p)):
        if value is not None:
            body[key] = value
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    _output(request, extra, body)
    if request.stream:
        body["stream"] = True
    return body


def encode_request(request: ir.Request) -> HttpRequest:
    """IR -> `POST /v1/messages` with `anthropic-version` (no auth; see `with_auth`)."""
    headers = {"content-type": "application/json", VERSION_HEADER: ANTHROPIC_VERSION}
    kept = request.provider_fields.get(NAME, {})
    headers |= {name: kept[name] for name in _HEADERS if isinstance(kept.get(name), str)}
    body = dumps(encode_body(request)).encode("utf-8")
    return HttpRequest(method="POST", path=MESSAGES_PATH, headers=headers, body=body)


def with_auth(request: HttpRequest, api_key: str) -> HttpRequest:
    """The same request with the `x-api-key` header Anthropic authenticates by."""
    return HttpRequest(
        method=request.method,
        path=request.path,
        query=dict(request.query),
        headers={**request.headers, "x-api-key": api_key},
        body=request.body,
    )


# --- canonical form for "does the raw wire carry more than the IR?" -------------------------------------


def _canon(value: Any) -> Any:
    """Wire JSON with the spellings that mean the same normalized: null fields and `is_error: false`
    dropped, string content as one text block."""
    if isinstance(value, list):
        return [_canon(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if item is None or (key == "is_error" and item is False):
            continue
        if key == "content" and isinstance(item, str):
            item = [{"type": "text", "text": item}]
        out[key] = _canon(item)
    return out
