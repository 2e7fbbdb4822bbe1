"""Gemini request (`POST /{version}/models/{model}:generateContent|streamGenerateContent`) -> IR request.

The model and the method are in the path, the stream framing in the query (`alt=sse`, else a JSON array).
What has no IR field is kept in `provider_fields["gemini"]` and re-emitted by the encoder:
`api_version` (when not v1beta), `json_array_stream`, `body` (unknown top-level fields such as
safetySettings), `generationConfig` / `thinkingConfig` (their unknown fields), `tools` (non-function tools
such as googleSearch), `toolConfig` (verbatim when the IR tool choice cannot say it), `parameters_key` and
`response_schema_key` (when the client used the OpenAPI-subset `parameters` / `responseSchema` fields
rather than the JSON Schema ones), and then `unsaid_schema_keywords` (`common.UNSAID_SCHEMA_KEYWORDS`): the
OpenAPI-subset `responseSchema` cannot say `additionalProperties`.
"""

from __future__ import annotations

import re
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.gemini.enums import CALLING_MODE, enum_name
from harness.protocols.gemini.fields import (
    PROTOCOL,
    as_list,
    as_object,
    as_str,
    extras,
    fail,
    get,
    has,
    load_object,
    opt_bool,
    opt_float,
    opt_int,
    opt_object,
    opt_str,
    spellings,
)
from harness.protocols.gemini.ids import ToolIds
from harness.protocols.gemini.mapping import json_schema_from_openapi
from harness.protocols.gemini.parts import ContentMachine, PartsFold, decode_image, decode_media
from harness.protocols.gemini.request_encode import tool_config
from harness.wire.http import HttpRequest

PATH = re.compile(
    r"/(?P<version>v1[a-z0-9]*)/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$"
)
"""A Gemini generation path; any prefix (a proxy's mount point) may come before it."""

_TOP = spellings(["contents", "systemInstruction", "tools", "toolConfig", "generationConfig"])
_GENERATION = spellings(
    [
        "temperature",
        "topP",
        "maxOutputTokens",
        "stopSequences",
        "responseMimeType",
        "responseSchema",
        "responseJsonSchema",
        "thinkingConfig",
    ]
)


def parse_path(path: str) -> tuple[str, str, bool]:
    """(api version, model, whether it is streamGenerateContent) from a request path."""
    match = PATH.search(path)
    if match is None:
        raise fail(f"path {path!r} is not /{{version}}/models/{{model}}:generateContent or :streamGenerateContent")
    return match["version"], match["model"], match["method"] == "streamGenerateContent"


def decode_request(request: HttpRequest) -> ir.Request:
    """A client's wire request -> IR."""
    version, model, stream = parse_path(request.path)
    body = load_object(request.body)
    provider: dict[str, Any] = {}
    if version != "v1beta":
        provider["api_version"] = version
    if stream and request.query.get("alt") != "sse":
        provider["json_array_stream"] = True
    rest = extras(body, _TOP)
    if rest:
        provider["body"] = rest
    tools = _tools(get(body, "tools"), provider)
    choice = _tool_choice(opt_object(get(body, "toolConfig"), "toolConfig"), provider)
    config = _generation_config(opt_object(get(body, "generationConfig"), "generationConfig"), provider)
    return ir.Request(
        model=model,
        system=_system(get(body, "systemInstruction")),
        messages=_contents(as_list(get(body, "contents"), "contents")),
        tools=tools,
        tool_choice=choice,
        stream=stream,
        provider_fields={PROTOCOL: provider} if provider else {},
        **config,
    )


def _system(value: Any) -> str | None:
    if value is None:
        return None
    content = as_object(value, "systemInstruction")
    parts = as_list(get(content, "parts"), "systemInstruction.parts")
    texts = [as_str(get(as_object(p, "systemInstruction part"), "text"), "systemInstruction text") for p in parts]
    # The IR system prompt is one string; several text parts are joined by newlines.
    return "\n".join(texts)


def _contents(contents: list[Any]) -> list[ir.Message]:
    ids = ToolIds()
    messages: list[ir.Message] = []
    for turn, value in enumerate(contents):
        content = as_object(value, f"contents[{turn}]")
        role = opt_str(get(content, "role"), f"contents[{turn}].role") or "user"
        parts = as_list(get(content, "parts"), f"contents[{turn}].parts")
        if role == "model":
            ids.new_model_turn()
            messages.append(ir.Message(role="assistant", content=_model_parts(parts, ids, turn)))
        elif role in ("user", "function", "tool"):
            # `function` is the role older clients gave to functionResponse turns.
            messages += _user_parts(parts, ids, turn)
        else:
            raise fail(f"contents[{turn}].role is {role!r}, expected user or model")
    return messages


def _model_parts(parts: list[Any], ids: ToolIds, turn: int) -> list[ir.ContentPart]:
    machine = ContentMachine(ids, turn=turn)
    fold = PartsFold()
    out: list[ir.ContentPart] = []
    for i, value in enumerate(parts):
        where = f"contents[{turn}].parts[{i}]"
        part = as_object(value, where)
        image = decode_media(part, where)
        if image is None:
            fold.add(machine.part(part, where))
        else:
            fold.add(machine.signature(opt_str(get(part, "thoughtSignature"), f"{where}.thoughtSignature")))
            fold.add(machine.close())
        out += fold.parts
        fold.parts.clear()
        if image is not None:
            out.append(image)
    fold.add(machine.close())
    return out + list(fold.parts)


def _user_parts(parts: list[Any], ids: ToolIds, turn: int) -> list[ir.Message]:
    """A user content -> IR messages: runs of functionResponse parts become `tool` messages."""
    messages: list[ir.Message] = []
    run: list[ir.ContentPart] = []
    run_role: str = "user"
    results = 0
    for i, value in enumerate(parts):
        where = f"contents[{turn}].parts[{i}]"
        part = as_object(value, where)
        item: ir.ContentPart | None
        if has(part, "functionResponse"):
            role = "tool"
            item = _tool_result(get(part, "functionResponse"), ids, turn, results, f"{where}.functionResponse")
            results += 1
        elif has(part, "text"):
            role, item = "user", ir.TextPart(text=as_str(get(part, "text"), f"{where}.text"))
        else:
            role, item = "user", decode_media(part, where)
            if item is None:
                raise fail(f"{where}: unsupported part {next(iter(part), '(empty)')!r} in a user turn")
        if role != run_role and run:
            messages.append(ir.Message(role="tool" if run_role == "tool" else "user", content=run))
            run = []
        run_role = role
        run.append(item)
    if run or not messages:
        messages.append(ir.Message(role="tool" if run_role == "tool" else "user", content=run))
    return messages


def _tool_result(value: Any, ids: ToolIds, turn: int, ordinal: int, where: str) -> ir.ToolResultPart:
    result = as_object(value, where)
    name = as_str(get(result, "name"), f"{where}.name")
    call_id = opt_str(get(result, "id"), f"{where}.id")
    if call_id is None:
        call_id = ids.implied_result(turn, ordinal, name)
    ids.answer(call_id)
    response = get(result, "response")
    content, is_error = _result_content({} if response is None else as_object(response, f"{where}.response"))
    for i, part in enumerate(as_list(get(result, "parts"), f"{where}.parts")):
        image = decode_image(as_object(part, f"{where}.parts[{i}]"), f"{where}.parts[{i}]")
        if image is None:
            raise fail(f"{where}.parts[{i}]: only inlineData / fileData parts are supported in a functionResponse")
        content.append(image)
    return ir.ToolResultPart(tool_call_id=call_id, name=name, content=content, is_error=is_error)


def _result_content(response: dict[str, Any]) -> tuple[list[ir.TextPart | ir.ImagePart], bool]:
    """`{"output": text}` is the text, `{"error": text}` an error; any other object is its compact JSON."""
    if len(response) == 1:
        ((key, value),) = response.items()
        if key in ("output", "error") and isinstance(value, str):
            return ([ir.TextPart(text=value)] if value else []), key == "error"
    return [ir.TextPart(text=common.dump_text(response))], False


def _tools(value: Any, provider: dict[str, Any]) -> list[ir.Tool]:
    tools: list[ir.Tool] = []
    other: list[Any] = []
    for i, item in enumerate(as_list(value, "tools")):
        tool = as_object(item, f"tools[{i}]")
        if not has(tool, "functionDeclarations"):
            other.append(tool)
            continue
        rest = extras(tool, spellings(["functionDeclarations"]))
        if rest:
            other.append(rest)
        for j, decl in enumerate(as_list(get(tool, "functionDeclarations"), f"tools[{i}].functionDeclarations")):
            tools.append(_declaration(as_object(decl, f"tools[{i}].functionDeclarations[{j}]"), provider))
    if other:
        provider["tools"] = other
    return tools


def _declaration(decl: dict[str, Any], provider: dict[str, Any]) -> ir.Tool:
    name = as_str(get(decl, "name"), "functionDeclaration.name")
    description = opt_str(get(decl, "description"), "functionDeclaration.description")
    if has(decl, "parametersJsonSchema"):
        params = opt_object(get(decl, "parametersJsonSchema"), "functionDeclaration.parametersJsonSchema")
    else:
        params = opt_object(get(decl, "parameters"), "functionDeclaration.parameters")
        if params is not None:
            provider["parameters_key"] = "parameters"
            params = json_schema_from_openapi(params)
    if params is None:
        return ir.Tool(name=name, description=description)
    return ir.Tool(name=name, description=description, parameters=params)


def _tool_choice(config: dict[str, Any] | None, provider: dict[str, Any]) -> ir.ToolChoice | None:
    if config is None:
        return None
    calling = opt_object(get(config, "functionCallingConfig"), "toolConfig.functionCallingConfig") or {}
    mode = opt_str(enum_name(CALLING_MODE, get(calling, "mode")), "functionCallingConfig.mode")
    names = as_list(get(calling, "allowedFunctionNames"), "functionCallingConfig.allowedFunctionNames")
    choice: ir.ToolChoice | None = None
    if mode == "AUTO":
        choice = ir.ToolChoiceAuto()
    elif mode == "NONE":
        choice = ir.ToolChoiceNone()
    elif mode == "ANY" and len(names) == 1 and isinstance(names[0], str):
        choice = ir.ToolChoiceTool(name=names[0])
    elif mode == "ANY":
        choice = ir.ToolChoiceRequired()
    if tool_config(choice) != config:
        # Modes such as VALIDATED, several allowed names, retrievalConfig: keep the object as the client sent it.
        provider["toolConfig"] = config
    return choice


def _generation_config(config: dict[str, Any] | None, provider: dict[str, Any]) -> dict[str, Any]:
    """IR request fields from generationConfig; unknown fields go to provider_fields."""
    if config is None:
        return {}
    rest = extras(config, _GENERATION)
    stop = as_list(get(config, "stopSequences"), "generationConfig.stopSequences")
    out: dict[str, Any] = {
        "temperature": opt_float(get(config, "temperature"), "generationConfig.temperature"),
        "top_p": opt_float(get(config, "topP"), "generationConfig.topP"),
        "max_tokens": opt_int(get(config, "maxOutputTokens"), "generationConfig.maxOutputTokens"),
        "stop": [as_str(s, "generationConfig.stopSequences[]") for s in stop],
        "response_format": _response_format(config, rest, provider),
        "thinking": _thinking(opt_object(get(config, "thinkingConfig"), "thinkingConfig"), provider),
    }
    if rest:
        provider["generationConfig"] = rest
    return out


OPENAPI_UNSAID = ("additionalProperties",)
"""JSON Schema keywords Gemini's OpenAPI-subset Schema object has no field for (ai.google.dev/api/caching#Schema)."""


def _response_format(
    config: dict[str, Any], rest: dict[str, Any], provider: dict[str, Any]
) -> ir.ResponseFormat | None:
    mime = opt_str(get(config, "responseMimeType"), "generationConfig.responseMimeType")
    schema: dict[str, Any] | None = None
    if has(config, "responseJsonSchema"):
        schema = as_object(get(config, "responseJsonSchema"), "generationConfig.responseJsonSchema")
    elif has(config, "responseSchema"):
        schema = json_schema_from_openapi(as_object(get(config, "responseSchema"), "generationConfig.responseSchema"))
        provider["response_schema_key"] = "responseSchema"
        provider[common.UNSAID_SCHEMA_KEYWORDS] = list(OPENAPI_UNSAID)
    if schema is not None:
        if mime is not None and mime != "application/json":
            rest["responseMimeType"] = mime  # e.g. text/x.enum with an enum schema
        return ir.ResponseFormatJsonSchema(schema_=schema)
    if mime == "application/json":
        return ir.ResponseFormatJsonObject()
    if mime == "text/plain":
        return ir.ResponseFormatText()
    if mime is not None:
        rest["responseMimeType"] = mime
    return None


def _thinking(config: dict[str, Any] | None, provider: dict[str, Any]) -> ir.ThinkingConfig | None:
    """thinkingBudget 0 disables thinking, -1 (dynamic) means no fixed budget. includeThoughts (return thought
    summaries) is what the encoder sets with thinking on; only a different value is kept in provider_fields."""
    if config is None:
        return None
    budget = opt_int(get(config, "thinkingBudget"), "thinkingConfig.thinkingBudget")
    include = opt_bool(get(config, "includeThoughts"), "thinkingConfig.includeThoughts")
    rest = extras(config, spellings(["thinkingBudget", "includeThoughts"]))
    enabled = budget != 0
    if budget is not None and budget < 0:
        rest["thinkingBudget"] = budget
    if enabled and include is not True:
        rest["includeThoughts"] = bool(include)
    elif not enabled and include is not None:
        rest["includeThoughts"] = include
    if rest:
        provider["thinkingConfig"] = rest
    return ir.ThinkingConfig(enabled=enabled, budget_tokens=budget if budget is not None and budget > 0 else None)
