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
from harness.protocols.responses import ids, items, request_encode
from harness.protocols.responses.mapping import decode_usage, encode_usage, status_of, stop_reason
from harness.protocols.responses.reader import NAME, JSONDict, Reader, hint_list, load_object
from harness.protocols.responses.request_decode import SHAPE


def decode_response(body: bytes) -> ir.Response:
    """A response object -> IR response (its output items in order, its status as the stop reason)."""
    r = Reader()
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
    output = items.encode_output(response.content, response_id, incomplete=status == "incomplete")
    return response_object(
        response_id,
        response.model,
        status=status,
        reason=reason,
        output=output,
        usage=encode_usage(response.usage),
        request=request,
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
) -> JSONDict:
    """A response object in the API's own field order, echoing the request's settings."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": 0,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": {"reason": reason} if status == "incomplete" else None,
        **_echo(request),
        "model": model or "",
        "output": list(output),
        "usage": usage,
    }


def _echo(request: ir.Request | None) -> dict[str, Any]:
    """The request settings a response object repeats (the API's defaults when the request is unknown)."""
    known = request is not None
    if request is None:
        request = ir.Request(model="")
    raw = request.provider_fields.get(NAME, {})
    shape = raw.get(SHAPE)
    # A stored response unless the client (or, for a translated request, the encoder's default) said otherwise.
    store = raw.get("store", not known or "store" in hint_list(shape, "omitted"))
    thinking = request.thinking
    fmt = request.response_format or ir.ResponseFormatText()
    choice = request.tool_choice
    return {
        "instructions": request.system,
        "max_output_tokens": request.max_tokens,
        "metadata": raw.get("metadata") or {},
        "parallel_tool_calls": True if request.parallel_tool_calls is None else request.parallel_tool_calls,
        "previous_response_id": raw.get("previous_response_id"),
        "reasoning": request_encode.reasoning(thinking) if thinking is not None else {"effort": None, "summary": None},
        "store": store,
        "temperature": 1.0 if request.temperature is None else request.temperature,
        "text": {"format": request_encode.response_format(fmt)},
        "tool_choice": "auto" if choice is None else request_encode.tool_choice(choice),
        "tools": request_encode.tools(request, shape if isinstance(shape, dict) else None),
        "top_p": 1.0 if request.top_p is None else request.top_p,
        "truncation": "disabled",
        "user": None,
    }
