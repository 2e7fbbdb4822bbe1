"""What real OpenAI Chat Completions answers always do beyond what the `openai` SDK needs to read them: the wire
rules a proxy serving this frontend is held to (`facts.WireRule`; a break is a wire deviation, a warning).

Each rule names its evidence: the API reference and the real recordings in the shared corpus
(`openai_chat/stream-text-include-usage.yaml`, `stream-parallel-tool-calls.yaml`, `nonstream-text.yaml`,
`nonstream-parallel-tool-calls.yaml`), which `tests/protocols/openai/test_wire_rules.py` checks them against.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from typing import Any

from harness.protocols.facts import WireRule
from harness.protocols.wire_schema import event_json, sse_data
from harness.wire import FramingError

CHAT_REFERENCE = "https://platform.openai.com/docs/api-reference/chat/object"
CHUNK_REFERENCE = "https://platform.openai.com/docs/api-reference/chat/streaming"
CORPUS_STREAM = "corpus openai_chat/stream-text-include-usage.yaml, stream-parallel-tool-calls.yaml"
CORPUS_BODY = "corpus openai_chat/nonstream-text.yaml, nonstream-parallel-tool-calls.yaml"

_USAGE = {"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details"}
_DOCUMENTED: Mapping[str, frozenset[str]] = {
    "response": frozenset(
        {"id", "object", "created", "model", "choices", "usage", "service_tier", "system_fingerprint"}
    ),
    "chunk": frozenset(
        {"id", "object", "created", "model", "choices", "usage", "service_tier", "system_fingerprint", "obfuscation"}
    ),
    "choice": frozenset({"index", "message", "logprobs", "finish_reason"}),
    "chunk choice": frozenset({"index", "delta", "logprobs", "finish_reason"}),
    "message": frozenset({"role", "content", "refusal", "tool_calls", "annotations", "audio", "function_call"}),
    "delta": frozenset({"role", "content", "refusal", "tool_calls", "function_call"}),
    "tool call": frozenset({"id", "type", "function"}),
    "tool call delta": frozenset({"index", "id", "type", "function"}),
    "usage": frozenset(_USAGE),
    "usage.prompt_tokens_details": frozenset({"cached_tokens", "audio_tokens"}),
    "usage.completion_tokens_details": frozenset(
        {"reasoning_tokens", "audio_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens"}
    ),
}
"""The fields the API reference documents on each object of an answer (and real answers carry)."""


@functools.lru_cache(maxsize=2)
def _chunks(body: bytes) -> tuple[tuple[int, dict[str, Any]], ...]:
    """The JSON object chunks of a stream, numbered; `[DONE]`, what is not an object and a mid-stream error object
    (`{"error": {...}}`, how OpenAI ends a stream that failed) are skipped (the codec and the `frontend_wire`
    check judge those). Parsed once for all the rules of one answer (they only read it). Its SSE split is the
    one the answer checks read (`wire_schema.sse_data`)."""
    try:
        events = sse_data(body)
    except FramingError:
        return ()
    out = []
    number = 0
    for data in events:
        if data in ("", "[DONE]"):
            continue
        try:
            chunk = event_json(data)
        except json.JSONDecodeError:
            continue
        if isinstance(chunk, dict) and not ("error" in chunk and "choices" not in chunk):
            out.append((number, chunk))
        number += 1
    return tuple(out)


@functools.lru_cache(maxsize=2)
def _body(body: bytes) -> dict[str, Any] | None:
    """The answer's JSON object, parsed once for all the rules of one answer (they only read it)."""
    try:
        value = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _objects(body: bytes, stream: bool) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(where, kind, object) for every object of an answer whose fields the reference documents."""
    tops = ((f"chunk {n}", "chunk", c) for n, c in _chunks(body)) if stream else [("body", "response", _body(body))]
    for where, kind, top in tops:
        if top is None:
            continue
        yield where, kind, top
        usage = top.get("usage")
        if isinstance(usage, dict):
            yield f"{where} usage", "usage", usage
            for detail in ("prompt_tokens_details", "completion_tokens_details"):
                if isinstance(usage.get(detail), dict):
                    yield f"{where} usage.{detail}", f"usage.{detail}", usage[detail]
        for i, choice in enumerate(top.get("choices") or []):
            if not isinstance(choice, dict):
                continue
            yield f"{where} choices[{i}]", "chunk choice" if stream else "choice", choice
            inner = choice.get("delta" if stream else "message")
            if not isinstance(inner, dict):
                continue
            yield f"{where} choices[{i}].{'delta' if stream else 'message'}", "delta" if stream else "message", inner
            for j, call in enumerate(inner.get("tool_calls") or []):
                if isinstance(call, dict):
                    yield f"{where} choices[{i}] tool_calls[{j}]", "tool call delta" if stream else "tool call", call


def usage_chunk_choices_empty(body: bytes, stream: bool) -> list[str]:
    """The usage chunk of a stream (`stream_options.include_usage`) has `choices: []`."""
    if not stream:
        return []
    return [
        f"chunk {n} carries usage with choices {json.dumps(chunk.get('choices'))[:120]}"
        for n, chunk in _chunks(body)
        if isinstance(chunk.get("usage"), dict) and chunk.get("choices") != []
    ]


def nonstream_tool_call_no_index(body: bytes, stream: bool) -> list[str]:
    """A non-streamed tool call has no `index` (an index numbers stream deltas only)."""
    if stream:
        return []
    return [
        f"{where} has index {obj['index']!r}"
        for where, kind, obj in _objects(body, stream)
        if kind == "tool call" and "index" in obj
    ]


def documented_fields(body: bytes, stream: bool) -> list[str]:
    """Every field of the answer's objects is one the reference documents (no `cost`, no `text_tokens`, ...);
    `index` on a non-streamed tool call is the rule above."""
    found = []
    for where, kind, obj in _objects(body, stream):
        extra = sorted(set(obj) - _DOCUMENTED[kind] - ({"index"} if kind == "tool call" else set()))
        if extra:
            found.append(f"{where} has {', '.join(extra)}")
    return found


EARLIEST_CREATED = 1_600_000_000
"""2020-09-13, before the first Chat Completions answer: a `created` below it is a placeholder, not a time."""


def created_is_a_time(body: bytes, stream: bool) -> list[str]:
    """`created` is when the completion was created, in Unix seconds: every real answer's is a time, never the 0
    (or another placeholder) a translating proxy writes when its upstream gave none. Its absence is the spec
    check's (`answer.spec`)."""
    found = []
    for where, kind, obj in _objects(body, stream):
        created = obj.get("created") if kind in ("response", "chunk") else None
        if created is not None and (not isinstance(created, int) or created < EARLIEST_CREATED):
            found.append(f"{where} has created {json.dumps(created)[:40]}")
    return found


RULES = (
    WireRule(
        "openai.usage_chunk_choices_empty",
        f"{CHUNK_REFERENCE} (stream_options.include_usage: the usage chunk's choices is always an empty array); "
        f"{CORPUS_STREAM}",
        usage_chunk_choices_empty,
    ),
    WireRule(
        "openai.nonstream_tool_call_no_index",
        f"{CHAT_REFERENCE} (message.tool_calls[]: id, type, function); {CORPUS_BODY}",
        nonstream_tool_call_no_index,
    ),
    WireRule(
        "openai.documented_fields",
        f"{CHAT_REFERENCE}, {CHUNK_REFERENCE} (the fields of each object); {CORPUS_BODY}; {CORPUS_STREAM}",
        documented_fields,
        undocumented_fields=True,
    ),
    WireRule(
        "openai.created_is_a_time",
        f"{CHAT_REFERENCE}, {CHUNK_REFERENCE} (created: the Unix timestamp, in seconds, of the completion's "
        f"creation; each chunk has the same); {CORPUS_BODY}; {CORPUS_STREAM}",
        created_is_a_time,
    ),
)
"""The wire rules of OpenAI Chat Completions as a frontend."""
