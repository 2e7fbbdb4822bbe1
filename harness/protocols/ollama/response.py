"""Non-streamed `/api/chat` responses, and the pieces streamed chunks share with them (stop reason, usage).

A non-streamed reply is one JSON object: `{model, created_at, message: {role, content, thinking?,
tool_calls?}, done: true, done_reason, total_duration, load_duration, prompt_eval_count, prompt_eval_duration,
eval_count, eval_duration}`. Durations and `created_at` are informational and dropped; Ollama has no response id.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.ollama._fields import PROTOCOL, READ, decode_tool_call, encode_tool_call
from harness.wire.http import HttpResponse

# IR stop kinds Ollama has no `done_reason` for are written as the IR kind name, so that a translation through
# Ollama keeps them; the decoder reads those names back. Ollama itself sends stop, length, load and unload.
_PASSTHROUGH_KINDS: frozenset[ir.StopKind] = frozenset({"content_filter", "refusal", "error"})


def stop_reason(done_reason: str | None, has_tool_calls: bool) -> ir.StopReason | None:
    """Ollama `done_reason` -> IR: stop -> end_turn (tool_use when the reply has tool calls), length ->
    max_tokens; None when the chunk does not say."""
    if done_reason is None:
        return None
    if done_reason == "stop":
        return ir.StopReason(kind="tool_use" if has_tool_calls else "end_turn", raw=done_reason)
    if done_reason == "length":
        return ir.StopReason(kind="max_tokens", raw=done_reason)
    if done_reason in _PASSTHROUGH_KINDS:
        return ir.StopReason(kind=done_reason, raw=done_reason)
    return ir.StopReason(kind="other", raw=done_reason)


def done_reason(reason: ir.StopReason | None) -> str | None:
    """IR stop reason -> Ollama `done_reason` (end_turn, tool_use, stop_sequence -> stop; max_tokens -> length)."""
    if reason is None:
        return None
    if reason.kind in ("end_turn", "tool_use", "stop_sequence"):
        return "stop"
    if reason.kind == "max_tokens":
        return "length"
    if reason.kind in _PASSTHROUGH_KINDS:
        return reason.kind
    return reason.raw or reason.kind


def usage(chunk: dict[str, Any]) -> ir.Usage:
    """`prompt_eval_count` -> input tokens, `eval_count` -> output tokens (Ollama reports nothing else)."""
    return ir.Usage(
        input_tokens=READ.get_int(chunk, "prompt_eval_count", "response"),
        output_tokens=READ.get_int(chunk, "eval_count", "response"),
    )


def usage_fields(value: ir.Usage | None) -> dict[str, int]:
    """IR usage -> the Ollama count fields that carry it."""
    out: dict[str, int] = {}
    if value is not None and value.input_tokens is not None:
        out["prompt_eval_count"] = value.input_tokens
    if value is not None and value.output_tokens is not None:
        out["eval_count"] = value.output_tokens
    return out


def created_at() -> str:
    """Now (or SOURCE_DATE_EPOCH when set), in Ollama's RFC 3339 form with a `Z` suffix."""
    return rfc3339(common.unix_now())


@lru_cache(maxsize=4)
def rfc3339(seconds: int) -> str:
    """Unix `seconds` in Ollama's RFC 3339 form. Cached: every line of a stream carries the time, which is in
    whole seconds and so the same for all the lines of a second (formatting it was a third of a line's cost)."""
    when = datetime.fromtimestamp(seconds, UTC)
    return when.isoformat(timespec="microseconds").replace("+00:00", "Z")


def decode_response(body: bytes) -> ir.Response:
    """A non-streamed `/api/chat` reply -> IR."""
    obj = common.load_object(PROTOCOL, body, what="response body")
    if "error" in obj:
        raise READ.error(f"response body is an error, not a reply: {obj['error']!r}")
    message = READ.get_obj(obj, "message", "response")
    if message is None:
        raise READ.error("response has no message")
    content: list[ir.OutputPart] = []
    thinking = READ.get_str(message, "thinking", "response.message")
    if thinking:
        content.append(ir.ThinkingPart(text=thinking))
    text = READ.get_str(message, "content", "response.message")
    if text:
        content.append(ir.TextPart(text=text))
    calls = READ.get_list(message, "tool_calls", "response.message")
    content += [decode_tool_call(c, i, f"response.message.tool_calls[{i}]") for i, c in enumerate(calls)]
    return ir.Response(
        model=READ.get_str(obj, "model", "response"),
        content=content,
        stop_reason=stop_reason(READ.get_str(obj, "done_reason", "response"), bool(calls)),
        usage=usage(obj),
        extras=decode_extras(obj),
    )


def encode_response(response: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
    """IR -> a non-streamed `/api/chat` reply: thinking, text and tool calls each joined into one field."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(p.text for p in response.content if isinstance(p, ir.TextPart)),
    }
    thinking = "".join(p.text for p in response.content if isinstance(p, ir.ThinkingPart))
    if thinking:
        message["thinking"] = thinking
    calls = [p for p in response.content if isinstance(p, ir.ToolCallPart)]
    if calls:
        message["tool_calls"] = [encode_tool_call(c, i) for i, c in enumerate(calls)]
    body = chunk_head(response.model, request, response.extras) | {"message": message, "done": True}
    reason = done_reason(response.stop_reason)
    if reason is not None:
        body["done_reason"] = reason
    body.update(usage_fields(response.usage))
    body = with_extras(body, response.extras)
    return HttpResponse(200, {"content-type": "application/json; charset=utf-8"}, common.dump_json(body))


def chunk_head(
    model: str | None, request: ir.Request | None, extras: ir.ProviderExtras | None = None
) -> dict[str, Any]:
    """The `model` and `created_at` fields every Ollama reply object starts with (`created_at` from the Ollama
    extras when they have one, else now)."""
    name = model if model is not None else (request.model if request is not None else None)
    head: dict[str, Any] = {} if name is None else {"model": name}
    stamp = (extras or {}).get(PROTOCOL, {}).get("created_at")
    head["created_at"] = stamp if isinstance(stamp, str) else created_at()
    return head


FINAL_KEYS = frozenset({"model", "created_at", "message", "done", "done_reason", "prompt_eval_count", "eval_count"})
"""Keys of a final reply object the decoder reads; the others (durations) are kept as extras."""


def decode_extras(obj: dict[str, Any]) -> ir.ProviderExtras | None:
    """The fields of a final reply object the IR has no place for (the durations), as Ollama extras."""
    found = {k: v for k, v in obj.items() if k not in FINAL_KEYS}
    return {PROTOCOL: found} if found else None


def with_extras(obj: dict[str, Any], extras: ir.ProviderExtras | None) -> dict[str, Any]:
    """A reply object with the Ollama extras filling in what it lacks (`created_at` is the head's business)."""
    mine = {k: v for k, v in (extras or {}).get(PROTOCOL, {}).items() if k != "created_at"}
    return ir.fill_missing(obj, mine) if mine else obj
