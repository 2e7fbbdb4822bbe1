"""Non-streamed responses (`object: "response"`) <-> IR, and the response object every stream event that carries
one (`response.created`, `.in_progress`, `.completed`, `.incomplete`) is built from.

The response object echoes the request's settings (instructions, tools, tool_choice, sampling, text format,
reasoning, max_output_tokens) as the API does; without the request, the API's defaults. An IR response without
an id or model gets a placeholder (the wire requires both, a listed loss).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.responses import extras as extras_
from harness.protocols.responses import ids, items, request_encode
from harness.protocols.responses.mapping import decode_usage, encode_usage, status_of, stop_reason
from harness.protocols.responses.reader import NAME, JSONDict, Reader, hint_list, hint_table, load_object
from harness.protocols.responses.request_decode import SHAPE


def decode_response(body: bytes) -> ir.Response:
    """A response object -> IR response (its output items in order, its status as the stop reason)."""
    r = Reader(NAME)
    data = r.obj(load_object(body, what="response body"), "body")
    if data.get("object", "response") != "response":
        r.fail("object", f"expected 'response', got {data.get('object')!r}")
    content, refused = items.decode_output(r, r.lst(data.get("output"), "output"))
    return ir.Response(
        id=r.opt_str(data.get("id"), "id"),
        model=r.opt_str(data.get("model"), "model"),
        content=content,
        stop_reason=finished(r, data, calls=any(isinstance(p, ir.ToolCallPart) for p in content), refused=refused),
        usage=decode_usage(r, data.get("usage")) or ir.Usage(),
        extras=extras_.decode(r, data),
    )


def finished(r: Reader, data: JSONDict, *, calls: bool, refused: bool) -> ir.StopReason | None:
    """The stop reason a response object's status and incomplete details say."""
    details = r.opt_obj(data.get("incomplete_details"), "incomplete_details") or {}
    reason = r.opt_str(details.get("reason"), "incomplete_details.reason")
    return stop_reason(r.opt_str(data.get("status"), "status"), reason, calls=calls, refused=refused)


def encode_response_body(response: ir.Response, request: ir.Request | None = None) -> JSONDict:
    """An IR response as a finished response object."""
    response_id = ids.response_id(response.id)
    status, reason = status_of(response.stop_reason)
    refused = response.stop_reason is not None and response.stop_reason.kind == "refusal"
    output = items.encode_output(response.content, response_id, incomplete=status == "incomplete", refused=refused)
    return response_object(
        response_id,
        response.model,
        status=status,
        reason=reason,
        output=output,
        usage=encode_usage(response.usage),
        request=request,
        extras=response.extras,
    )


def response_object(
    response_id: str,
    model: str | None,
    *,
    status: str,
    output: Sequence[JSONDict],
    usage: JSONDict | None,
    reason: str | None = None,
    request: ir.Request | None = None,
    extras: ir.ProviderExtras | None = None,
) -> JSONDict:
    """A response object in the API's own field order, echoing the request's settings, with the Responses
    extras of the IR (the provider's own fields, see `extras`) laid under it."""
    now = common.unix_now()
    obj = {
        "id": response_id,
        "object": "response",
        "created_at": now,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": {"reason": reason} if status == "incomplete" else None,
        **_echo(request),
        "model": model or "",
        "output": list(output),
        "usage": usage,
        # Required by the Open Responses spec (nullable), in every api.openai.com response object.
        "completed_at": now if status == "completed" else None,
        "service_tier": "default",
    }
    return extras_.apply(obj, extras)


def _echo(request: ir.Request | None) -> dict[str, Any]:
    """The request settings a response object repeats, each the API's default when the request did not say
    (or is unknown): a function tool without `strict` is strict, a requested reasoning summary `auto` is the
    `detailed` one reasoning models give, an unrequested one null."""
    known = request is not None
    if request is None:
        request = ir.Request(model="")
    raw = request.provider_fields.get(NAME, {})
    shape = raw.get(SHAPE)
    # A stored response unless the client (or, for a translated request, the encoder's default) said otherwise.
    store = raw.get("store", not known or "store" in hint_list(shape, "omitted"))
    fmt = request.response_format or ir.ResponseFormatText()
    choice = request.tool_choice
    text = hint_table(shape, "text")
    return {
        "frequency_penalty": raw.get("frequency_penalty", 0.0),
        "instructions": request.system,
        "max_output_tokens": request.max_tokens,
        "max_tool_calls": raw.get("max_tool_calls"),
        "metadata": raw.get("metadata") or {},
        "parallel_tool_calls": True if request.parallel_tool_calls is None else request.parallel_tool_calls,
        "presence_penalty": raw.get("presence_penalty", 0.0),
        "previous_response_id": raw.get("previous_response_id"),
        "prompt_cache_key": raw.get("prompt_cache_key"),
        "reasoning": _reasoning(request.thinking, shape),
        "safety_identifier": raw.get("safety_identifier"),
        "store": store,
        "temperature": 1.0 if request.temperature is None else request.temperature,
        "text": {"format": request_encode.response_format(fmt), "verbosity": text.get("verbosity", "medium")},
        "tool_choice": "auto" if choice is None else request_encode.tool_choice(choice),
        "tools": [_strict(t) for t in request_encode.tools(request, shape if isinstance(shape, dict) else None)],
        "top_logprobs": raw.get("top_logprobs", 0),
        "top_p": 1.0 if request.top_p is None else request.top_p,
        "truncation": raw.get("truncation", "disabled"),
        "user": raw.get("user"),
    }


def _reasoning(thinking: ir.ThinkingConfig | None, shape: Any) -> JSONDict:
    if thinking is None:
        return {"effort": None, "summary": None}
    asked = request_encode.reasoning(thinking, hint_table(shape, "reasoning"))
    summary = asked.get("summary")
    return {"effort": asked.get("effort"), "summary": "detailed" if summary == "auto" else summary}


def _strict(tool: JSONDict) -> JSONDict:
    return {**tool, "strict": True} if tool.get("type") == "function" and "strict" not in tool else tool
