"""Non-streamed `chat.completion` bodies <-> IR responses.

A Chat Completions message has one reasoning text (compatible servers), one content string and then tool
calls, so IR content decodes in that order; encoding joins thinking parts and text parts (a listed loss).
A `refusal` message decodes as text with stop kind `refusal`. Only choice 0 is read: a proxy under test is
asked for one choice, and `n` > 1 answers are rejected rather than silently cut.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.jsonread import Reader
from harness.protocols.openai.mapping import (
    content_text,
    decode_usage,
    encode_usage,
    finish_reason,
    first_reasoning,
    legacy_call,
    stop_reason,
)
from harness.protocols.openai.profile import REASONING_SIGNATURE, JSONDict, Profile

PLACEHOLDER_ID = "chatcmpl-harness"
"""Response id sent when the IR response has none (OpenAI's schema requires one)."""


def tool_call_part(profile: Profile, r: Reader, item: Any, where: str, response_id: str | None) -> ir.ToolCallPart:
    """One `tool_calls` entry of a response message."""
    call = r.obj(item, where)
    function = r.obj(call.get("function"), f"{where}.function")
    name = r.str_(function.get("name"), f"{where}.function.name")
    raw = r.opt_str(function.get("arguments"), f"{where}.function.arguments") or ""
    call_id = r.opt_str(call.get("id"), f"{where}.id") or common.synth_tool_id(
        profile.tool_id_prefix, response_id, where
    )
    return ir.ToolCallPart(id=call_id, name=name, arguments=common.parse_arguments(raw), arguments_raw=raw)


def decode_response(profile: Profile, body: bytes) -> ir.Response:
    """A `chat.completion` body -> IR response."""
    r = Reader(profile.name)
    data = r.obj(profile.decode_body(common.load_object(profile.name, body, what="response body")), "body")
    response_id = r.opt_str(data.get("id"), "id")
    choices = r.opt_lst(data.get("choices"), "choices")
    content: list[ir.OutputPart] = []
    stop: ir.StopReason | None = None
    if choices:
        if len(choices) > 1:
            r.fail("choices", f"{len(choices)} choices; only n=1 is supported")
        choice = r.obj(choices[0], "choices[0]")
        # The message is optional: a choice whose output the content filter removed has none (Azure OpenAI:
        # `finish_reason: content_filter` and no `message`); it decodes as no content.
        message = r.opt_obj(choice.get("message"), "choices[0].message") or {}
        if legacy_call(message.get("function_call")):
            r.fail("choices[0].message.function_call", "the legacy functions API is not supported")
        thinking = first_reasoning(profile, r, message, "choices[0].message")
        signature = r.opt_str(message.get(REASONING_SIGNATURE), f"choices[0].message.{REASONING_SIGNATURE}")
        if thinking or signature is not None:
            content.append(ir.ThinkingPart(text=thinking or "", signature=signature))
        text = content_text(r, message.get("content"), "choices[0].message.content")
        refusal = r.opt_str(message.get("refusal"), "choices[0].message.refusal")
        if text or refusal:
            content.append(ir.TextPart(text=text + (refusal or "")))
        calls = r.opt_lst(message.get("tool_calls"), "choices[0].message.tool_calls")
        for i, item in enumerate(calls):
            content.append(tool_call_part(profile, r, item, f"choices[0].message.tool_calls[{i}]", response_id))
        raw_finish = r.opt_str(choice.get("finish_reason"), "choices[0].finish_reason")
        stop = stop_reason(profile, raw_finish, refused=bool(refusal))
    usage = decode_usage(profile, r, data.get("usage"))
    return ir.Response(
        id=response_id,
        model=r.opt_str(data.get("model"), "model"),
        content=content,
        stop_reason=stop,
        usage=usage or ir.Usage(),
        extras=decode_extras(profile, data),
    )


def encode_response_body(profile: Profile, response: ir.Response) -> JSONDict:
    """An IR response as a `chat.completion` body."""
    message: JSONDict = {"role": "assistant"}
    thinking = "".join(p.text for p in response.content if isinstance(p, ir.ThinkingPart))
    if thinking:
        message[profile.reasoning_field] = thinking
    texts = [p.text for p in response.content if isinstance(p, ir.TextPart)]
    message["content"] = "".join(texts) if texts else None
    if profile.wire.refusal:
        message["refusal"] = None
    if profile.wire.annotations:
        message["annotations"] = []
    calls = [p for p in response.content if isinstance(p, ir.ToolCallPart)]
    if calls:
        message["tool_calls"] = [
            {
                "id": profile.encode_tool_id(c.id),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_raw},
            }
            for c in calls
        ]
    choice: JSONDict = {"index": 0, "message": message}
    if profile.wire.logprobs:
        choice["logprobs"] = None
    choice["finish_reason"] = finish_reason(response.stop_reason)
    body: JSONDict = {
        "id": response.id or PLACEHOLDER_ID,
        "object": "chat.completion",
        "created": common.unix_now(),  # the proxy answers now (the upstream's own time is not in the IR)
        "model": response.model or "",
        "choices": [choice],
        "usage": encode_usage(profile, response.usage),
    }
    for key, value in (response.extras or {}).get(profile.name, {}).items():
        body.setdefault(key, value)
    return profile.encode_body(body)


BODY_KEYS = frozenset({"id", "object", "created", "model", "choices", "usage", "error", "obfuscation"})
"""Top-level keys of a body or chunk the decoder reads (or that vary per chunk, like `obfuscation`); the others
(`system_fingerprint`, `service_tier`, a provider's own) are kept as extras."""


def decode_extras(profile: Profile, obj: JSONDict) -> ir.ProviderExtras | None:
    """The top-level fields of a body or first chunk that the IR has no place for, as the profile's extras."""
    found = {k: v for k, v in obj.items() if k not in BODY_KEYS and k not in profile.own_fields}
    return {profile.name: found} if found else None
