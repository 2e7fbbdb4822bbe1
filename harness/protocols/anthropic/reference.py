"""The Anthropic reference backend: what api.anthropic.com says beyond what the encoders write, and how its
bodies split into wire events for the shape comparison (`harness.protocols.shape`).

Measured against the corpus (docs/shape.md). Real answers carry `msg_01...` / `toolu_01...` ids (24 base-62
characters after `msg_` / `toolu_`), `usage.service_tier`, a `request-id: req_...` header (also as
`request_id` in error bodies) and `x-should-retry` on errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from harness import ir
from harness.protocols.anthropic.mapping import NAME, dumps, load_json, load_object
from harness.protocols.reference import number, token
from harness.protocols.shape import WireEvent
from harness.wire.http import HttpResponse
from harness.wire.sse import SSEDecoder

_EXTRAS = {NAME: {"usage": {"service_tier": "standard"}}}
"""What a real message carries that no IR value says: the service tier that served it."""

_START_EXTRAS = {NAME: {"usage": {"service_tier": "standard", "inference_geo": "not_available"}}}
"""What a real message_start carries besides: where inference ran (seen only in streams)."""

_SERVER_TOOLS = (
    "server tools (web search) and citations have no IR form: the decoder skips their blocks, deltas and usage "
    "(no IR value is lost, see losses.py), so the re-encoded answer has none; scripted replies use no server tools"
)
_PING_TIMING = (
    "`ping` is a keep-alive on a timer, so where it lands depends on how long the first delta takes: the "
    "reference pings once, after the first delta (where the text and most thinking recordings have it) or "
    "right after a tool_use start"
)

DIFFERENCES: Mapping[str, str] = MappingProxyType(
    {
        "event real content_block_start:server_tool_use": _SERVER_TOOLS,
        "event real content_block_start:web_search_tool_result": _SERVER_TOOLS,
        "event real content_block_delta:citations_delta": _SERVER_TOOLS,
        "path real content_block_start:text content_block.citations": _SERVER_TOOLS,
        "path real message_delta usage.server_tool_use*": _SERVER_TOOLS,
        "sequence both @1 message_start > content_block_start:server_tool_use > *": _SERVER_TOOLS,
        "path real content_block_start:tool_use content_block.caller*": (
            "`caller` (who called the tool; programmatic tool calling) comes only from the newest models "
            "(claude-haiku-4-5 here, not claude-sonnet-4): the IR has no caller and the reference, like the "
            "older models, sends none"
        ),
        "sequence both @2 message_start > content_block_start:thinking > ping > *": _PING_TIMING,
        "sequence both @2 message_start > content_block_start:redacted_thinking > content_block_stop > *": (
            _PING_TIMING + "; this recording has three pings around its redacted blocks"
        ),
        "header real retry-after": (
            "a 200 can carry `retry-after` when the account nears its rate limit; a scripted reply has no "
            "rate-limit state (error scenarios script it)"
        ),
    }
)
"""Shape differences from the real wire that remain, with their reasons (see `Reference.differences`)."""


def message_id(seed: str) -> str:
    """A message id in Anthropic's form: `msg_01` + 22 base-62 characters."""
    return f"msg_01{token(seed, 22)}"


def tool_id(seed: str) -> str:
    """A tool-use id in Anthropic's form: `toolu_01` + 22 base-62 characters."""
    return f"toolu_01{token(seed, 22)}"


class AnthropicReference:
    """What Anthropic's API adds: its ids, `usage.service_tier`, request ids in headers and error bodies."""

    differences: Mapping[str, str] = DIFFERENCES

    def events(self, events: list[ir.StreamEvent], *, request: ir.Request, seed: str) -> list[ir.StreamEvent]:
        """Ids in Anthropic's form and the service tier on message_start."""
        out: list[ir.StreamEvent] = []
        for event in events:
            if isinstance(event, ir.MessageStart) and event != ir.MessageStart():
                event = event.model_copy(
                    update={
                        "id": _message_id(event.id, seed),
                        "extras": ir.merge_extras(_START_EXTRAS, event.extras),
                    }
                )
            elif isinstance(event, ir.ToolCallStart):
                event = event.model_copy(update={"id": _tool_id(event.id, seed)})
            out.append(event)
        return out

    def response(self, response: ir.Response, *, request: ir.Request, seed: str) -> ir.Response:
        """Ids in Anthropic's form and the service tier."""
        content = [
            p.model_copy(update={"id": _tool_id(p.id, seed)}) if isinstance(p, ir.ToolCallPart) else p
            for p in response.content
        ]
        return response.model_copy(
            update={
                "id": _message_id(response.id, seed),
                "content": content,
                "extras": ir.merge_extras(_EXTRAS, response.extras),
            }
        )

    def error(self, response: HttpResponse, *, error: ir.IRError, seed: str) -> HttpResponse:
        """The error body with the `request_id` the real API appends."""
        body = load_object(response.body, what="error body")
        body["request_id"] = request_id(seed)
        return HttpResponse(response.status, response.headers, dumps(body).encode("utf-8"))

    def headers(self, *, stream: bool, status: int, seed: str) -> dict[str, str]:
        """`request-id`, the upstream time, and on errors whether the SDK should retry."""
        out = {"cache-control": "no-cache"} if stream else {}
        out |= {
            "request-id": request_id(seed),
            "x-envoy-upstream-service-time": str(number(seed, 200, 4000)),
        }
        if status >= 400:
            out["x-should-retry"] = "true" if status in (408, 409, 429) or status >= 500 else "false"
        return out


def _message_id(value: str | None, seed: str) -> str:
    return message_id(f"{seed}/{value}")


def _tool_id(value: str, seed: str) -> str:
    return tool_id(f"{seed}/{value}")


def request_id(seed: str) -> str:
    """A request id in Anthropic's form: `req_011C` + 20 base-62 characters."""
    return f"req_011C{token(seed + '/request', 20)}"


REFERENCE = AnthropicReference()
"""The Anthropic reference (the codec's `reference`)."""


_OPAQUE = frozenset({"input"})
"""A tool_use block's `input` holds the user's data, not the wire's shape."""


def wire_events(body: bytes, *, stream: bool, status: int) -> list[WireEvent]:
    """The typed events of a Messages body: SSE events by `type` (block starts and deltas refined by the block
    or delta type), or the whole JSON body (`message`, or `error` for status >= 400)."""
    if status >= 400 or not stream:
        data = load_object(body, what="body")
        return [WireEvent("error" if status >= 400 else str(data.get("type", "message")), data, _OPAQUE)]
    decoder = SSEDecoder()
    out: list[WireEvent] = []
    for event in [*decoder.feed(body), *decoder.close()]:
        if event.data == "":
            continue
        try:
            parsed: Any = load_json(event.data, offset=event.offset, what="event data")
        except ValueError:
            out.append(WireEvent(event.event, event.data))
            continue
        out.append(WireEvent(_event_type(parsed, event.event), parsed, _OPAQUE))
    return out


def _event_type(data: Any, name: str) -> str:
    if not isinstance(data, dict):
        return name
    kind = str(data.get("type", name))
    if kind == "content_block_start" and isinstance(data.get("content_block"), dict):
        return f"{kind}:{data['content_block'].get('type')}"
    if kind == "content_block_delta" and isinstance(data.get("delta"), dict):
        return f"{kind}:{data['delta'].get('type')}"
    return kind
