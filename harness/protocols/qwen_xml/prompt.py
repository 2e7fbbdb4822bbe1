"""Tools in the prompt, for a base protocol that cannot carry them: the Qwen2.5/Qwen3 (Hermes) template form.

The system prompt gets the template's tool block appended:

    # Tools

    You may call one or more functions to assist with the user query.

    You are provided with function signatures within <tools></tools> XML tags:
    <tools>
    {"type": "function", "function": {...}}
    </tools>

    For each function call, return a json object with function name and arguments within <tool_call></tool_call>
    XML tags:
    <tool_call>
    {"name": <function-name>, "arguments": <args-json-object>}
    </tool_call>

Earlier assistant tool calls become `<tool_call>` text and each tool message becomes a user message of
`<tool_response>` blocks, as the template renders them. (The "For each function call" sentence is one line in
the template; it is wrapped above only to fit the docstring.) `parse_request` undoes all of it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.qwen_xml.scanner import ParsedCall, XmlToolCallScanner
from harness.protocols.qwen_xml.transform import call_id, encode_response

TOOLS_HEADER = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
"""Start of the template's tool block."""
TOOLS_FOOTER = (
    "</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>"
)
"""End of the template's tool block."""

_RESPONSE = re.compile(r"<tool_response>\n(.*?)\n</tool_response>", re.DOTALL)


def render_tools(tools: list[ir.Tool]) -> str:
    """The template's tool block for `tools`."""
    lines = []
    for tool in tools:
        function: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            function["description"] = tool.description
        function["parameters"] = tool.parameters
        lines.append(json.dumps({"type": "function", "function": function}, ensure_ascii=False))
    return TOOLS_HEADER + "\n" + "\n".join(lines) + "\n" + TOOLS_FOOTER


def render_request(request: ir.Request, *, style: str = "hermes") -> ir.Request:
    """`request` with its tools in the system prompt and its tool history as text."""
    if not request.tools and not _has_tool_parts(request):
        return request
    system = request.system
    if request.tools:
        block = render_tools(request.tools)
        system = block if not system else f"{system}\n\n{block}"
    messages = [_render_message(m, style) for m in request.messages]
    return request.model_copy(update={"system": system, "messages": messages, "tools": [], "tool_choice": None})


def _has_tool_parts(request: ir.Request) -> bool:
    return any(isinstance(p, ir.ToolCallPart | ir.ToolResultPart) for m in request.messages for p in m.content)


def _render_message(message: ir.Message, style: str) -> ir.Message:
    results = [p for p in message.content if isinstance(p, ir.ToolResultPart)]
    if results:
        blocks = [f"<tool_response>\n{_result_text(r)}\n</tool_response>" for r in results]
        rest = [p for p in message.content if not isinstance(p, ir.ToolResultPart)]
        return ir.Message(role="user", content=[ir.TextPart(text="\n".join(blocks)), *rest])
    if not any(isinstance(p, ir.ToolCallPart) for p in message.content):
        return message
    outputs = [p for p in message.content if isinstance(p, ir.TextPart | ir.ToolCallPart | ir.ThinkingPart)]
    others = [p for p in message.content if not isinstance(p, ir.TextPart | ir.ToolCallPart | ir.ThinkingPart)]
    written = encode_response(ir.Response(content=outputs), style=style).content
    return message.model_copy(update={"content": [*written, *others]})


def _result_text(result: ir.ToolResultPart) -> str:
    return "\n".join(p.text for p in result.content if isinstance(p, ir.TextPart))


def parse_request(request: ir.Request) -> ir.Request:
    """The inverse of `render_request`: tools from the system prompt, calls and results from the text."""
    system, tools = _split_system(request.system)
    messages: list[ir.Message] = []
    pending: list[ir.ToolCallPart] = []
    for i, message in enumerate(request.messages):
        if message.role == "assistant":
            message, calls = _parse_assistant(message, f"m{i}")
            pending = calls
        elif message.role == "user":
            message = _parse_results(message, pending, f"m{i}")
        messages.append(message)
    return request.model_copy(update={"system": system, "tools": tools or request.tools, "messages": messages})


def _split_system(system: str | None) -> tuple[str | None, list[ir.Tool]]:
    if system is None or TOOLS_HEADER not in system or not system.endswith(TOOLS_FOOTER):
        return system, []
    head, _, block = system.partition(TOOLS_HEADER)
    tools = []
    for line in block[: -len(TOOLS_FOOTER)].strip("\n").split("\n"):
        try:
            function = json.loads(line)["function"]
            tools.append(ir.Tool.model_validate(function))
        except (ValueError, KeyError, TypeError, RecursionError):
            # Not our rendering after all: leave the system prompt untouched.
            return system, []
    return (head.removesuffix("\n\n") or None), tools


def _parse_assistant(message: ir.Message, seed: str) -> tuple[ir.Message, list[ir.ToolCallPart]]:
    content: list[ir.ContentPart] = []
    calls: list[ir.ToolCallPart] = []
    for part in message.content:
        if not isinstance(part, ir.TextPart):
            content.append(part)
            continue
        scanner = XmlToolCallScanner()
        for segment in [*scanner.feed(part.text), *scanner.finish()]:
            if isinstance(segment, ParsedCall):
                raw = common.dump_text(segment.arguments)
                tool_id = call_id(seed, len(calls), segment)
                calls.append(
                    ir.ToolCallPart(id=tool_id, name=segment.name, arguments=segment.arguments, arguments_raw=raw)
                )
                content.append(calls[-1])
            else:
                content.append(ir.TextPart(text=segment))
    return message.model_copy(update={"content": content}), calls


def _parse_results(message: ir.Message, pending: list[ir.ToolCallPart], seed: str) -> ir.Message:
    if not message.content or not isinstance(message.content[0], ir.TextPart):
        return message
    text = message.content[0].text
    blocks = _RESPONSE.findall(text)
    if not blocks or "\n".join(f"<tool_response>\n{b}\n</tool_response>" for b in blocks) != text:
        return message
    results: list[ir.ContentPart] = []
    for j, body in enumerate(blocks):
        call = pending.pop(0) if pending else None
        tool_id = call.id if call is not None else common.synth_tool_id("call_", seed, j)
        content = [ir.TextPart(text=body)] if body else []
        results.append(ir.ToolResultPart(tool_call_id=tool_id, name=call.name if call else None, content=content))
    return ir.Message(role="tool", content=[*results, *message.content[1:]])
