"""Byte-level edits of a frontend SSE stream, for faults that live in what the proxy writes, not in the IR.

Each chunk the proxy sends holds whole SSE events (one IR event encodes to complete events), so an edit parses
the chunk, rewrites or drops events by their JSON data, and encodes the rest again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

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
