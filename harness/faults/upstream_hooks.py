"""The faults of issue 21 on the request a proxy sends upstream, beyond what the IR shows: tool-call ids made
from the function's name, a fixed beta header added to every request, and a client's field forwarded to an
API that rejects unknown fields. Each acts where its bug shows (the upstream protocol in the `HookContext`)."""

from __future__ import annotations

import dataclasses
import json

from harness import ir
from harness.proxy import HookContext, TranslateHooks
from harness.wire.http import HttpRequest

STRICT_UPSTREAM = "anthropic"
"""The upstream whose API rejects unknown fields and reads the beta header (the bugs were seen there)."""
FIXED_BETA = "prompt-caching-2024-07-31,fine-grained-tool-streaming-2025-05-14"
"""The header value a gateway added to every request (a fixed list of beta flags)."""


def _ids_from_names(request: ir.Request) -> ir.Request:
    """Every tool-call id becomes `call_<name>` and each result follows its call: two calls of one function share
    an id (gateways A22: a Gemini frontend that synthesizes ids from names)."""
    renamed: dict[str, str] = {}
    messages = []
    for message in request.messages:
        content: list[ir.ContentPart] = []
        for part in message.content:
            if isinstance(part, ir.ToolCallPart):
                renamed[part.id] = f"call_{part.name}"
                part = part.model_copy(update={"id": renamed[part.id]})
            elif isinstance(part, ir.ToolResultPart) and part.tool_call_id in renamed:
                part = part.model_copy(update={"tool_call_id": renamed[part.tool_call_id]})
            content.append(part)
        messages.append(message.model_copy(update={"content": content}))
    return request.model_copy(update={"messages": messages})


TOOL_IDS_FROM_NAMES = TranslateHooks(on_upstream_request=_ids_from_names)


def _add_beta(request: HttpRequest) -> HttpRequest:
    return dataclasses.replace(request, headers={**request.headers, "anthropic-beta": FIXED_BETA})


FIXED_BETA_HEADER = TranslateHooks(
    per_request=lambda ctx: (
        TranslateHooks(on_upstream_http=_add_beta) if ctx.upstream_protocol == STRICT_UPSTREAM else TranslateHooks()
    )
)


def _stream_options(request: HttpRequest) -> HttpRequest:
    body = json.loads(request.body)
    if body.get("stream"):
        body["stream_options"] = {"include_usage": True}
    return dataclasses.replace(request, body=json.dumps(body).encode())


def _forward_stream_options(ctx: HookContext) -> TranslateHooks:
    return (
        TranslateHooks(on_upstream_http=_stream_options)
        if ctx.upstream_protocol == STRICT_UPSTREAM
        else TranslateHooks()
    )


STREAM_OPTIONS_FORWARDED = TranslateHooks(per_request=_forward_stream_options)
