"""Converse requests (`POST /model/{modelId}/converse` and `/converse-stream`) <-> IR.

The model id is the URL path's, percent-encoded by SDKs (`us.amazon.nova-micro-v1%3A0`; an inference-profile
ARN's slashes too); whether to stream is the path's too. provider_fields["bedrock"] holds wire fields verbatim,
under their wire names:
- every top-level field the IR has no place for (guardrailConfig, promptVariables, requestMetadata,
  performanceConfig, serviceTier, additionalModelResponseFieldPaths, ...);
- `messages`, `system`, `toolConfig` when the wire form carries more than the IR (cache points, documents,
  images in S3, JSON tool results, system tools, ...); the encoder sends such a raw field only while it still
  decodes to the IR value, so a translation that changed the field is never overridden by stale raw data;
- `inferenceConfig`, `additionalModelRequestFields` and `outputConfig` without the keys the IR carries
  (maxTokens, temperature, topP, stopSequences; Anthropic's `thinking`; `textFormat`), and `thinking` and
  `textFormat` themselves when their wire form says more than the IR (a schema's own JSON text layout).

Structured output is `outputConfig.textFormat`: `{"type": "json_schema", "structure": {"jsonSchema": {"name",
"schema": "<the schema as JSON text>", "description"}}}`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar
from urllib.parse import quote, unquote

from harness import ir
from harness.protocols import common
from harness.protocols.bedrock.blocks import block_from_part, part_from_block
from harness.protocols.bedrock.mapping import NAME, READ, fail, load_object
from harness.wire.http import HttpRequest

T = TypeVar("T")

PATH = re.compile(r"/model/(?P<model>.+)/(?P<operation>converse|converse-stream)$")
"""A Converse path; any prefix (a proxy's mount point) may come before it."""

_KNOWN = frozenset(
    {"messages", "system", "inferenceConfig", "toolConfig", "additionalModelRequestFields", "outputConfig"}
)
_INFERENCE = frozenset({"maxTokens", "temperature", "topP", "stopSequences"})
Role = Literal["user", "assistant", "tool"]


def parse_path(path: str) -> tuple[str, bool]:
    """(model id, whether the operation is ConverseStream) of a request path."""
    match = PATH.search(path)
    if match is None:
        raise fail(f"path {path!r} is not /model/{{modelId}}/converse or /converse-stream")
    return unquote(match["model"]), match["operation"] == "converse-stream"


def request_path(model: str, *, stream: bool) -> str:
    """The Converse path of a model id (percent-encoded as boto3 does: `:` and `/` too)."""
    return f"/model/{quote(model, safe='')}/{'converse-stream' if stream else 'converse'}"


# --- decode ---------------------------------------------------------------------------------------------


def decode_messages(raw: Any) -> list[ir.Message]:
    """Wire messages -> IR messages; a user turn's toolResult blocks become IR `tool` messages (a turn is split
    into runs of tool results and of other blocks, in order). Blocks with no IR part are left out."""
    names: dict[str, str] = {}
    out: list[ir.Message] = []
    for i, message in enumerate(READ.lst(raw, "messages")):
        where = f"messages[{i}]"
        message = READ.as_obj(message, where)
        wire_role = READ.need_str(message, "role", where)
        if wire_role not in ("user", "assistant"):
            raise fail(f"{where}.role is {wire_role!r}, expected 'user' or 'assistant'")
        role: Role = "user" if wire_role == "user" else "assistant"
        runs: list[ir.Message] = []
        for j, block in enumerate(READ.need_list(message, "content", where)):
            part = part_from_block(READ.as_obj(block, f"{where}.content[{j}]"), f"{where}.content[{j}]", names)
            if part is None:
                continue
            if isinstance(part, ir.ToolCallPart):
                names[part.id] = part.name
            part_role: Role = "tool" if isinstance(part, ir.ToolResultPart) else role
            if runs and runs[-1].role == part_role:
                runs[-1] = runs[-1].model_copy(update={"content": [*runs[-1].content, part]})
            else:
                runs.append(ir.Message(role=part_role, content=[part]))
        out.extend(runs or [ir.Message(role=role, content=[])])
    return out


def decode_system(raw: Any) -> str | None:
    """Wire system blocks -> IR system prompt: the text blocks joined by a blank line (None when there are none)."""
    texts = []
    for j, block in enumerate(READ.lst(raw, "system")):
        block = READ.as_obj(block, f"system[{j}]")
        if "text" in block:
            texts.append(READ.need_str(block, "text", f"system[{j}]"))
    return "\n\n".join(texts) if texts else None


def decode_tool_config(raw: Any) -> tuple[list[ir.Tool], ir.ToolChoice | None]:
    """Wire toolConfig -> IR tools (toolSpec entries; system tools and cache points have no IR form) and choice."""
    raw = READ.as_obj(raw, "toolConfig")
    tools: list[ir.Tool] = []
    for k, tool in enumerate(READ.need_list(raw, "tools", "toolConfig")):
        where = f"toolConfig.tools[{k}]"
        tool = READ.as_obj(tool, where)
        spec = READ.get_obj(tool, "toolSpec", where)
        if spec is None:
            continue
        schema = READ.need_obj(spec, "inputSchema", f"{where}.toolSpec")
        tools.append(
            ir.Tool(
                name=READ.need_str(spec, "name", f"{where}.toolSpec"),
                description=READ.get_str(spec, "description", f"{where}.toolSpec"),
                parameters=READ.need_obj(schema, "json", f"{where}.toolSpec.inputSchema"),
            )
        )
    return tools, _tool_choice(raw.get("toolChoice"))


def _tool_choice(raw: Any) -> ir.ToolChoice | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or len(raw) != 1:
        raise fail(f"toolConfig.toolChoice is {raw!r:.80}, expected one of auto, any, tool")
    if "auto" in raw:
        return ir.ToolChoiceAuto()
    if "any" in raw:
        return ir.ToolChoiceRequired()
    if "tool" in raw:
        return ir.ToolChoiceTool(
            name=READ.need_str(READ.need_obj(raw, "tool", "toolChoice"), "name", "toolChoice.tool")
        )
    raise fail(f"toolConfig.toolChoice has {next(iter(raw))!r}, expected auto, any or tool")


def decode_thinking(raw: Any) -> ir.ThinkingConfig:
    """Anthropic's `thinking` inside additionalModelRequestFields -> IR (adaptive = enabled without a budget)."""
    raw = READ.as_obj(raw, "additionalModelRequestFields.thinking")
    kind = raw.get("type")
    if kind == "enabled":
        budget = READ.need_int(raw, "budget_tokens", "additionalModelRequestFields.thinking")
        return ir.ThinkingConfig(enabled=True, budget_tokens=budget)
    if kind == "disabled":
        return ir.ThinkingConfig(enabled=False)
    if kind == "adaptive":
        return ir.ThinkingConfig(enabled=True)
    raise fail(f"additionalModelRequestFields.thinking.type is {kind!r}, expected enabled, disabled or adaptive")


def _inference(body: Mapping[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    config = READ.get_obj(body, "inferenceConfig", "body") or {}
    rest = {k: v for k, v in config.items() if k not in _INFERENCE}
    if rest:
        extra["inferenceConfig"] = rest
    stops = READ.get_list(config, "stopSequences", "inferenceConfig")
    stop = [READ.as_str(s, f"inferenceConfig.stopSequences[{i}]") for i, s in enumerate(stops)]
    return {
        "max_tokens": READ.get_int(config, "maxTokens", "inferenceConfig"),
        "temperature": READ.get_float(config, "temperature", "inferenceConfig"),
        "top_p": READ.get_float(config, "topP", "inferenceConfig"),
        "stop": stop,
    }


def _additional(body: Mapping[str, Any], extra: dict[str, Any]) -> ir.ThinkingConfig | None:
    fields = READ.get_obj(body, "additionalModelRequestFields", "body") or {}
    rest = {k: v for k, v in fields.items() if k != "thinking"}
    if rest:
        extra["additionalModelRequestFields"] = rest
    if fields.get("thinking") is None:
        return None
    thinking = decode_thinking(fields["thinking"])
    _keep_raw(extra, "thinking", fields["thinking"], _thinking(thinking))
    return thinking


def decode_text_format(raw: Any) -> ir.ResponseFormatJsonSchema:
    """`outputConfig.textFormat` -> IR JSON-schema format (the schema travels as JSON text)."""
    where = "outputConfig.textFormat"
    if not isinstance(raw, dict) or raw.get("type") != "json_schema":
        raise fail(f"{where} is {raw!r:.80}, expected a json_schema format")
    definition = READ.need_obj(READ.need_obj(raw, "structure", where), "jsonSchema", f"{where}.structure")
    here = f"{where}.structure.jsonSchema"
    schema = load_object(READ.need_str(definition, "schema", here), what=f"{here}.schema")
    name = READ.get_str(definition, "name", here)
    return ir.ResponseFormatJsonSchema(schema_=schema, **({"name": name} if name is not None else {}))


def _output(body: Mapping[str, Any], extra: dict[str, Any]) -> ir.ResponseFormat | None:
    config = READ.get_obj(body, "outputConfig", "body") or {}
    rest = {k: v for k, v in config.items() if k != "textFormat"}
    if rest:
        extra["outputConfig"] = rest
    if config.get("textFormat") is None:
        return None
    fmt = decode_text_format(config["textFormat"])
    _keep_raw(extra, "textFormat", config["textFormat"], _text_format(fmt))
    return fmt


def _keep_raw(extra: dict[str, Any], key: str, raw: Any, encoded: Any) -> None:
    # Raw wire data is kept only when the canonical encoding of the decoded value would lose something.
    if _canon(raw) != _canon(encoded):
        extra[key] = raw


def decode_request(request: HttpRequest) -> ir.Request:
    """A Converse or ConverseStream request -> IR."""
    model, stream = parse_path(request.path)
    body = load_object(request.body, what="request body")
    extra: dict[str, Any] = {k: v for k, v in body.items() if k not in _KNOWN}
    messages = decode_messages(body.get("messages", []))
    if "messages" in body:
        _keep_raw(extra, "messages", body["messages"], encode_messages(messages))
    system = None
    if body.get("system") is not None:
        system = decode_system(body["system"])
        _keep_raw(extra, "system", body["system"], _system(system))
    tools: list[ir.Tool] = []
    choice: ir.ToolChoice | None = None
    if body.get("toolConfig") is not None:
        tools, choice = decode_tool_config(body["toolConfig"])
        _keep_raw(extra, "toolConfig", body["toolConfig"], _tool_config(tools, choice))
    inference = _inference(body, extra)
    thinking = _additional(body, extra)
    response_format = _output(body, extra)
    return ir.Request(
        model=model,
        system=system,
        messages=messages,
        tools=tools,
        tool_choice=choice,
        **inference,
        response_format=response_format,
        stream=stream,
        thinking=thinking,
        provider_fields={NAME: extra} if extra else {},
    )


def is_stream_request(request: HttpRequest) -> bool:
    """Whether the path is ConverseStream's."""
    match = PATH.search(request.path)
    return match is not None and match["operation"] == "converse-stream"


# --- encode ---------------------------------------------------------------------------------------------


def encode_messages(messages: list[ir.Message]) -> list[dict[str, Any]]:
    """IR messages -> wire messages.

    `tool` messages become user turns of toolResult blocks; a user message right after a tool message joins it
    (results first), which decode_messages splits back the same way (one with nothing to send stays a turn
    of its own, so it is not lost). In-conversation `system` messages have no
    wire role and are sent as user turns; images by URL are not sent (see losses).
    """
    out: list[dict[str, Any]] = []
    previous_role: str | None = None
    for message in messages:
        blocks = [block for part in message.content if (block := block_from_part(part)) is not None]
        if message.role == "user" and previous_role == "tool" and out and blocks:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": "assistant" if message.role == "assistant" else "user", "content": blocks})
        previous_role = message.role
    return out


def _system(system: str | None) -> list[dict[str, Any]]:
    return [{"text": system}] if system else []  # a system block's text may not be empty (NonEmptyString)


def _tool_config(tools: list[ir.Tool], choice: ir.ToolChoice | None) -> dict[str, Any] | None:
    if not tools:
        return None  # toolConfig needs at least one tool: a choice without tools is not sent (see losses)
    specs = []
    for tool in tools:
        spec: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            spec["description"] = tool.description
        spec["inputSchema"] = {"json": tool.parameters}
        specs.append({"toolSpec": spec})
    config: dict[str, Any] = {"tools": specs}
    if isinstance(choice, ir.ToolChoiceAuto):
        config["toolChoice"] = {"auto": {}}
    elif isinstance(choice, ir.ToolChoiceRequired):
        config["toolChoice"] = {"any": {}}
    elif isinstance(choice, ir.ToolChoiceTool):
        config["toolChoice"] = {"tool": {"name": choice.name}}
    # none has no wire form: the tools are sent, the model decides (see losses)
    return config


def _thinking(thinking: ir.ThinkingConfig) -> dict[str, Any]:
    if not thinking.enabled:
        return {"type": "disabled"}
    if thinking.budget_tokens is None:
        return {"type": "adaptive"}  # "think, amount unspecified" is exactly Anthropic's adaptive thinking
    return {"type": "enabled", "budget_tokens": thinking.budget_tokens}


def _text_format(fmt: ir.ResponseFormatJsonSchema) -> dict[str, Any]:
    schema = json.dumps(fmt.schema_, ensure_ascii=False, separators=(",", ":"))
    return {"type": "json_schema", "structure": {"jsonSchema": {"name": fmt.name, "schema": schema}}}


def _same(decode: Callable[[Any], T], raw: Any, value: T) -> bool:
    # Whether stale raw wire data still says what the IR says; raw data that no longer decodes does not.
    try:
        return decode(raw) == value
    except ValueError:  # DecodeError, or an IR model rejecting what the raw data holds
        return False


def _raw_or(extra: Mapping[str, Any], key: str, decode: Callable[[Any], T], value: T, encoded: Any) -> Any:
    # The raw wire form wins only while it still decodes to what the IR now says.
    if key in extra and _same(decode, extra[key], value):
        return extra[key]
    return encoded


def _inference_config(request: ir.Request, extra: Mapping[str, Any]) -> dict[str, Any]:
    config = {k: v for k, v in (extra.get("inferenceConfig") or {}).items() if k not in _INFERENCE}
    for key, value in (("maxTokens", request.max_tokens), ("temperature", request.temperature)):
        if value is not None:
            config[key] = value
    if request.top_p is not None:
        config["topP"] = request.top_p
    if request.stop:
        config["stopSequences"] = list(request.stop)
    return config


def _additional_fields(request: ir.Request, extra: Mapping[str, Any]) -> dict[str, Any]:
    fields = {k: v for k, v in (extra.get("additionalModelRequestFields") or {}).items() if k != "thinking"}
    if request.thinking is not None:
        fields["thinking"] = _raw_or(extra, "thinking", decode_thinking, request.thinking, _thinking(request.thinking))
    return fields


def _output_config(request: ir.Request, extra: Mapping[str, Any]) -> dict[str, Any]:
    config = {k: v for k, v in (extra.get("outputConfig") or {}).items() if k != "textFormat"}
    fmt = request.response_format
    if isinstance(fmt, ir.ResponseFormatJsonSchema):
        config["textFormat"] = _raw_or(extra, "textFormat", decode_text_format, fmt, _text_format(fmt))
    # text is the default and json_object has no wire form: neither is sent (see losses)
    return config


def encode_body(request: ir.Request) -> dict[str, Any]:
    """The JSON body of a Converse request for an IR request (the model and streaming are the path's)."""
    extra = request.provider_fields.get(NAME, {})
    skip = {*_KNOWN, "thinking", "textFormat"}
    body: dict[str, Any] = {k: v for k, v in extra.items() if k not in skip}
    body["messages"] = _raw_or(extra, "messages", decode_messages, request.messages, None)
    if body["messages"] is None:
        body["messages"] = encode_messages(request.messages)
    if request.system or "system" in extra:
        body["system"] = _raw_or(extra, "system", decode_system, request.system, _system(request.system))
    config = _tool_config(request.tools, request.tool_choice)
    if "toolConfig" in extra and _same(decode_tool_config, extra["toolConfig"], (request.tools, request.tool_choice)):
        config = extra["toolConfig"]
    if config is not None:
        body["toolConfig"] = config
    if inference := _inference_config(request, extra):
        body["inferenceConfig"] = inference
    if additional := _additional_fields(request, extra):
        body["additionalModelRequestFields"] = additional
    if output := _output_config(request, extra):
        body["outputConfig"] = output
    return body


def encode_request(request: ir.Request) -> HttpRequest:
    """IR -> `POST /model/{modelId}/converse[-stream]` (unsigned; see `with_auth`)."""
    body = common.dump_json(encode_body(request))  # in the IR's key order, as an SDK client sends it
    path = request_path(request.model, stream=request.stream)
    return HttpRequest(method="POST", path=path, headers={"content-type": "application/json"}, body=body)


# --- canonical form for "does the raw wire carry more than the IR?" -------------------------------------


def _canon(value: Any) -> Any:
    """Wire JSON with the spellings that mean the same normalized: null fields and `status: success` dropped."""
    if isinstance(value, list):
        return [_canon(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {
        key: _canon(item)
        for key, item in value.items()
        if item is not None and not (key == "status" and item == "success")
    }
