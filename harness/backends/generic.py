"""The reference backends' generic reply: an answer for a request that no scenario scripts.

External conformance suites (the Open Responses suite, `harness/interop`) send prompts of their own. Rather than
pretending those prompts are scenarios, a backend in generic mode answers any request by a fixed, documented rule,
and the answer goes out through the same protocol encoders, reference ids, headers and chunking as a scripted one:

- **A tool call** when the request offers tools, does not forbid them (`tool_choice` none) and its last message
  is not a tool result: one call of the tool `tool_choice` names, else of the first tool, whose arguments give each
  required property of the tool's schema a sample value of its type (`sample_arguments`); stop reason `tool_use`.
- **Text** otherwise: `GENERIC_TEXT` followed by the last user text quoted (so a reader can tell which prompt was
  answered); stop reason `end_turn`.

Usage is counted in words (input: every text of the request; output: the reply's), so it is present and
plausible, never a provider's figure.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

from harness import ir
from harness.backends.chunking import effective
from harness.backends.respond import WireReply
from harness.protocols import Codec, HttpRequest
from harness.protocols.reference import body_reply, stream_reply
from harness.scenarios.model import Chunking, ReplyOk
from harness.scenarios.resolve import split_scenario
from harness.scenarios.script import scripted_events, scripted_response

GENERIC_TEXT = "Generic reference reply to:"
"""How every generic text reply begins."""
GENERIC_ID = "generic"
"""What a generic reply names as its scenario (`WireReply.scenario`)."""
_SAMPLES: dict[str, ir.JSONValue] = {
    "string": "example",
    "integer": 1,
    "number": 1.5,
    "boolean": True,
    "array": [],
    "object": {},
    "null": None,
}


def sample_arguments(tool: ir.Tool) -> dict[str, ir.JSONValue]:
    """Arguments for a call of `tool`: each required property with a sample of its type (the first enum value
    when it has one)."""
    properties = tool.parameters.get("properties")
    required = tool.parameters.get("required")
    if not isinstance(properties, dict) or not isinstance(required, list):
        return {}
    out: dict[str, ir.JSONValue] = {}
    for name in required:
        schema = properties.get(name) if isinstance(name, str) else None
        if not isinstance(schema, dict):
            continue
        enum = schema.get("enum")
        kind = schema.get("type")
        if isinstance(enum, list) and enum:
            out[name] = enum[0]
        else:
            out[name] = _SAMPLES.get(kind if isinstance(kind, str) else "string", "example")
    return out


def _texts(message: ir.Message) -> list[str]:
    return [p.text for p in message.content if isinstance(p, ir.TextPart)]


def _words(texts: list[str]) -> int:
    return sum(len(t.split()) for t in texts)


def _tool_to_call(request: ir.Request) -> ir.Tool | None:
    if not request.tools or isinstance(request.tool_choice, ir.ToolChoiceNone):
        return None
    last = request.messages[-1] if request.messages else None
    if last is None or any(isinstance(p, ir.ToolResultPart) for p in last.content):
        return None
    if isinstance(request.tool_choice, ir.ToolChoiceTool):
        named = [t for t in request.tools if t.name == request.tool_choice.name]
        return named[0] if named else None
    return request.tools[0]


def generic_reply(request: ir.Request) -> ReplyOk:
    """The generic reply to `request` (the rule in this module's docstring)."""
    input_words = _words([request.system or ""] + [t for m in request.messages for t in _texts(m)])
    tool = _tool_to_call(request)
    if tool is not None:
        arguments = sample_arguments(tool)
        call = ir.ToolCallPart(
            id=f"call_generic_{len(request.messages)}",
            name=tool.name,
            arguments=arguments,
            arguments_raw=json.dumps(arguments, separators=(",", ":")),
        )
        usage = ir.Usage(input_tokens=input_words, output_tokens=len(arguments) + 1)
        return ReplyOk(content=[call], stop_reason=ir.StopReason(kind="tool_use"), usage=usage)
    users = [m for m in request.messages if m.role == "user"]
    asked = " ".join(_texts(users[-1])) if users else ""
    text = f"{GENERIC_TEXT} {json.dumps(asked, ensure_ascii=False)}"
    usage = ir.Usage(input_tokens=input_words, output_tokens=_words([text]))
    return ReplyOk(content=[ir.TextPart(text=text)], usage=usage)


def respond_generic(codec: Codec, http_request: HttpRequest) -> WireReply:
    """`codec`'s provider answering `http_request` with the generic reply, streamed when the request streams."""
    _, path = split_scenario(http_request.path)
    http_request = dataclasses.replace(http_request, path=path)
    request = codec.decode_request(http_request)
    reply = generic_reply(request)
    stream = codec.is_stream_request(http_request)
    # Distinct requests get distinct ids (as from a real provider), the same request the same ones.
    digest = hashlib.sha256(http_request.body).hexdigest()[:16]
    seed = f"{codec.name}/{GENERIC_ID}/{digest}/{'stream' if stream else 'nonstream'}"
    if stream:
        chunking = effective(codec.name, Chunking())
        out = stream_reply(codec, request, scripted_events(reply, chunking, model=request.model), seed=seed)
        return WireReply(200, dict(out.headers), list(out.chunks), GENERIC_ID, True)
    body = body_reply(codec, request, scripted_response(reply, model=request.model), seed=seed)
    return WireReply(body.status, dict(body.headers), [body.body], GENERIC_ID, False)
