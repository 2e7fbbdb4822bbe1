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
