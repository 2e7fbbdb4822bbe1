"""Byte-level edits of a frontend stream, for faults that live in what the proxy writes, not in the IR.

Each chunk the proxy sends holds whole events (one IR event encodes to complete SSE events or event-stream
frames), so an edit parses the chunk, rewrites or drops events, and encodes the rest again: SSE events by their
JSON data (`edit_sse`), AWS event-stream frames by their headers and JSON payload (`edit_frames`, which writes
each kept frame again with fresh prelude and message CRCs, so the client's decoder sees a well-framed stream that
says the wrong thing, as a buggy proxy's would).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from harness.wire.eventstream import HeaderValue, encode_message, iter_messages
from harness.wire.sse import encode_sse, iter_sse

EventEdit = Callable[[str, Any], Any]
"""(event name, parsed data) -> new data, or `DROP` to leave the event out."""

DROP = object()
"""Returned by an `EventEdit` to drop the event."""


def edit_sse(chunk: bytes, edit: EventEdit) -> bytes:
    """The chunk with `edit` applied to each event whose data is JSON; other events pass unchanged."""
    out = b""
    for event in iter_sse([chunk]):
        name = None if event.event == "message" else event.event
        try:
            data = json.loads(event.data)
        except json.JSONDecodeError:
            out += encode_sse(event.data, event=name)
            continue
        edited = edit(event.event, data)
        if edited is DROP:
            continue
        out += encode_sse(json.dumps(edited, ensure_ascii=False, separators=(",", ":")), event=name)
    return out


FrameEdit = Callable[[dict[str, HeaderValue], Any], tuple[dict[str, HeaderValue], Any] | object]
"""(headers, parsed JSON payload) -> new (headers, payload), or `DROP` to leave the frame out."""


def edit_frames(chunk: bytes, edit: FrameEdit) -> bytes:
    """The chunk's event-stream frames with `edit` applied to each whose payload is JSON, re-encoded with fresh
    CRCs (a frame without a JSON payload is edited with payload None and written back with its own bytes)."""
    out = b""
    for message in iter_messages([chunk]):
        try:
            payload: Any = json.loads(message.payload) if message.payload else None
        except json.JSONDecodeError:
            out += encode_message(message.headers, message.payload)
            continue
        edited = edit(dict(message.headers), payload)
        if edited is DROP:
            continue
        assert isinstance(edited, tuple)
        headers, data = edited
        body = message.payload if data is None else json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
        out += encode_message(headers, body)
    return out
