"""Non-streamed responses (`generateContent`) and the chunk layout the stream encoder shares."""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.gemini.chunks import ChunkDecoder
from harness.protocols.gemini.extras import decode_extras
from harness.protocols.gemini.fields import PROTOCOL as NAME
from harness.protocols.gemini.fields import fail, load_object
from harness.protocols.gemini.ids import ToolIds
from harness.protocols.gemini.mapping import finish_reason, usage_metadata
from harness.protocols.gemini.parts import PartsFold, encode_parts
from harness.wire.http import HttpResponse

JSON_TYPE = "application/json; charset=UTF-8"


def decode_response(body: bytes) -> ir.Response:
    """A generateContent body -> IR response (decoded like a one-chunk stream, so both paths agree)."""
    obj = load_object(body)
    decoder = ChunkDecoder()
    events = decoder.chunk(obj, 0) + decoder.finish(require_terminal=False)
    terminal = events[-1]
    if isinstance(terminal, ir.ErrorEvent):
        raise fail(f"body is an error object, not a response: {terminal.error.message!r}", 0)
    assert isinstance(terminal, ir.Done)  # finish() always ends with Done or ErrorEvent
    start = events[0]
    assert isinstance(start, ir.MessageStart)
    fold = PartsFold()
    fold.add(events)
    usage = terminal.usage or ir.Usage()
    return ir.Response(
        id=start.id,
        model=start.model,
        content=list(fold.parts),
        stop_reason=terminal.stop_reason,
        usage=usage,
        extras=decode_extras(obj),
    )


FUNCTION_CALL_MESSAGE = "Model generated function call(s)."
"""The `finishMessage` Gemini adds when a turn ends with function calls."""


def chunk_object(
    parts: list[dict[str, Any]],
    *,
    response_id: str | None,
    model: str | None,
    usage: ir.Usage | None,
    finish: str | None = None,
    calls: bool = False,
    extras: ir.ProviderExtras | None = None,
) -> dict[str, Any]:
    """One GenerateContentResponse in Google's field order: candidates, usageMetadata, modelVersion, responseId;
    with the IR's Gemini extras filling in what it lacks. `calls`: the turn produced function calls (a STOP
    then says so in `finishMessage`, as Gemini does)."""
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish is not None:
        candidate["finishReason"] = finish
    candidate["index"] = 0
    if finish == "STOP" and calls:
        candidate["finishMessage"] = FUNCTION_CALL_MESSAGE
    out: dict[str, Any] = {"candidates": [candidate]}
    meta = usage_metadata(usage)
    if meta is not None:
        out["usageMetadata"] = meta
    if model is not None:
        out["modelVersion"] = model
    if response_id is not None:
        out["responseId"] = response_id
    mine = (extras or {}).get(NAME)
    return ir.fill_missing(out, mine) if mine else out


def encode_response(response: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
    """IR response -> generateContent body. A response without a stop reason has no finishReason."""
    parts = encode_parts(response.content, ToolIds())
    finish = finish_reason(response.stop_reason) if response.stop_reason is not None else None
    calls = any(isinstance(p, ir.ToolCallPart) for p in response.content)
    body = chunk_object(
        parts,
        response_id=response.id,
        model=response.model,
        usage=response.usage,
        finish=finish,
        calls=calls,
        extras=response.extras,
    )
    return HttpResponse(status=200, headers={"content-type": JSON_TYPE}, body=common.dump_json(body))
