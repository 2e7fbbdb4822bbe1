"""The Gemini reference backend: what generativelanguage.googleapis.com says beyond what the encoders write, and
how its bodies split into wire events for the shape comparison (`harness.protocols.shape`).

Measured against the corpus (docs/shape.md). Real answers carry a `responseId` (22-23 base-64-url characters),
the usage known so far on every chunk (the prompt count from the first chunk on, the candidates count growing),
and `content-disposition: attachment` on streams.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.gemini.fields import load_object
from harness.protocols.reference import token
from harness.protocols.shape import WireEvent
from harness.wire.http import HttpResponse
from harness.wire.jsonarray import JSONArrayDecoder
from harness.wire.sse import SSEDecoder

BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_NON_WS = re.compile(rb"[^ \t\r\n]")
_OPAQUE = frozenset({"args", "response"})
"""functionCall.args and functionResponse.response hold the user's data, not the wire's shape."""

_STREAM_EXTRAS = {"gemini": {"usageMetadata": {"serviceTier": "standard"}}}
"""What the newest streams say in every chunk's usageMetadata: the service tier."""

_TRAILING_FINISH = (
    "Gemini 2.5 puts the finishReason (and finishMessage) on its last chunk with content; Gemini 3 sends it on a "
    "trailing chunk with an empty text part, as the reference does: holding back the last content chunk until "
    "the finish is known would buffer a translated stream"
)

DIFFERENCES: Mapping[str, str] = MappingProxyType(
    {
        "event real chunk:functionCall+finish": _TRAILING_FINISH,
        "path ours chunk:text+finish candidates[].finishMessage": _TRAILING_FINISH,
        "sequence both @? * > chunk:*+finish vs * > chunk:text+finish": _TRAILING_FINISH,
        "sequence both @0 chunk:*+finish vs * > chunk:text+finish": _TRAILING_FINISH,
        "path ours * usageMetadata.serviceTier": (
            "only the newest recording (the JSON-array stream) names the `serviceTier`; the reference names it "
            "in every stream chunk, as today's API does"
        ),
    }
)
"""Shape differences from the real wire that remain, with their reasons (see `Reference.differences`)."""


def response_id(seed: str) -> str:
    """A `responseId` in Gemini's form: 23 base-64-url characters."""
    return token(seed, 23, BASE64URL)


class GeminiReference:
    """What the Gemini API adds: its response ids and the running usage on every chunk."""

    differences: Mapping[str, str] = DIFFERENCES

    def events(self, events: list[ir.StreamEvent], *, request: ir.Request, seed: str) -> list[ir.StreamEvent]:
        """The response id, and after each delta the usage so far (output counted at four characters a
        token, never beyond the final count)."""
        final = next((e.usage for e in reversed(events) if isinstance(e, ir.Done) and e.usage), None)
        start = next((e.usage for e in events if isinstance(e, ir.MessageStart) and e.usage), None)
        prompt = ir.Usage(input_tokens=(start or final or ir.Usage()).input_tokens)
        out: list[ir.StreamEvent] = []
        written = thought = 0
        for event in events:
            if isinstance(event, ir.MessageStart) and event != ir.MessageStart():
                extras = ir.merge_extras(_STREAM_EXTRAS, event.extras)
                update = {"id": response_id(f"{seed}/{event.id}"), "usage": prompt, "extras": extras}
                event = event.model_copy(update=update)
            if isinstance(event, ir.TextDelta | ir.ThinkingDelta | ir.ToolCallDelta) and final is not None:
                # The chunk that carries this delta counts it already: the usage goes first.
                size = len(event.text if not isinstance(event, ir.ToolCallDelta) else event.arguments)
                written += size
                thought += size if isinstance(event, ir.ThinkingDelta) else 0
                out.append(ir.UsageEvent(usage=_so_far(final, written, thought)))
            out.append(event)
        return out

    def response(self, response: ir.Response, *, request: ir.Request, seed: str) -> ir.Response:
        """The response id in Gemini's form."""
        return response.model_copy(update={"id": response_id(f"{seed}/{response.id}")})

    def error(self, response: HttpResponse, *, error: ir.IRError, seed: str) -> HttpResponse:
        """A rejected API key comes with Google's ErrorInfo (reason API_KEY_INVALID) and a localized message."""
        if error.kind is not ir.ErrorKind.AUTH:
            return response
        body = load_object(response.body, what="error body")
        inner = body.get("error")
        if not isinstance(inner, dict) or "details" in inner:
            return response
        inner["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            },
            {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": error.message},
        ]
        return HttpResponse(response.status, response.headers, common.dump_json(body))

    def headers(self, *, stream: bool, status: int, seed: str) -> dict[str, str]:
        """Streams come as an attachment."""
        return {"content-disposition": "attachment"} if stream and status < 400 else {}


def _so_far(final: ir.Usage, written: int, thought: int) -> ir.Usage:
    """The running usage after `written` characters of output (`thought` of them thinking). Gemini thinks before
    it answers, so the thoughts count is whole from the first chunk; the candidates count grows with the text."""
    reasoning = final.reasoning_tokens
    candidates = max((final.output_tokens or 0) - (reasoning or 0), 0)
    candidates = min(candidates, -(-(written - thought) // 4))
    return ir.Usage(
        input_tokens=final.input_tokens, output_tokens=candidates + (reasoning or 0), reasoning_tokens=reasoning
    )


REFERENCE = GeminiReference()
"""The Gemini reference (the codec's `reference`)."""


def wire_events(body: bytes, *, stream: bool, status: int) -> list[WireEvent]:
    """The typed events of a Gemini body: each response object of a stream (SSE or JSON array) typed by what its
    candidate carries (`chunk:text`, `chunk:thought`, `chunk:functionCall`, `+finish`), an `error` object, or
    the whole body (`response`)."""
    match = _NON_WS.search(body)
    first = body[match.start()] if match else None
    if status >= 400 or not stream or first == ord("{"):
        data = load_object(body)
        return [WireEvent("error" if status >= 400 or "error" in data else "response", data, _OPAQUE)]
    objects: list[Any]
    if first == ord("["):
        decoder = JSONArrayDecoder()
        objects = [*decoder.feed(body), *decoder.close()]
    else:
        sse = SSEDecoder()
        objects = [load_object(e.data, offset=e.offset) for e in [*sse.feed(body), *sse.close()] if e.data]
    return [WireEvent(chunk_type(obj), obj, _OPAQUE) for obj in objects]


def chunk_type(obj: Any) -> str:
    """What one response object carries, as an event type (see `wire_events`)."""
    if not isinstance(obj, dict):
        return "chunk:other"
    if "error" in obj:
        return "error"
    features: list[str] = []
    candidates = obj.get("candidates")
    candidates = candidates if isinstance(candidates, list) else []
    candidate = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
    content = candidate.get("content")
    content = content if isinstance(content, dict) else {}
    for part in content.get("parts") or []:
        if not isinstance(part, dict):
            continue
        kind = "functionCall" if "functionCall" in part else "thought" if part.get("thought") else "text"
        if kind not in features:
            features.append(kind)
    if candidate.get("finishReason"):
        features.append("finish")
    if not candidates and isinstance(obj.get("promptFeedback"), dict):
        features.append("blocked")
    return "chunk:" + "+".join(features or ["empty"])
