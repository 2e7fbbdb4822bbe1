"""Normalization rules: small named functions that remove differences which are not translation bugs.

Each rule takes a JSON-ready *view* of what a client saw (`{"response": ..., "events": [...], "error": ...}`)
and returns a new view. Rules never mutate their input. The runner applies `DEFAULT_RULES` to both sides
before comparing; a report names the rules that were applied.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

View = dict[str, Any]
Rule = Callable[[View], View]

# Fields that identify a run rather than describe its content.
_VOLATILE_KEYS = frozenset({"id", "model"})


def _walk(node: Any, fn: Callable[[dict[str, Any]], None]) -> None:
    if isinstance(node, dict):
        fn(node)
        for value in node.values():
            _walk(value, fn)
    elif isinstance(node, list):
        for item in node:
            _walk(item, fn)


def response_ids(view: View) -> View:
    """Response and message ids differ per provider and per run: replace them with a placeholder."""
    out = copy.deepcopy(view)
    for node in (out.get("response"), *[e for e in out.get("events") or [] if e.get("kind") == "message_start"]):
        if isinstance(node, dict) and "id" in node:
            node["id"] = "<id>"
    return out


def model_names(view: View) -> View:
    """The proxy maps model names between protocols: compare content, not names."""
    out = copy.deepcopy(view)
    for node in (out.get("response"), *[e for e in out.get("events") or [] if e.get("kind") == "message_start"]):
        if isinstance(node, dict) and "model" in node:
            node["model"] = "<model>"
    return out


def tool_call_ids(view: View) -> View:
    """Tool-call ids are provider-specific or synthesized: number them by first appearance instead."""
    out = copy.deepcopy(view)
    seen: dict[str, str] = {}

    def fix(node: dict[str, Any]) -> None:
        for key in ("id", "tool_call_id"):
            kind = node.get("kind")
            if key == "id" and kind not in ("tool_call", "tool_call_start"):
                continue
            if isinstance(node.get(key), str):
                node[key] = seen.setdefault(node[key], f"<call:{len(seen)}>")

    _walk(out, fix)
    return out


def stop_reason_raw(view: View) -> View:
    """The provider's raw stop value differs by protocol; the IR kind is what must agree."""
    out = copy.deepcopy(view)

    def fix(node: dict[str, Any]) -> None:
        reason = node.get("stop_reason")
        if isinstance(reason, dict):
            reason.pop("raw", None)

    _walk(out, fix)
    return out


def coalesce_deltas(view: View) -> View:
    """Chunking differs legitimately between protocols: join consecutive deltas of one block, drop usage events
    and start-time usage (usage is compared on the accumulated response)."""
    out = copy.deepcopy(view)
    events = out.get("events")
    if not isinstance(events, list):
        return out
    merged: list[dict[str, Any]] = []
    for event in events:
        kind = event.get("kind")
        if kind == "usage":
            continue
        if kind == "message_start":
            event.pop("usage", None)
        field = {"text_delta": "text", "thinking_delta": "text", "tool_call_delta": "arguments"}.get(kind or "")
        last = merged[-1] if merged else None
        if field and last and last.get("kind") == kind and last.get("index") == event.get("index"):
            last[field] += event[field]
            continue
        merged.append(event)
    out["events"] = merged
    return out


def tool_arguments_text(view: View) -> View:
    """Argument JSON text differs in whitespace, key order and fragmenting between protocols (an empty call may
    send `{}` or nothing): compare the parsed arguments of the accumulated response, not the fragments."""
    out = copy.deepcopy(view)

    def fix(node: dict[str, Any]) -> None:
        if node.get("kind") == "tool_call":
            node.pop("arguments_raw", None)

    _walk(out, fix)
    if isinstance(out.get("events"), list):
        out["events"] = [e for e in out["events"] if e.get("kind") != "tool_call_delta"]
    return out


def error_message(view: View) -> View:
    """Each SDK words its exception message differently; kind, status and retry-after are what must carry."""
    out = copy.deepcopy(view)
    error = out.get("error")
    if isinstance(error, dict):
        error.pop("message", None)
        error.pop("code", None)
    for event in out.get("events") or []:
        if event.get("kind") == "error":
            event["error"].pop("message", None)
            event["error"].pop("code", None)
    return out


DEFAULT_RULES: tuple[Rule, ...] = (
    response_ids,
    model_names,
    tool_call_ids,
    stop_reason_raw,
    coalesce_deltas,
    tool_arguments_text,
    error_message,
)


def usage_unreported(left: View, right: View) -> tuple[View, View]:
    """A usage figure one side cannot report (None) is not compared on either side."""
    a, b = copy.deepcopy(left), copy.deepcopy(right)
    ua = (a.get("response") or {}).get("usage")
    ub = (b.get("response") or {}).get("usage")
    if isinstance(ua, dict) and isinstance(ub, dict):
        for key in set(ua) | set(ub):
            if ua.get(key) is None or ub.get(key) is None:
                ua.pop(key, None)
                ub.pop(key, None)
    return a, b


def _terminal_error(view: View) -> dict[str, Any] | None:
    events = view.get("events") or []
    if events and events[-1].get("kind") == "error":
        error: dict[str, Any] = events[-1]["error"]
        return error
    return None


def incomplete_stream(left: View, right: View) -> tuple[View, View]:
    """A stream that ended without its terminal marker (`malformed_stream`, as a client of the provider sees it)
    and a stream the proxy ended with an explicit mid-stream error (no HTTP status) tell the client the same
    thing: the answer is incomplete. Neither is dressed up as a normal stop, which is what must not happen."""
    a, b = copy.deepcopy(left), copy.deepcopy(right)
    ea, eb = _terminal_error(a), _terminal_error(b)
    if ea is None or eb is None or "malformed_stream" not in (ea.get("kind"), eb.get("kind")):
        return a, b
    if ea.get("status") is not None or eb.get("status") is not None:
        return a, b
    for view, error in ((a, ea), (b, eb)):
        error.clear()
        error["kind"] = "<incomplete stream>"
        view["error"] = {"kind": "<incomplete stream>"}
        view["exception"] = None
    return a, b


def apply(view: View, rules: Iterable[Rule] = DEFAULT_RULES) -> View:
    """The view with every rule applied in order."""
    for rule in rules:
        view = rule(view)
    return view
