"""The Responses reference backend: what api.openai.com says beyond what the encoders write, and how its
bodies split into wire events for the shape comparison (`harness.protocols.shape`).

Measured against the corpus (docs/shape.md). Real answers carry ids like `resp_08ddf351751647d6 0169fab1b8 a7ac
81a0 81b9e2400e87fb63` (without the spaces: 16 hex digits, the creation time as 10, 4 more, `81` and 2, then
16) and `call_` + 24 base-62 characters; `created_at` and `completed_at` times; the service tier asked for
(`auto`) while the response is in progress and the one that served it (`default`) when it is done; the prompt
cache retention the model defaults to (`24h`); `moderation: null`; `billing` on a whole body; `phase` on each
message item (`final_answer`, or `commentary` for a message before a tool call); and `x-request-id`,
`openai-processing-ms` and `openai-version` headers. Everything is derived from the seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from harness import ir
from harness.protocols.reference import number, token
from harness.protocols.responses import items
from harness.protocols.responses.reader import NAME, JSONDict, load_object
from harness.protocols.shape import WireEvent
from harness.stream import accumulate
from harness.wire.http import HttpResponse
from harness.wire.sse import SSEDecoder

HEX = "0123456789abcdef"

_NEWER_API = (
    "the only recording that ends `response.incomplete` is from 2025-10 (gpt-4o), before the API sent "
    "`completed_at`, `moderation`, a message's `phase` and the prompt cache retention, or echoed "
    "`frequency_penalty` and `presence_penalty`; the reference sends them, as the later recordings do"
)
_CACHE_WRITE = (
    "the recordings (up to 2026-05) have no `input_tokens_details.cache_write_tokens`, which the openai SDK's "
    "types (3.x) require; the encoder writes it (0 when unknown) so the SDK reads every figure"
)

DIFFERENCES: Mapping[str, str] = MappingProxyType(
    {
        "type both error error.param: *string vs null": (
            "`param` names the request field an error is about; the IR error has no such field, so the "
            "reference sends null"
        ),
        "path ours * *usage.input_tokens_details.cache_write_tokens": _CACHE_WRITE,
        "path ours response.incomplete response.*_penalty": _NEWER_API,
        "path ours response.incomplete response.completed_at": _NEWER_API,
        "path ours response.incomplete response.moderation": _NEWER_API,
        "path ours response.incomplete response.output[].phase": _NEWER_API,
        "path ours response.incomplete response.prompt_cache_retention": _NEWER_API,
        "type both response.* response.prompt_cache_retention: null/string vs string": (
            "gpt-5 (2026-01) answered a request that named no prompt cache retention with null, gpt-5.5 "
            "(2026-05) with its default, `24h`; the reference answers as the newest model does"
        ),
    }
)
"""Shape differences from the real wire that remain, with their reasons (see `Reference.differences`)."""

SERVICE_TIERS = frozenset({"default", "flex", "priority", "scale"})
"""Tiers a request may ask for by name; `auto` (or none) is served by `default`."""


def created_at(seed: str) -> int:
    """When a response was created (Unix seconds, in 2026)."""
    return number(seed + "/created", 1_767_225_600, 1_798_761_599)


def response_id(seed: str, created: int) -> str:
    """A response id in OpenAI's form: `resp_`, 16 hex digits, the creation time in 10, then 24 more."""
    tail = token(seed + "/tail", 4, HEX) + "81" + token(seed + "/tier", 2, HEX) + token(seed + "/rand", 16, HEX)
    return f"resp_{token(seed, 16, HEX)}{created:010x}{tail}"


def call_id(seed: str) -> str:
    """A function call's `call_id` in OpenAI's form: `call_` + 24 base-62 characters."""
    return "call_" + token(seed, 24)


def request_id(seed: str) -> str:
    """An `x-request-id` in OpenAI's form: `req_` + 32 hex digits."""
    return "req_" + token(seed + "/request", 32, HEX)


def phases(content: Sequence[ir.ContentPart]) -> list[JSONDict]:
    """The `phase` of each output item the encoder writes for these parts (its `output` extras): a message
    followed by a function call is `commentary`, the others `final_answer`; other items have none."""
    groups = items.group_parts(content)
    out: list[JSONDict] = []
    for at, group in enumerate(groups):
        if not isinstance(group[0], ir.TextPart):
            out.append({})
            continue
        later_call = any(isinstance(g[0], ir.ToolCallPart) for g in groups[at + 1 :])
        out.append({"phase": "commentary" if later_call else "final_answer"})
    return out


class ResponsesReference:
    """What the Responses API adds: its ids, times, service tiers, message phases and headers."""

    differences: Mapping[str, str] = DIFFERENCES

    def _fields(self, request: ir.Request, seed: str, content: Sequence[ir.ContentPart]) -> JSONDict:
        raw = request.provider_fields.get(NAME, {})
        retention = raw.get("prompt_cache_retention", "24h")
        tier = raw.get("service_tier", "auto")
        out: JSONDict = {"created_at": created_at(seed), "completed_at": None, "moderation": None}
        out |= {"prompt_cache_retention": retention, "service_tier": tier}
        per_item = phases(content)
        if any(per_item):
            out["output"] = per_item
        return out

    def _finished(self, request: ir.Request, seed: str, stop: ir.StopReason | None) -> JSONDict:
        tier = request.provider_fields.get(NAME, {}).get("service_tier")
        out: JSONDict = {"service_tier": tier if tier in SERVICE_TIERS else "default"}
        if stop is None or stop.kind not in ("max_tokens", "content_filter"):
            out["completed_at"] = created_at(seed) + number(seed + "/took", 1, 20)
        return out

    def events(self, events: list[ir.StreamEvent], *, request: ir.Request, seed: str) -> list[ir.StreamEvent]:
        """The provider's ids, times, service tiers and message phases."""
        content = list(accumulate(events).response.content)
        out: list[ir.StreamEvent] = []
        for event in events:
            if isinstance(event, ir.MessageStart) and event != ir.MessageStart():
                extras = ir.merge_extras({NAME: self._fields(request, seed, content)}, event.extras)
                update = {"id": response_id(f"{seed}/{event.id}", created_at(seed)), "extras": extras}
                event = event.model_copy(update=update)
            elif isinstance(event, ir.ToolCallStart):
                event = event.model_copy(update={"id": call_id(f"{seed}/{event.id}")})
            elif isinstance(event, ir.Done):
                extras = ir.merge_extras({NAME: self._finished(request, seed, event.stop_reason)}, event.extras)
                event = event.model_copy(update={"extras": extras})
            out.append(event)
        return out

    def response(self, response: ir.Response, *, request: ir.Request, seed: str) -> ir.Response:
        """The provider's ids, times, service tier, message phases and `billing`."""
        content = [
            p.model_copy(update={"id": call_id(f"{seed}/{p.id}")}) if isinstance(p, ir.ToolCallPart) else p
            for p in response.content
        ]
        fields = {**self._fields(request, seed, content), **self._finished(request, seed, response.stop_reason)}
        fields["billing"] = {"payer": "developer"}
        return response.model_copy(
            update={
                "id": response_id(f"{seed}/{response.id}", created_at(seed)),
                "content": content,
                "extras": ir.merge_extras({NAME: fields}, response.extras),
            }
        )

    def error(self, response: HttpResponse, *, error: ir.IRError, seed: str) -> HttpResponse:
        """OpenAI's error body as the encoder writes it (the request id is in the headers only)."""
        return response

    def headers(self, *, stream: bool, status: int, seed: str) -> dict[str, str]:
        """`x-request-id`, the processing time and the API version, as on every OpenAI answer."""
        return {
            "x-request-id": request_id(seed),
            "openai-processing-ms": str(number(seed + "/ms", 40, 1500)),
            "openai-version": "2020-10-01",
        }


REFERENCE = ResponsesReference()
"""The Responses reference (the codec's `reference`)."""

_OPAQUE = frozenset({"parameters", "schema", "metadata"})
"""A function tool's `parameters`, a JSON-schema text format's `schema` and the request's `metadata` (echoed on
every response object) hold the user's data, not the wire's shape."""

_REFINED = {"item": "type", "part": "type"}


def wire_events(body: bytes, *, stream: bool, status: int) -> list[WireEvent]:
    """The typed events of a Responses body: SSE events by `type`, those that carry an output item or a part
    refined by its type (`response.output_item.added:function_call`, `response.content_part.added:output_text`);
    or the whole JSON body (`response`, or `error` for status >= 400)."""
    if status >= 400 or not stream:
        data = load_object(body, what="body")
        return [WireEvent("error" if status >= 400 else str(data.get("object", "response")), data, _OPAQUE)]
    decoder = SSEDecoder()
    out: list[WireEvent] = []
    for event in [*decoder.feed(body), *decoder.close()]:
        if event.data.strip() in ("", "[DONE]"):
            if event.data.strip():
                out.append(WireEvent("[DONE]", None))
            continue
        data = load_object(event.data, offset=event.offset, what="stream event data")
        out.append(WireEvent(_event_type(data, event.event), data, _OPAQUE))
    return out


def _event_type(data: dict[str, Any], name: str) -> str:
    kind = str(data.get("type", name))
    for key, field in _REFINED.items():
        inner = data.get(key)
        if isinstance(inner, dict) and isinstance(inner.get(field), str):
            return f"{kind}:{inner[field]}"
    return kind
