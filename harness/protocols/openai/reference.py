"""The reference backend of an OpenAI-compatible provider: what the provider says beyond what the encoders write
(its ids, `system_fingerprint` and the like, headers), declared per profile in `Profile.reference`, and how a
Chat Completions body splits into wire events for the shape comparison (`harness.protocols.shape`)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.openai.profile import JSONDict, Profile, same_error_body
from harness.protocols.shape import WireEvent
from harness.wire.http import HttpRequest, HttpResponse
from harness.wire.sse import SSEDecoder


class OpenAIReference:
    """A profile's provider as a reference backend (see `ReferenceFacts`)."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.facts = profile.reference

    @property
    def differences(self) -> Mapping[str, str]:
        """The profile's declared shape differences."""
        return self.facts.differences

    def _extras(self, request: ir.Request, seed: str) -> ir.ProviderExtras | None:
        fields = self.facts.extras(request, seed)
        return {self.profile.name: fields} if fields else None

    def events(self, events: list[ir.StreamEvent], *, request: ir.Request, seed: str) -> list[ir.StreamEvent]:
        """The provider's ids and per-chunk fields."""
        out: list[ir.StreamEvent] = []
        for event in events:
            if isinstance(event, ir.MessageStart):
                extras = ir.merge_extras(self._extras(request, seed), event.extras)
                event = event.model_copy(update={"id": self.facts.response_id(f"{seed}/{event.id}"), "extras": extras})
            elif isinstance(event, ir.ToolCallStart):
                event = event.model_copy(update={"id": self.facts.tool_id(f"{seed}/{event.id}")})
            out.append(event)
        return out

    def response(self, response: ir.Response, *, request: ir.Request, seed: str) -> ir.Response:
        """The provider's ids and body fields."""
        content = [
            p.model_copy(update={"id": self.facts.tool_id(f"{seed}/{p.id}")}) if isinstance(p, ir.ToolCallPart) else p
            for p in response.content
        ]
        update: dict[str, Any] = {
            "id": self.facts.response_id(f"{seed}/{response.id}"),
            "content": content,
            "extras": ir.merge_extras(self._extras(request, seed), response.extras),
        }
        return response.model_copy(update=update)

    def error(self, response: HttpResponse, *, error: ir.IRError, seed: str) -> HttpResponse:
        """The error body as the provider sends it (`ReferenceFacts.error_body`)."""
        if self.facts.error_body is same_error_body:
            return response
        body = common.load_object(self.profile.name, response.body, what="error body")
        return HttpResponse(response.status, response.headers, common.dump_json(self.facts.error_body(body, error)))

    def headers(self, *, stream: bool, status: int, seed: str) -> dict[str, str]:
        """The provider's response headers."""
        return self.facts.headers(stream, status, seed)

    def as_requested(self, recorded: HttpRequest, request: HttpRequest, chunks: list[bytes]) -> list[bytes]:
        """A recorded stream as the provider answers `request`: the usage-only chunk (`choices: []`) that the
        recorded request asked for with `stream_options.include_usage` is left out when `request` does not ask
        (OpenAI: "an additional chunk will be streamed before the data: [DONE] message" only when set; usage on
        a finish chunk, Mistral's and DeepSeek's place, comes unasked: corpus mistral-stream-thinking-content-
        array.yaml asks nothing and gets it)."""
        if not _asks_usage(self.profile, recorded) or _asks_usage(self.profile, request):
            return chunks
        return usage_chunks_dropped(chunks)


def wire_events(profile: Profile, body: bytes, *, stream: bool, status: int) -> list[WireEvent]:
    """The typed events of a Chat Completions body: each SSE chunk typed by what it carries (`chunk:role`,
    `chunk:content`, `chunk:reasoning`, `chunk:tool_call` / `chunk:tool_args`, `chunk:finish`, `chunk:usage`,
    joined with `+` when one chunk carries several), `[DONE]`, an `event: error`; or the whole body."""
    if status >= 400 or not stream:
        data = common.load_json(profile.name, body, what="body")
        kind = "error" if status >= 400 else str(data.get("object", "body")) if isinstance(data, dict) else "body"
        return [WireEvent(kind, data)]
    decoder = SSEDecoder()
    out: list[WireEvent] = []
    for event in [*decoder.feed(body), *decoder.close()]:
        if event.data.strip() == "[DONE]":
            out.append(WireEvent("[DONE]", None))
            continue
        data = common.load_json(profile.name, event.data, offset=event.offset, what="stream chunk")
        if event.event != "message":
            out.append(WireEvent(f"event:{event.event}", data))
            continue
        out.append(WireEvent(chunk_type(profile, data), data))
    return out


def chunk_type(profile: Profile, chunk: Any) -> str:
    """What one stream chunk carries, as an event type (see `wire_events`)."""
    if not isinstance(chunk, dict):
        return "chunk:other"
    features: list[str] = []
    choices = chunk.get("choices")
    choice: JSONDict = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
    assert isinstance(delta, dict)
    if delta.get("role"):
        features.append("role")
    if any(delta.get(name) for name in (*profile.reasoning_fields_read, "reasoning_details")):
        features.append("reasoning")
    if delta.get("content") or delta.get("refusal"):
        features.append("content")
    calls = delta.get("tool_calls")
    if isinstance(calls, list) and calls:
        named = any(isinstance(c, dict) and (c.get("id") or (c.get("function") or {}).get("name")) for c in calls)
        features.append("tool_call" if named else "tool_args")
    if choice.get("finish_reason"):
        features.append("finish")
    if chunk.get("usage"):
        features.append("usage")
    if chunk.get("error"):
        features.append("error")
    return "chunk:" + "+".join(features or ["empty"])


def _asks_usage(profile: Profile, request: HttpRequest) -> bool:
    body = common.load_object(profile.name, request.body, what="request body")
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def _usage_only(event: bytes) -> bool:
    lines = [line[5:].strip() for line in event.splitlines() if line.startswith(b"data:")]
    if not lines:
        return False
    try:
        data = json.loads(b"\n".join(lines))
    except ValueError:
        return False  # [DONE] and the like: not a chunk
    return isinstance(data, dict) and data.get("choices") == [] and isinstance(data.get("usage"), dict)


def usage_chunks_dropped(chunks: list[bytes]) -> list[bytes]:
    """The SSE body without its usage-only chunks, the other bytes at their recorded chunk boundaries."""
    body = b"".join(chunks)
    removed: list[tuple[int, int]] = []
    start = 0
    for match in _EVENT_END.finditer(body):
        if _usage_only(body[start : match.end()]):
            removed.append((start, match.end()))
        start = match.end()
    if not removed:
        return chunks

    out: list[bytes] = []
    begin = 0
    for chunk in chunks:
        end = begin + len(chunk)
        kept = b"".join(body[a:b] for a, b in _kept_spans(begin, end, removed))
        if kept:
            out.append(kept)
        begin = end
    return out


def _kept_spans(begin: int, end: int, removed: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of [begin, end) outside every removed span."""
    spans = [(begin, end)]
    for a, b in removed:
        spans = [part for s, e in spans for part in ((s, min(e, a)), (max(s, b), e)) if part[0] < part[1]]
    return spans
