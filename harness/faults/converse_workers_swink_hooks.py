"""The implementations of the faults of AWS Bedrock Converse, Workers AI's native route and swink's proxy stream
(`harness.faults.converse_workers_swink_catalog`): each a `TranslateHooks` value that acts only when its protocol
is on the side the bug lives on (the upstream a proxy reads, or the frontend stream it writes), and changes
nothing elsewhere.

Frontend faults edit the bytes the proxy writes (`harness.faults.wire_edits`): SSE events by their JSON data,
event-stream frames by their headers and payload, written again with fresh CRCs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from harness import ir
from harness.faults.wire_edits import DROP, edit_frames, edit_sse
from harness.proxy import HookContext, TranslateHooks
from harness.wire.eventstream import HeaderValue
from harness.wire.sse import encode_sse, iter_sse

Events = Sequence[ir.StreamEvent]

BEDROCK = "bedrock"
CLOUDFLARE = "cloudflare"
SWINK = "swink"


def _frontend(protocol: str, hooks: Callable[[], TranslateHooks]) -> TranslateHooks:
    """Hooks built per request, active only when the client speaks `protocol`."""
    return TranslateHooks(per_request=lambda c: hooks() if c.frontend_protocol == protocol else TranslateHooks())


def _upstream(protocol: str, hooks: Callable[[HookContext], TranslateHooks]) -> TranslateHooks:
    """Hooks built per request, active only when the upstream speaks `protocol`."""
    return TranslateHooks(per_request=lambda c: hooks(c) if c.upstream_protocol == protocol else TranslateHooks())


# --- Bedrock as the upstream ----------------------------------------------------------------------------------


def _drop_tool_input(event: ir.StreamEvent) -> Events:
    # The toolUse input fragments of contentBlockDelta are collected and never folded into the call.
    return () if isinstance(event, ir.ToolCallDelta) else (event,)


BEDROCK_TOOL_INPUT_DROPPED = _upstream(BEDROCK, lambda _: TranslateHooks(on_upstream_event=_drop_tool_input))


def _finish_without_usage(event: ir.StreamEvent) -> Events:
    # The answer is finished at messageStop; the metadata frame with the usage comes after it and is never read.
    if isinstance(event, ir.UsageEvent):
        return ()
    if isinstance(event, ir.Done):
        return (event.model_copy(update={"usage": None}),)
    return (event,)


def _response_without_usage(response: ir.Response) -> ir.Response:
    return response.model_copy(update={"usage": ir.Usage()})


BEDROCK_METADATA_USAGE_LOST = _upstream(
    BEDROCK,
    lambda _: TranslateHooks(on_upstream_event=_finish_without_usage, on_upstream_response=_response_without_usage),
)

# What a client that knows only HTTP statuses makes of them (Bedrock's type header unread).
_STATUS_KINDS = {
    400: ir.ErrorKind.INVALID_REQUEST,
    401: ir.ErrorKind.AUTH,
    403: ir.ErrorKind.PERMISSION,
    404: ir.ErrorKind.NOT_FOUND,
    408: ir.ErrorKind.TIMEOUT,
    429: ir.ErrorKind.THROTTLED,
    503: ir.ErrorKind.OVERLOADED,
}


def _kind_by_status(error: ir.IRError) -> ir.IRError:
    if error.status is None:
        return error
    kind = _STATUS_KINDS.get(error.status, ir.ErrorKind.SERVER if error.status >= 500 else ir.ErrorKind.INVALID_REQUEST)
    return error.model_copy(update={"kind": kind, "retryable": kind.retryable})


BEDROCK_ERRORS_BY_STATUS = _upstream(BEDROCK, lambda _: TranslateHooks(on_error=_kind_by_status))


# --- Bedrock as the frontend ----------------------------------------------------------------------------------

GENERIC_EXCEPTION = "modelStreamErrorException"
"""The one exception type the buggy proxy writes for every mid-stream failure."""


def _generic_exception(headers: dict[str, HeaderValue], payload: Any) -> tuple[dict[str, HeaderValue], Any]:
    if headers.get(":message-type") == "exception":
        headers[":exception-type"] = GENERIC_EXCEPTION
    return headers, payload


BEDROCK_EXCEPTION_TYPE_GENERIC = _frontend(
    BEDROCK, lambda: TranslateHooks(on_frontend_bytes=lambda chunk: edit_frames(chunk, _generic_exception))
)


# --- Workers AI as the upstream -------------------------------------------------------------------------------


class _UsageSummer:
    """Adds up every usage figure of the stream, as if each were an increment: Workers AI's are cumulative."""

    def __init__(self) -> None:
        self.total = ir.Usage()

    def _add(self, usage: ir.Usage) -> ir.Usage:
        fields = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
        sums = {f: (getattr(self.total, f) or 0) + (getattr(usage, f) or 0) for f in fields if getattr(usage, f)}
        self.total = self.total.model_copy(update=sums)
        return self.total

    def event(self, event: ir.StreamEvent) -> Events:
        if isinstance(event, ir.UsageEvent):
            self._add(event.usage)
            return ()
        if isinstance(event, ir.Done) and event.usage is not None:
            return (event.model_copy(update={"usage": self._add(event.usage)}),)
        return (event,)


CLOUDFLARE_USAGE_SUMMED = _upstream(CLOUDFLARE, lambda _: TranslateHooks(on_upstream_event=_UsageSummer().event))


# --- Workers AI as the frontend -------------------------------------------------------------------------------


def _drop_final_usage(name: str, data: Any) -> Any:
    if isinstance(data, dict) and "usage" in data and not data.get("response"):
        return DROP
    return data


CLOUDFLARE_FINAL_USAGE_DROPPED = _frontend(
    CLOUDFLARE, lambda: TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _drop_final_usage))
)

DONE_EVENT = b"data: [DONE]\n\n"


def _without_done(chunk: bytes) -> bytes:
    return chunk.replace(DONE_EVENT, b"")


CLOUDFLARE_DONE_MISSING = _frontend(CLOUDFLARE, lambda: TranslateHooks(on_frontend_bytes=_without_done))


class _FirstFragmentOnly:
    """A call is written whole on the native route; this converter writes it from its first argument fragment
    alone, the rest arriving after it already went out."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    def event(self, event: ir.StreamEvent) -> Events:
        if isinstance(event, ir.ToolCallDelta):
            if event.index in self.seen:
                return ()
            self.seen.add(event.index)
        return (event,)


CLOUDFLARE_TOOL_CALL_FIRST_FRAGMENT_ONLY = _frontend(
    CLOUDFLARE, lambda: TranslateHooks(on_upstream_event=_FirstFragmentOnly().event)
)


# --- swink as the frontend ------------------------------------------------------------------------------------


def _drop_done(name: str, data: Any) -> Any:
    return DROP if isinstance(data, dict) and data.get("type") == "done" else data


SWINK_DONE_DROPPED = _frontend(SWINK, lambda: TranslateHooks(on_frontend_bytes=lambda c: edit_sse(c, _drop_done)))


def _is_done(data: str) -> bool:
    try:
        parsed = json.loads(data)
    except json.JSONDecodeError:
        return False
    return isinstance(parsed, dict) and parsed.get("type") == "done"


def _done_as_openai_done(chunk: bytes) -> bytes:
    # A shared SSE writer ends every stream the OpenAI way: `data: [DONE]` instead of swink's terminal event.
    return b"".join(DONE_EVENT if _is_done(e.data) else encode_sse(e.data) for e in iter_sse([chunk]))


SWINK_DONE_AS_OPENAI_DONE = _frontend(SWINK, lambda: TranslateHooks(on_frontend_bytes=_done_as_openai_done))


class _IndexPerBlockType:
    """Numbers `content_index` per block type (the first text block is 0 even after a thinking block), as a
    converter keeping one counter per kind of delta does."""

    def __init__(self) -> None:
        self.counters: dict[str, int] = {}
        self.given: dict[int, int] = {}

    def edit(self, name: str, data: Any) -> Any:
        if not isinstance(data, dict) or "content_index" not in data:
            return data
        block, _, step = str(data.get("type", "")).rpartition("_")
        index = data["content_index"]
        if step == "start":
            self.given[index] = self.counters.get(block, 0)
            self.counters[block] = self.given[index] + 1
        data["content_index"] = self.given.get(index, index)
        return data


def _edit_with(edit: Callable[[str, Any], Any]) -> Callable[[bytes], bytes]:
    return lambda chunk: edit_sse(chunk, edit)


SWINK_CONTENT_INDEX_PER_TYPE = _frontend(
    SWINK, lambda: TranslateHooks(on_frontend_bytes=_edit_with(_IndexPerBlockType().edit))
)


def _unsigned(name: str, data: Any) -> Any:
    if isinstance(data, dict) and data.get("type") == "thinking_end":
        data["signature"] = None
    return data


SWINK_THINKING_SIGNATURE_DROPPED = _frontend(SWINK, lambda: TranslateHooks(on_frontend_bytes=_edit_with(_unsigned)))
