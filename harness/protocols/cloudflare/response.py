"""Non-streamed Workers AI replies, and the reading of reply objects that streams share.

The REST API wraps every answer in Cloudflare's envelope: `{"result": R, "success": true, "errors": [],
"messages": []}` (the Workers binding returns R itself; both are read). R comes in two forms:
- the native form of most text models: `{"response": "...", "tool_calls": [...], "usage": {...}}`, where
  `response` may be null (tool calls) or an object (JSON mode), and tool calls are `{"name", "arguments": {...}}`
  without ids (decoded with deterministic ids);
- the OpenAI form newer models answer with on the same route (`{"id", "object": "chat.completion", "model",
  "choices": [{"message": {"content", "reasoning_content" | "reasoning", "tool_calls"}, "finish_reason"}],
  "usage"}`).
`usage` is OpenAI's shape (`prompt_tokens`, `completion_tokens`, `total_tokens`, `prompt_tokens_details.
cached_tokens`) plus `neurons`, Cloudflare's billing unit, which has no IR field. The native form has no finish
reason: the stop reason is `tool_use` when the reply calls tools, else `end_turn`. Keys of a reply object neither
form has, and unknown keys of its `usage` (`neurons`), are kept as extras and written back (`decode_extras`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.cloudflare.paths import PROTOCOL, READ
from harness.protocols.cloudflare.request import decode_call
from harness.wire.http import HttpResponse

FINISH_KINDS: dict[str, ir.StopKind] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "model_length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "content_filter",
    "error": "error",
}
"""Workers AI `finish_reason` values -> IR stop kind (others: `other`)."""


@dataclass
class Piece:
    """What one reply object (a whole `result`, or one stream chunk) says, whichever form it has."""

    text: str = ""
    reasoning: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    finish: str | None = None
    usage: ir.Usage | None = None
    id: str | None = None
    model: str | None = None


def read(obj: dict[str, Any], where: str, *, delta: bool) -> Piece:
    """The parts of a reply object: a native one (`response`, `tool_calls`) or an OpenAI one (`choices`)."""
    piece = Piece(usage=usage(obj.get("usage"), f"{where}.usage"), id=READ.get_str(obj, "id", where))
    piece.model = READ.get_str(obj, "model", where)
    response = obj.get("response")
    if isinstance(response, str):
        piece.text = response
    elif response is not None:  # JSON mode answers with the object itself
        piece.text = common.dump_text(response)
    piece.calls = [
        READ.as_obj(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(READ.get_list(obj, "tool_calls", where))
    ]
    piece.finish = READ.get_str(obj, "finish_reason", where)
    choices = READ.get_list(obj, "choices", where)
    if choices:
        choice = READ.as_obj(choices[0], f"{where}.choices[0]")
        body = READ.get_obj(choice, "delta" if delta else "message", f"{where}.choices[0]") or {}
        piece.text += READ.get_str(body, "content", f"{where}.choices[0]") or ""
        piece.reasoning = READ.get_str(body, "reasoning_content", where) or READ.get_str(body, "reasoning", where) or ""
        piece.calls += [
            READ.as_obj(c, f"{where}.choices[0].tool_calls") for c in READ.get_list(body, "tool_calls", where)
        ]
        piece.finish = READ.get_str(choice, "finish_reason", f"{where}.choices[0]") or piece.finish
    return piece


def usage(value: Any, where: str) -> ir.Usage | None:
    """A Workers AI `usage` object -> IR (None when absent)."""
    if value is None:
        return None
    obj = READ.as_obj(value, where)
    details = READ.get_obj(obj, "prompt_tokens_details", where) or {}
    completion = READ.get_obj(obj, "completion_tokens_details", where) or {}
    return ir.Usage(
        input_tokens=READ.get_count(obj, "prompt_tokens", where),
        output_tokens=READ.get_count(obj, "completion_tokens", where),
        cache_read_tokens=READ.get_count(details, "cached_tokens", f"{where}.prompt_tokens_details"),
        reasoning_tokens=READ.get_count(completion, "reasoning_tokens", f"{where}.completion_tokens_details"),
    )


def wire_usage(value: ir.Usage) -> dict[str, Any]:
    """IR usage -> Workers AI's `usage` object."""
    prompt, completion = value.input_tokens or 0, value.output_tokens or 0
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if value.cache_read_tokens is not None:
        out["prompt_tokens_details"] = {"cached_tokens": value.cache_read_tokens}
    return out


def stop_reason(finish: str | None, called: bool) -> ir.StopReason:
    """The IR stop reason of a finish_reason, or (native form, none given) of whether tools were called."""
    if finish is None:
        return ir.StopReason(kind="tool_use" if called else "end_turn")
    return ir.StopReason(kind=FINISH_KINDS.get(finish, "other"), raw=finish)


def unwrap(obj: dict[str, Any]) -> dict[str, Any]:
    """The `result` of Cloudflare's envelope (or the object itself, as the Workers binding returns it)."""
    if "result" in obj and ("success" in obj or "errors" in obj):
        if obj.get("success") is False:
            raise READ.error(f"response body is an error envelope, not a reply: {obj.get('errors')!r}")
        return READ.as_obj(obj["result"], "response.result")
    return obj


def decode_response(body: bytes) -> ir.Response:
    """A non-streamed reply (envelope or bare result) -> IR."""
    result = unwrap(common.load_object(PROTOCOL, body, what="response body"))
    piece = read(result, "response.result", delta=False)
    extras = decode_extras(result)
    content: list[ir.OutputPart] = [ir.ThinkingPart(text=piece.reasoning)] if piece.reasoning else []
    content += [ir.TextPart(text=piece.text)] if piece.text else []
    calls = [decode_call(c, i, f"response.result.tool_calls[{i}]") for i, c in enumerate(piece.calls)]
    return ir.Response(
        id=piece.id,
        model=piece.model,
        content=[*content, *calls],
        stop_reason=stop_reason(piece.finish, bool(calls)),
        usage=piece.usage or ir.Usage(),
        extras=extras,
    )


def encode_response(response: ir.Response) -> HttpResponse:
    """IR -> a native non-streamed reply in the REST envelope, as the legacy text models answer."""
    text = "".join(p.text for p in response.content if isinstance(p, ir.TextPart))
    calls = [
        {"name": p.name, "arguments": p.arguments if p.arguments is not None else {}}
        for p in response.content
        if isinstance(p, ir.ToolCallPart)
    ]
    result: dict[str, Any] = {"response": text if text or not calls else None, "tool_calls": calls}
    result["usage"] = wire_usage(response.usage)
    result = with_extras(result, response.extras)
    body = common.dump_json({"result": result, "success": True, "errors": [], "messages": []})
    return HttpResponse(200, {"content-type": "application/json"}, body)  # the reference adds `cf-ray`


REPLY_KEYS = frozenset(
    {"response", "tool_calls", "usage", "p", "id", "object", "created", "model", "choices", "finish_reason"}
)
"""Keys of a reply object (either form, whole or streamed) the codec reads or writes, or that mean nothing (`p`,
the padding of stream events)."""
USAGE_KEYS = frozenset({"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details"})
"""`usage` keys the codec reads or writes."""


def decode_extras(obj: dict[str, Any]) -> ir.ProviderExtras | None:
    """The keys of a reply object the codec does not know, and the unknown keys of its `usage`, as extras."""
    found = {k: v for k, v in obj.items() if k not in REPLY_KEYS}
    usage_ = obj.get("usage")
    if isinstance(usage_, dict):
        rest = {k: v for k, v in usage_.items() if k not in USAGE_KEYS and k != "completion_tokens_details"}
        if rest:
            found["usage"] = rest
    return {PROTOCOL: found} if found else None


def with_extras(obj: dict[str, Any], extras: ir.ProviderExtras | None) -> dict[str, Any]:
    """A reply object with the Workers AI extras filling in what it lacks (the encoder's own values win)."""
    mine = (extras or {}).get(PROTOCOL)
    return ir.fill_missing(obj, mine) if mine else obj
