"""The faults of issue 21 on what the client receives, beyond what its lenient SDK shows: a field the protocol's
spec requires left out of every stream chunk, and an error body in another protocol's envelope. Each acts only
where its client speaks the protocol whose spec it breaks."""

from __future__ import annotations

import json
from typing import Any

from harness.faults.hooks import _only_for
from harness.faults.wire_edits import edit_sse
from harness.proxy import TranslateHooks


def _drop_created(_name: str, data: Any) -> Any:
    if isinstance(data, dict) and data.get("object") == "chat.completion.chunk":
        return {k: v for k, v in data.items() if k != "created"}
    return data


CREATED_DROPPED = _only_for(
    "openai", lambda: TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _drop_created))
)
"""Chat Completions chunks without `created` (required by OpenAI's spec; the openai Python SDK reads on)."""


def _detail_envelope(chunk: bytes) -> bytes:
    """An Anthropic error body `{"type": "error", "error": {...}}` rewritten as `{"detail": message}` (a Python web
    framework's default error shape); every other chunk unchanged."""
    try:
        body = json.loads(chunk)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return chunk
    if not (isinstance(body, dict) and body.get("type") == "error" and isinstance(body.get("error"), dict)):
        return chunk
    return json.dumps({"detail": body["error"].get("message", "")}).encode()


ERROR_IN_DETAIL_ENVELOPE = _only_for("anthropic", lambda: TranslateHooks(on_error_body=_detail_envelope))
"""Anthropic clients get errors as `{"detail": ...}`, not in Anthropic's error envelope."""


def _signature_null(_name: str, data: Any) -> Any:
    block = data.get("content_block") if isinstance(data, dict) else None
    if data.get("type") == "content_block_start" and isinstance(block, dict) and block.get("type") == "thinking":
        return {**data, "content_block": {**block, "signature": None}}
    return data


THINKING_SIGNATURE_NULL = _only_for(
    "anthropic", lambda: TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _signature_null))
)
"""A thinking block opens with `"signature": null` (gateways A26: Anthropic's spec says a string)."""


def _code_as_integer(status: int) -> Any:
    def edit(chunk: bytes) -> bytes:
        try:
            body = json.loads(chunk)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return chunk
        if not (isinstance(body, dict) and isinstance(body.get("error"), dict)):
            return chunk
        return json.dumps({**body, "error": {**body["error"], "code": status}}).encode()

    return edit


ERROR_CODE_AS_INTEGER = _only_for("openai", lambda: TranslateHooks(on_error_body=_code_as_integer(500)))
"""OpenAI clients get an error whose `code` is the integer status (gateways P7: the spec says a string or null)."""


def _response_fields_dropped(_name: str, data: Any) -> Any:
    response = data.get("response") if isinstance(data, dict) else None
    if isinstance(response, dict):
        kept = {k: v for k, v in response.items() if k not in ("parallel_tool_calls", "tool_choice")}
        return {**data, "response": kept}
    return data


RESPONSE_FIELDS_DROPPED = _only_for(
    "responses", lambda: TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _response_fields_dropped))
)
"""Responses objects in the stream lack `parallel_tool_calls` and `tool_choice` (gateways CR11: both required)."""


def _error_type_null(_name: str, data: Any) -> Any:
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return {**data, "error": {**error, "type": None}}
    return data


ERROR_TYPE_NULL = _only_for(
    "openai", lambda: TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _error_type_null))
)
"""An error inside an OpenAI stream has `type: null` (gateways A27: the spec's ErrorObject says a string)."""


def _signature_left_out(_name: str, data: Any) -> Any:
    block = data.get("content_block") if isinstance(data, dict) else None
    if data.get("type") == "content_block_start" and isinstance(block, dict) and block.get("type") == "thinking":
        return {**data, "content_block": {k: v for k, v in block.items() if k != "signature"}}
    return data


THINKING_START_UNSIGNED = _only_for(
    "anthropic", lambda: TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _signature_left_out))
)
"""A thinking block opens without `signature` (gateways R13: Anthropic's ThinkingBlock requires it)."""


def _unnumbered(_name: str, data: Any) -> Any:
    if isinstance(data, dict) and data.get("type") != "response.created":
        return {k: v for k, v in data.items() if k != "sequence_number"}
    return data


EVENTS_UNNUMBERED = _only_for(
    "responses", lambda: TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _unnumbered))
)
"""Responses stream events after the first without `sequence_number` (gateways LR15: the spec requires it)."""
