"""What one case's trace keeps of a huge answer: a trace text past `LARGE_CHARS` has every string outside the wire
cut at `MAX_STRING` characters and each IR event list cut to its first and last `MAX_EVENTS // 2` events, and the
trace says what was cut (`CaseResult.cut`). A 10 MB answer otherwise fills its three runs' responses, SDK views and
event lists several times over (115 MB of trace); the raw wire, bounded per side already, is kept as it is, so the
report still shows the bytes. Verdicts are decided before this: the cut is of what is written, never of what is
judged."""

from __future__ import annotations

import json
from typing import Any

LARGE_CHARS = 4 * 1024 * 1024
"""A trace text up to this size is written as it is (the cost of the bound is paid by large traces only)."""
MAX_STRING = 256 * 1024
"""Characters kept of one string outside the wire."""
MAX_EVENTS = 10_000
"""Events kept of one event list: its first and last halves."""
EVENT_LISTS = ("upstream_events", "events")
"""The IR event lists: a run's `upstream_events`, and its SDK view's `events`."""
WIRE = "wire"


def bounded(text: str) -> str:
    """`text` (a case trace, `case_text`) within the bound: itself when small, else cut as the module says."""
    if len(text) <= LARGE_CHARS:
        return text
    data = json.loads(text)
    cuts: list[str] = []
    _walk(data, "", cuts)
    if not cuts:
        return text
    data["cut"] = cuts
    return json.dumps(data, indent=1, ensure_ascii=False)


def _walk(node: Any, path: str, cuts: list[str]) -> Any:
    if isinstance(node, str):
        if len(node) <= MAX_STRING:
            return node
        cuts.append(f"{path}: {len(node) - MAX_STRING:,} of {len(node):,} characters cut")
        return node[:MAX_STRING] + f" [... {len(node) - MAX_STRING:,} characters cut by the trace]"
    if isinstance(node, list):
        return [_walk(item, f"{path}[{i}]", cuts) for i, item in enumerate(node)]
    if not isinstance(node, dict):
        return node
    for key, value in node.items():
        if key == WIRE:
            continue  # bounded per side where it is captured, and read with its offsets and times
        where = f"{path}.{key}" if path else key
        if key in EVENT_LISTS and isinstance(value, list) and len(value) > MAX_EVENTS:
            node[key] = _ends(value)
            half = MAX_EVENTS // 2
            cuts.append(f"{where}: events {half} to {len(value) - half - 1} of {len(value):,} cut")
            if key == "upstream_events" and isinstance(node.get(WIRE), dict):
                node[WIRE]["event_chunks"] = _ends(node[WIRE].get("event_chunks") or [])
        node[key] = _walk(node[key], where, cuts)
    return node


def _ends(items: list[Any]) -> list[Any]:
    if len(items) <= MAX_EVENTS:
        return items
    half = MAX_EVENTS // 2
    return items[:half] + items[-half:]
