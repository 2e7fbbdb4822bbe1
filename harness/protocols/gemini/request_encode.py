"""IR request -> Gemini wire request (the backend role); the inverse of `request_decode`."""

from __future__ import annotations

import json
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.gemini.fields import PROTOCOL, EncodeError
from harness.protocols.gemini.ids import ToolIds
from harness.protocols.gemini.parts import encode_file, encode_image, encode_parts
from harness.wire.http import HttpRequest

DEFAULT_VERSION = "v1beta"


def encode_request(request: ir.Request) -> HttpRequest:
    """The request a Gemini client would send: path from model and stream flag, no auth."""
    extra: dict[str, Any] = request.provider_fields.get(PROTOCOL, {})
    body: dict[str, Any] = {"contents": _contents(request.messages)}
    if request.system is not None:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    tools = _tools(request.tools, extra)
    if tools:
        body["tools"] = tools
    config = extra["toolConfig"] if "toolConfig" in extra else tool_config(request.tool_choice)
    if config is not None:
        body["toolConfig"] = config
    generation = _generation_config(request, extra)
    if generation:
        body["generationConfig"] = generation
    body.update(extra.get("body", {}))
    version = extra.get("api_version", DEFAULT_VERSION)
    method = "streamGenerateContent" if request.stream else "generateContent"
    query = {"alt": "sse"} if request.stream and not extra.get("json_array_stream") else {}
    return HttpRequest(
        method="POST",
        path=f"/{version}/models/{request.model}:{method}",
        query=query,
        headers={"content-type": "application/json"},
        body=common.dump_json(body),
    )


def tool_config(choice: ir.ToolChoice | None) -> dict[str, Any] | None:
    """toolConfig for an IR tool choice: AUTO, NONE, ANY, or ANY limited to one function."""
    if choice is None:
        return None
    calling: dict[str, Any]
    if isinstance(choice, ir.ToolChoiceTool):
        calling = {"mode": "ANY", "allowedFunctionNames": [choice.name]}
    else:
        calling = {"mode": {"auto": "AUTO", "none": "NONE", "required": "ANY"}[choice.kind]}
    return {"functionCallingConfig": calling}


def _contents(messages: list[ir.Message]) -> list[dict[str, Any]]:
    ids = ToolIds()
    names = {p.id: p.name for m in messages for p in m.content if isinstance(p, ir.ToolCallPart)}
    out: list[dict[str, Any]] = []
    for turn, message in enumerate(messages):
        if message.role == "assistant":
            ids.new_model_turn()
            out.append({"role": "model", "parts": encode_parts(message.content, ids, turn=turn)})
        else:
            # Tool results and in-conversation system messages travel as user turns: Gemini has no other role.
            out.append({"role": "user", "parts": _user_parts(message, ids, turn, names)})
    return out


def _user_parts(message: ir.Message, ids: ToolIds, turn: int, names: dict[str, str]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    results = 0
    for part in message.content:
        if isinstance(part, ir.TextPart):
            parts.append({"text": part.text})
        elif isinstance(part, ir.ImagePart):
            parts.append(encode_image(part))
        elif isinstance(part, ir.FilePart):
            parts.append(encode_file(part))
        elif isinstance(part, ir.ToolResultPart):
            parts.append({"functionResponse": _function_response(part, ids, turn, results, names)})
            results += 1
        else:
            raise EncodeError(f"a {part.kind} part cannot be sent in a {message.role} message")
    return parts


def _function_response(
    part: ir.ToolResultPart, ids: ToolIds, turn: int, ordinal: int, names: dict[str, str]
) -> dict[str, Any]:
    """functionResponse: `name` is the real tool name (the IR's, else that of the call it answers)."""
    name = part.name if part.name is not None else names.get(part.tool_call_id)
    if name is None:
        raise EncodeError(
            f"tool result for call {part.tool_call_id!r} has no tool name and no assistant tool call has that id; "
            "Gemini's functionResponse needs the name"
        )
    result: dict[str, Any] = {"name": name, "response": _response(part)}
    implied = ids.implied_result(turn, ordinal, name)
    if part.tool_call_id != implied or ids.is_explicit(part.tool_call_id):
        result["id"] = part.tool_call_id
    ids.answer(part.tool_call_id)
    images = [encode_image(p) for p in part.content if isinstance(p, ir.ImagePart)]
    if images:
        result["parts"] = images
    return result


def _response(part: ir.ToolResultPart) -> dict[str, Any]:
    """The response object: `{"error": text}`, `{"output": text}`, or the text itself when it is the compact JSON
    of an object (so a structured result reaches the model as structure and decodes back to the same text)."""
    text = "".join(p.text for p in part.content if isinstance(p, ir.TextPart))
    if part.is_error:
        return {"error": text}
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            parsed = None
        wrapper = (
            isinstance(parsed, dict)
            and len(parsed) == 1
            and any(isinstance(parsed.get(k), str) for k in ("output", "error"))
        )
        if isinstance(parsed, dict) and not wrapper and common.dump_text(parsed) == text:
            return parsed
    return {"output": text}


def _tools(tools: list[ir.Tool], extra: dict[str, Any]) -> list[dict[str, Any]]:
    key = extra.get("parameters_key", "parametersJsonSchema")
    out: list[dict[str, Any]] = []
    if tools:
        declarations = []
        for tool in tools:
            decl: dict[str, Any] = {"name": tool.name}
            if tool.description is not None:
                decl["description"] = tool.description
            decl[key] = tool.parameters
            declarations.append(decl)
        out.append({"functionDeclarations": declarations})
    return out + list(extra.get("tools", []))


def _generation_config(request: ir.Request, extra: dict[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if request.top_p is not None:
        config["topP"] = request.top_p
    if request.max_tokens is not None:
        config["maxOutputTokens"] = request.max_tokens
    if request.stop:
        config["stopSequences"] = list(request.stop)
    fmt = request.response_format
    if isinstance(fmt, ir.ResponseFormatText):
        config["responseMimeType"] = "text/plain"
    elif isinstance(fmt, ir.ResponseFormatJsonObject):
        config["responseMimeType"] = "application/json"
    elif isinstance(fmt, ir.ResponseFormatJsonSchema):
        config["responseMimeType"] = "application/json"
        config[extra.get("response_schema_key", "responseJsonSchema")] = fmt.schema_
    thinking = _thinking(request.thinking, extra.get("thinkingConfig", {}))
    if thinking is not None:
        config["thinkingConfig"] = thinking
    config.update(extra.get("generationConfig", {}))
    return config


def _thinking(thinking: ir.ThinkingConfig | None, extra: dict[str, Any]) -> dict[str, Any] | None:
    """thinkingConfig: with thinking on, ask for thought summaries (includeThoughts) so the client sees
    reasoning as it would from other providers; off is a zero budget."""
    if thinking is None:
        return dict(extra) if extra else None
    config: dict[str, Any] = {}
    if thinking.enabled:
        config["includeThoughts"] = True
        if thinking.budget_tokens is not None:
            config["thinkingBudget"] = thinking.budget_tokens
    else:
        config["thinkingBudget"] = 0
    config.update(extra)
    return config
