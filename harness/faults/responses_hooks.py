"""The Responses API faults' implementations: bugs real Responses translations ship, each a `TranslateHooks` value
that acts only when the client speaks the Responses API (other clients' requests pass unchanged).

Most live in the SSE the proxy writes (`sequence_number`, `output_index`, `item_id`, the terminal event), which the
`openai` SDK reads without complaint: the runner's `frontend_wire` check, decoding the client's stream with the
Responses decoder, is what sees them. The rest act on the IR, where the SDK sees them too.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable
from typing import Any

from harness import ir
from harness.faults.wire_edits import DROP, EventEdit, edit_sse
from harness.proxy import TranslateHooks
from harness.wire.http import HttpRequest

FRONTEND = "responses"
"""The frontend protocol these faults act on."""

_ITEM_EVENTS = frozenset({"response.output_item.added", "response.output_item.done"})


def _for_responses(build: Callable[[], TranslateHooks]) -> TranslateHooks:
    return TranslateHooks(per_request=lambda c: build() if c.frontend_protocol == FRONTEND else TranslateHooks())


def _sse_edit(make: Callable[[], EventEdit]) -> TranslateHooks:
    """Hooks that rewrite each SSE event of the client's stream with a fresh (per-request) edit."""

    def build() -> TranslateHooks:
        edit = make()
        return TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, edit))

    return _for_responses(build)


# --- sequence_number --------------------------------------------------------------------------------------------


def _from_one() -> EventEdit:
    def edit(name: str, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("sequence_number"), int):
            data["sequence_number"] += 1
        return data

    return edit


def _only_on_item_done() -> EventEdit:
    # LiteLLM 1.106.2 writes sequence_number on response.output_item.done only.
    def edit(name: str, data: Any) -> Any:
        if isinstance(data, dict) and data.get("type") != "response.output_item.done":
            data.pop("sequence_number", None)
        return data

    return edit


def _in_progress_dropped_after_numbering() -> EventEdit:
    def edit(name: str, data: Any) -> Any:
        return DROP if isinstance(data, dict) and data.get("type") == "response.in_progress" else data

    return edit


SEQUENCE_FROM_ONE = _sse_edit(_from_one)
SEQUENCE_MISSING = _sse_edit(_only_on_item_done)
SEQUENCE_GAP = _sse_edit(_in_progress_dropped_after_numbering)


def _numbered_per_chunk() -> TranslateHooks:
    # Numbered once per upstream event it came from, not per event it writes: the events written for one
    # (created and in_progress, output_text.done and content_part.done, ...) share a number.
    numbers = itertools.count()
    current = 0

    def edit(name: str, data: Any) -> Any:
        if isinstance(data, dict) and "sequence_number" in data:
            data["sequence_number"] = current
        return data

    def per_chunk(chunk: bytes) -> bytes:
        nonlocal current
        current = next(numbers)
        return edit_sse(chunk, edit)

    return TranslateHooks(on_frontend_bytes=per_chunk)


SEQUENCE_REPEATED = _for_responses(_numbered_per_chunk)


# --- items and the terminal event -------------------------------------------------------------------------------


def _choice_index_as_output_index() -> EventEdit:
    # The output item events are numbered right; every event inside an item carries the upstream's choice index.
    def edit(name: str, data: Any) -> Any:
        if isinstance(data, dict) and "output_index" in data and data.get("type") not in _ITEM_EVENTS:
            data["output_index"] = 0
        return data

    return edit


def _fresh_item_ids() -> EventEdit:
    counter = itertools.count()

    def edit(name: str, data: Any) -> Any:
        if isinstance(data, dict) and "item_id" in data:
            prefix = str(data["item_id"]).split("_", 1)[0]
            data["item_id"] = f"{prefix}_{next(counter):024x}"
        return data

    return edit


def _completed_dropped() -> EventEdit:
    def edit(name: str, data: Any) -> Any:
        return DROP if isinstance(data, dict) and data.get("type") == "response.completed" else data

    return edit


def _incomplete_named_completed() -> EventEdit:
    # The final response still says `status: incomplete`; only the event type says completed.
    def edit(name: str, data: Any) -> Any:
        if isinstance(data, dict) and data.get("type") == "response.incomplete":
            data["type"] = "response.completed"
        return data

    return edit


OUTPUT_INDEX_MISMATCH = _sse_edit(_choice_index_as_output_index)
ITEM_ID_MISMATCH = _sse_edit(_fresh_item_ids)
COMPLETED_MISSING = _sse_edit(_completed_dropped)


def _cut_as_completed(response: ir.Response) -> ir.Response:
    # Non-streamed: `status: completed` and no incomplete_details.
    if response.stop_reason is None or response.stop_reason.kind != "max_tokens":
        return response
    return response.model_copy(update={"stop_reason": ir.StopReason(kind="end_turn", raw="completed")})


def _incomplete_as_completed() -> TranslateHooks:
    edit = _incomplete_named_completed()

    def rename(chunk: bytes) -> bytes:
        # The SSE event name follows the type.
        return edit_sse(chunk, edit).replace(b"event: response.incomplete\n", b"event: response.completed\n")

    return TranslateHooks(on_frontend_bytes=rename, on_upstream_response=_cut_as_completed)


INCOMPLETE_AS_COMPLETED = _for_responses(_incomplete_as_completed)


# --- reasoning items ----------------------------------------------------------------------------------------------

_REASONING_PARTS = (ir.ThinkingPart, ir.RedactedThinkingPart)
_REASONING_EVENTS = (ir.ThinkingStart, ir.ThinkingDelta, ir.ThinkingEnd, ir.RedactedThinking)


def _without_reasoning_input(request: ir.Request) -> ir.Request:
    messages = [
        m.model_copy(update={"content": [p for p in m.content if not isinstance(p, _REASONING_PARTS)]})
        for m in request.messages
    ]
    return request.model_copy(update={"messages": [m for m in messages if m.content]})


def _without_reasoning_output(response: ir.Response) -> ir.Response:
    return response.model_copy(update={"content": [p for p in response.content if not isinstance(p, _REASONING_PARTS)]})


def _reasoning_items_dropped() -> TranslateHooks:
    return TranslateHooks(
        on_upstream_request=_without_reasoning_input,
        on_upstream_event=lambda e: () if isinstance(e, _REASONING_EVENTS) else (e,),
        on_upstream_response=_without_reasoning_output,
    )


REASONING_ITEMS_DROPPED = _for_responses(_reasoning_items_dropped)


# --- stored-response chains -------------------------------------------------------------------------------------


def _without_previous_response(http: HttpRequest) -> HttpRequest:
    try:
        body = json.loads(http.body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return http
    if not isinstance(body, dict) or body.pop("previous_response_id", None) is None:
        return http
    return dataclasses.replace(http, body=json.dumps(body).encode("utf-8"))


PREVIOUS_RESPONSE_DROPPED = _for_responses(lambda: TranslateHooks(on_upstream_http=_without_previous_response))
"""The continuation goes upstream without its `previous_response_id`: the new input alone, and an unknown id
answered (gateways LR16, CR13: a lookup that finds no stored turns goes on without them)."""


__all__ = [
    "COMPLETED_MISSING",
    "INCOMPLETE_AS_COMPLETED",
    "ITEM_ID_MISMATCH",
    "OUTPUT_INDEX_MISMATCH",
    "PREVIOUS_RESPONSE_DROPPED",
    "REASONING_ITEMS_DROPPED",
    "SEQUENCE_FROM_ONE",
    "SEQUENCE_GAP",
    "SEQUENCE_MISSING",
    "SEQUENCE_REPEATED",
]
