"""Round trips through the Gemini wire (hypothesis): IR -> encode -> decode == IR, projected through the losses.

`project` is the one projection: one step per key of the codec's `LOSSES` and `RESHAPES` tables (a test checks
the key sets agree), each blanking or normalizing what Gemini cannot carry, applied alike to the IR sent and the
IR received.
"""

from __future__ import annotations

import copy
import json
import mimetypes
from collections.abc import Callable
from typing import Any

from harness import ir
from harness.protocols import Codec, common
from harness.protocols.gemini import GeminiStreamEncoder
from tests import strategies
from tests.protocols.gemini.support import CODEC, check_error, check_request, check_response, check_stream
from tests.protocols.roundtrip import RoundTrip

Doc = dict[str, Any]
Step = Callable[[str, Doc], None]


def _model_lists(kind: str, doc: Doc) -> list[list[Doc]]:
    """The lists of model-side parts (or event blocks) in a document."""
    if kind == "response":
        return [doc["content"]]
    if kind == "request":
        return [m["content"] for m in doc["messages"] if m["role"] == "assistant"]
    if kind == "events":
        return [doc["blocks"]]
    return []


def _each_part(kind: str, doc: Doc, part_kind: str) -> list[Doc]:
    return [p for parts in _model_lists(kind, doc) for p in parts if p["kind"] == part_kind]


def _drop(kind: str, doc: Doc, part_kind: str) -> None:
    for parts in _model_lists(kind, doc):
        parts[:] = [p for p in parts if p["kind"] != part_kind]


def _merge(kind: str, doc: Doc, part_kind: str, mergeable: Callable[[Doc], bool]) -> None:
    for parts in _model_lists(kind, doc):
        out: list[Doc] = []
        for part in parts:
            prev = out[-1] if out else None
            if prev is not None and prev["kind"] == part["kind"] == part_kind and mergeable(prev):
                key = "deltas" if "deltas" in prev else "text"
                prev[key] += part[key]
                if "signature" in part:
                    prev["signature"] = part["signature"]
            else:
                out.append(part)
        parts[:] = out


def _usages(kind: str, doc: Doc) -> list[Doc]:
    if kind == "response":
        return [doc["usage"]]
    terminal = doc.get("terminal") or {}
    return [terminal["usage"]] if terminal.get("kind") == "done" and terminal.get("usage") else []


def _stops(kind: str, doc: Doc) -> list[Doc]:
    if kind == "response":
        return [doc["stop_reason"]] if doc["stop_reason"] else []
    terminal = doc.get("terminal") or {}
    return [terminal["stop_reason"]] if terminal.get("kind") == "done" and terminal.get("stop_reason") else []


def _errors(kind: str, doc: Doc) -> list[Doc]:
    if kind == "error":
        return [doc]
    terminal = doc.get("terminal") or {}
    return [terminal["error"]] if terminal.get("kind") == "error" else []


def _set_error_kind(doc: Doc, kind: str) -> None:
    doc["kind"], doc["retryable"] = kind, ir.ErrorKind(kind).retryable


def _args(kind: str, doc: Doc) -> None:
    for part in _each_part(kind, doc, "tool_call"):
        if "deltas" in part:
            part["deltas"] = [common.dump_json(json.loads("".join(part["deltas"]))).decode()]
        else:
            part["arguments_raw"] = common.dump_json(part["arguments"]).decode()


def _join_results(kind: str, doc: Doc) -> None:
    for message in doc.get("messages", []) if kind == "request" else []:
        for part in message["content"]:
            if part["kind"] == "tool_result":
                text = "".join(p["text"] for p in part["content"] if p["kind"] == "text")
                images = [p for p in part["content"] if p["kind"] == "image"]
                part["content"] = ([{"kind": "text", "text": text}] if text else []) + images


def _output_none(kind: str, doc: Doc) -> None:
    for usage in _usages(kind, doc):
        if usage["reasoning_tokens"] is not None and usage["output_tokens"] is None:
            usage["output_tokens"] = usage["reasoning_tokens"]


def _output_below_reasoning(kind: str, doc: Doc) -> None:
    for usage in _usages(kind, doc):
        if usage["reasoning_tokens"] is not None and usage["output_tokens"] is not None:
            usage["output_tokens"] = max(usage["output_tokens"], usage["reasoning_tokens"])


def _context_kind(kind: str, doc: Doc) -> None:
    for error in _errors(kind, doc):
        if error["kind"] in ("invalid_request", "context_window_exceeded"):
            context = common.is_context_message(error["message"])
            _set_error_kind(error, "context_window_exceeded" if context else "invalid_request")


def _stop_kind(old: str, new: str) -> Step:
    def step(kind: str, doc: Doc) -> None:
        for stop in _stops(kind, doc):
            stop["kind"] = new if stop["kind"] == old else stop["kind"]

    return step


def _error_kind(old: str, new: str) -> Step:
    def step(kind: str, doc: Doc) -> None:
        for error in _errors(kind, doc):
            if error["kind"] == old:
                _set_error_kind(error, new)

    return step


def _no_stop(kind: str, doc: Doc) -> None:
    terminal = doc.get("terminal") or {}
    if terminal.get("kind") == "done" and terminal.get("stop_reason") is None:
        terminal["stop_reason"] = {"kind": "other", "raw": None, "sequence": None}


def _request_field(name: str, value: Any) -> Step:
    def step(kind: str, doc: Doc) -> None:
        if kind == "request":
            doc[name] = value

    return step


def _no_file_names(kind: str, doc: Doc) -> None:
    for message in doc.get("messages", []) if kind == "request" else []:
        for part in message["content"]:
            if part["kind"] == "file":
                part["filename"] = None


def _url_file_types(kind: str, doc: Doc) -> None:
    """A URL file goes with a mimeType: its own, else the one its URL names, else octet-stream."""
    for message in doc.get("messages", []) if kind == "request" else []:
        for part in message["content"]:
            if part["kind"] == "file" and part.get("url") and part.get("media_type") is None:
                part["media_type"] = mimetypes.guess_type(part["url"])[0] or "application/octet-stream"


def _system_role(kind: str, doc: Doc) -> None:
    for message in doc.get("messages", []) if kind == "request" else []:
        message["role"] = "user" if message["role"] == "system" else message["role"]


def _schema_field(name: str, value: Any) -> Step:
    def step(kind: str, doc: Doc) -> None:
        fmt = doc.get("response_format") if kind == "request" else None
        if fmt is not None and fmt["kind"] == "json_schema":
            fmt[name] = value

    return step


def _disabled_budget(kind: str, doc: Doc) -> None:
    thinking = doc.get("thinking") if kind == "request" else None
    if thinking is not None and not thinking["enabled"]:
        thinking["budget_tokens"] = None


def _usage_field(name: str) -> Step:
    def step(kind: str, doc: Doc) -> None:
        for usage in _usages(kind, doc):
            usage[name] = None

    return step


def _zero_cache_read(kind: str, doc: Doc) -> None:
    for usage in _usages(kind, doc):
        if usage.get("cache_read_tokens") == 0:
            usage["cache_read_tokens"] = None


def _start_usage(kind: str, doc: Doc) -> None:
    # The start's usage is the first chunk's input figures: the start's own, else (when no content chunk comes
    # before the last) the final usage's.
    start = doc.get("start") if kind == "events" else None
    if start is None:
        return
    source = start.get("usage")
    chunked = any(b.get("deltas") or b["kind"] == "tool_call" for b in doc["blocks"])
    terminal = doc.get("terminal") or {}
    if source is None and not chunked and terminal.get("kind") == "done":
        source = terminal.get("usage")
    figures = {
        "input_tokens": (source or {}).get("input_tokens"),
        "cache_read_tokens": (source or {}).get("cache_read_tokens") or None,
    }
    empty = all(v is None for v in figures.values())
    start["usage"] = (
        None if empty else {**dict.fromkeys(("output_tokens", "cache_write_tokens", "reasoning_tokens")), **figures}
    )


def _stop_field(name: str) -> Step:
    def step(kind: str, doc: Doc) -> None:
        for stop in _stops(kind, doc):
            stop[name] = None

    return step


def _error_code(kind: str, doc: Doc) -> None:
    for error in _errors(kind, doc):
        error["code"] = None


STEPS: dict[str, Step] = {
    "Request.parallel_tool_calls": _request_field("parallel_tool_calls", None),
    "Message.role:system": _system_role,
    "ResponseFormatJsonSchema.name": _schema_field("name", "response"),
    "ResponseFormatJsonSchema.strict": _schema_field("strict", None),
    "ThinkingConfig.budget_tokens of disabled thinking": _disabled_budget,
    "RedactedThinkingPart": lambda kind, doc: _drop(kind, doc, "redacted_thinking"),
    "FilePart.filename": _no_file_names,
    "request.FilePart.media_type:None": _url_file_types,
    "TextPart runs in model turns": lambda kind, doc: _merge(kind, doc, "text", lambda prev: True),
    "ThinkingPart runs in model turns": lambda kind, doc: _merge(
        kind, doc, "thinking", lambda prev: prev["signature"] is None
    ),
    "ToolCallPart.arguments_raw": _args,
    "ToolResultPart.content text": _join_results,
    "Usage.cache_write_tokens": _usage_field("cache_write_tokens"),
    "Usage.output_tokens:None": _output_none,
    "Usage.output_tokens below reasoning_tokens": _output_below_reasoning,
    "Usage.cache_read_tokens of 0": _zero_cache_read,
    "MessageStart.usage from the first chunk": _start_usage,
    "StopReason.raw": _stop_field("raw"),
    "StopReason.sequence": _stop_field("sequence"),
    "StopReason.kind:stop_sequence": _stop_kind("stop_sequence", "end_turn"),
    "StopReason.kind:refusal": _stop_kind("refusal", "content_filter"),
    "Done.stop_reason:None": _no_stop,
    "IRError.kind:context_window_exceeded": _context_kind,
    "IRError.kind:network": _error_kind("network", "server"),
    "IRError.kind:malformed_stream": _error_kind("malformed_stream", "server"),
    "IRError.code": _error_code,
}


def events_doc(events: list[ir.StreamEvent]) -> Doc:
    """Events as start, blocks (deltas kept as sent) and terminal, so block-level losses can be projected."""
    doc: Doc = {"start": None, "blocks": [], "terminal": None, "usage_events": []}
    open_blocks: dict[int, Doc] = {}
    for event in ir.events_to_json(events):
        kind = event["kind"]
        if kind == "message_start":
            doc["start"] = event
        elif kind in ("text_start", "thinking_start", "tool_call_start"):
            block = {"kind": kind.removesuffix("_start"), "deltas": []}
            block.update({k: event[k] for k in ("id", "name") if k in event})
            doc["blocks"].append(block)
            open_blocks[event["index"]] = block
        elif kind.endswith("_delta"):
            open_blocks[event["index"]]["deltas"].append(event.get("text", event.get("arguments")))
        elif kind == "thinking_end":
            open_blocks[event["index"]]["signature"] = event["signature"]
        elif kind == "redacted_thinking":
            doc["blocks"].append({"kind": kind, "data": event["data"]})
        elif kind in ("done", "error"):
            doc["terminal"] = event
        elif kind == "usage":
            doc["usage_events"].append(event)
    return doc


def project(kind: str, doc: Doc) -> Doc:
    """The document with every loss of the table applied (kind: request, response, events or error)."""
    out = copy.deepcopy(doc)
    for step in STEPS.values():
        step(kind, out)
    return out


def _stream_bodies(codec: Codec, events: list[ir.StreamEvent]) -> dict[str, bytes]:
    """Both stream modes: SSE (`alt=sse`) and the JSON array the API sends without it."""
    out = {}
    for mode, json_array in (("sse", False), ("json-array", True)):
        encoder = GeminiStreamEncoder(json_array=json_array)
        out[mode] = b"".join(encoder.encode(e) for e in events) + encoder.close()
    return out


def _stream_view(events: list[ir.StreamEvent]) -> Doc:
    return project("events", events_doc(events))


def _terminal_error(events: list[ir.StreamEvent]) -> Doc:
    """What of a mid-stream error is compared: its kind, message and retry time as projected, and its status."""
    error = _stream_view(events)["terminal"]["error"]
    return {k: error[k] for k in ("kind", "message", "retry_after", "status")}


def _sent_terminal_error(events: list[ir.StreamEvent]) -> Doc:
    return _terminal_error(events) | {"status": None}  # a mid-stream error has no HTTP status


def _error_view(error: ir.IRError) -> Doc:
    return {k: project("error", ir.to_json(error))[k] for k in ("kind", "message", "retry_after")}


ROUND_TRIPS = {
    CODEC.name: RoundTrip(
        rules=frozenset(STEPS),
        expect_request=lambda request: project("request", ir.to_json(request)),
        expect_response=lambda response: project("response", ir.to_json(response)),
        check_request=lambda wire, _request: check_request(wire),
        check_response=check_response,
        seen_request=lambda request: project("request", ir.to_json(request)),
        seen_response=lambda response: project("response", ir.to_json(response)),
        expect_stream=lambda response, chunk: project(
            "events", events_doc(strategies.events_for(response, chunk=chunk))
        ),
        seen_stream=lambda events: project("events", events_doc(events)),
        check_stream=lambda body, _events: check_stream(body),
        stream_bodies=_stream_bodies,
        expect_stream_error=_sent_terminal_error,
        seen_stream_error=_terminal_error,
        error_after_content=False,
        expect_error=_error_view,
        seen_error=_error_view,
        check_error=lambda wire, _error: check_error(wire),
    )
}
"""The generic round trips' parameters (tests/protocols/test_contract.py)."""
