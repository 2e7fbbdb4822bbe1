"""Wire rules (`facts.Frontend.wire_rules`): every real recording of a frontend protocol in the corpus keeps every
rule of that protocol (the rule rests on it), and the deviations real gateways showed break them, each named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.capture.loader import load_interactions
from harness.protocols import registry
from harness.protocols.facts import WireRule, collapsed
from tests.conftest import corpus_files

CORPUS_FOLDERS = {"openai": "openai_chat", "gemini": "gemini", "responses": "openai_responses"}
"""The corpus folder of each protocol that declares wire rules."""


def rules(protocol: str) -> dict[str, WireRule]:
    frontend = registry.facts(protocol).frontend
    assert frontend is not None
    return {rule.name: rule for rule in frontend.wire_rules}


def findings(protocol: str, body: bytes, stream: bool) -> dict[str, list[str]]:
    return {name: found for name, rule in rules(protocol).items() if (found := rule.check(body, stream))}


def test_every_frontend_rule_names_its_evidence() -> None:
    declared = {name for name in registry.names() if (f := registry.facts(name).frontend) and f.wire_rules}
    assert declared == set(CORPUS_FOLDERS)
    for protocol in declared:
        for name, rule in rules(protocol).items():
            assert name.startswith(f"{protocol}.") and ("corpus" in rule.source and "http" in rule.source)


@pytest.mark.parametrize(
    "path",
    [p for protocol, folder in CORPUS_FOLDERS.items() for p in corpus_files(folder)],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_real_recordings_keep_every_rule(path: Path) -> None:
    protocol = next(p for p, folder in CORPUS_FOLDERS.items() if folder == path.parent.name)
    for interaction in load_interactions(path):
        if interaction.response.status != 200:
            continue
        body = interaction.response.body
        stream = b"data:" in body[:200] or body.lstrip()[:1] == b"["
        assert findings(protocol, body, stream) == {}, path


# LiteLLM 1.106.2's usage chunk for an OpenAI client (truncated-stream, openai -> openai, the scout's capture).
LITELLM_USAGE_CHUNK = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-mini",'
    b'"choices":[{"index":0,"delta":{}}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,'
    b'"completion_tokens_details":{"reasoning_tokens":0,"text_tokens":5},"cost":0.0001}}\n\ndata: [DONE]\n\n'
)


def test_openai_usage_chunk_with_choices_and_extra_fields_breaks_the_rules() -> None:
    found = findings("openai", LITELLM_USAGE_CHUNK, True)
    assert found == {
        "openai.usage_chunk_choices_empty": ['chunk 0 carries usage with choices [{"index": 0, "delta": {}}]'],
        "openai.documented_fields": [
            "chunk 0 usage has cost",
            "chunk 0 usage.completion_tokens_details has text_tokens",
        ],
    }


def test_a_finding_at_several_numbered_places_is_said_once_where_the_first_was() -> None:
    found = ["chunk 0 has provider", "body x", "chunk 1 has provider", "chunk 2 usage has cost", "chunk 3 has provider"]
    found += ["chunk 4 has provider", "event 9 has created_at 0", "chunk 9 has provider"]
    assert collapsed(found) == [
        "chunks 0-1, 3-4, 9 (each) has provider",
        "body x",
        "chunk 2 usage has cost",
        "event 9 has created_at 0",
    ]
    unplaced = ["expected 2 got 3", "expected 5 got 3"]  # only a chunk or an event is a place
    assert collapsed([]) == [] and collapsed(unplaced) == unplaced


def test_openai_midstream_error_object_is_not_a_chunk() -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1767225600, "model": "m",
             "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]}  # fmt: skip
    error = {"error": {"message": "Overloaded", "type": "server_error", "param": None, "code": None}}
    body = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(error)}\n\n".encode()
    assert findings("openai", body, True) == {}


def test_openai_nonstream_tool_call_with_index_breaks_its_rule_only() -> None:
    body = {
        "id": "c", "object": "chat.completion", "created": 1767225600, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
            "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                            "function": {"name": "f", "arguments": "{}"}}]}}],
    }  # fmt: skip
    found = findings("openai", json.dumps(body).encode(), False)
    assert found == {"openai.nonstream_tool_call_no_index": ["body choices[0] tool_calls[0] has index 0"]}
    # In a stream, `index` is how deltas are numbered: no finding.
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1767225600, "model": "m", "choices": [
        {"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                               "function": {"name": "f", "arguments": ""}}]}}]}  # fmt: skip
    assert findings("openai", f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode(), True) == {}


def _gemini_chunk(text: str, finish: str | None = None) -> bytes:
    candidate: dict[str, object] = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return f"data: {json.dumps({'candidates': [candidate]})}\r\n\r\n".encode()


def test_gemini_content_after_the_finish_chunk_breaks_its_rule() -> None:
    clean = _gemini_chunk("Hel") + _gemini_chunk("lo", "STOP")
    assert findings("gemini", clean, True) == {}
    late = clean + _gemini_chunk(" again")
    (message,) = findings("gemini", late, True)["gemini.nothing_after_finish"]
    assert message.startswith("1 chunk(s) after the finishReason chunk 1:") and "again" in message
    # The same as a JSON array stream (no `alt=sse`).
    array = b"[" + b",".join(line.removeprefix(b"data: ").strip() for line in late.split(b"\r\n\r\n") if line) + b"]"
    assert "gemini.nothing_after_finish" in findings("gemini", array, True)


def _responses_event(kind: str, index: int, **fields: object) -> str:
    data = {"type": kind, "output_index": index, "sequence_number": 0, **fields}
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n"


def test_responses_items_streamed_concurrently_break_their_rule() -> None:
    """codex-rosetta 0.1.0 and LiteLLM 1.106.2 (CR9, LR12): a second output item added before the first is done.
    The specification allows it (each event names its item); api.openai.com never does it: a warning."""
    call = {"type": "function_call", "name": "f", "arguments": ""}
    added = [_responses_event("response.output_item.added", n, item={**call, "id": f"fc_{n}"}) for n in (0, 1)]
    done = [_responses_event("response.output_item.done", n, item={**call, "id": f"fc_{n}"}) for n in (0, 1)]
    one_by_one = (added[0] + done[0] + added[1] + done[1]).encode()
    assert findings("responses", one_by_one, True) == {}
    concurrent = (added[0] + added[1] + done[0] + done[1]).encode()
    assert findings("responses", concurrent, True) == {
        "responses.items_one_at_a_time": ["event 1 adds output item 1 while item(s) [0] are open"]
    }
    assert findings("responses", b'{"object": "response", "output": []}', False) == {}


def test_responses_stream_without_sequence_number_breaks_its_rule() -> None:
    """A stream numbering no event decodes (OpenAI's before about April 2025); the API numbers every event today
    (open-responses-server 0.4.1 numbers none): a warning."""
    call = {"type": "function_call", "name": "f", "arguments": ""}
    kinds = ("response.output_item.added", "response.output_item.done")
    events = [_responses_event(kind, 0, item={**call, "id": "fc_0"}) for kind in kinds]
    assert findings("responses", "".join(events).encode(), True) == {}
    bare = "".join(e.replace('"sequence_number": 0, ', "") for e in events).encode()
    assert findings("responses", bare, True) == {
        "responses.events_numbered": ["2 of 2 events have no sequence_number (the first: event 0)"]
    }


def test_openai_created_zero_breaks_its_rule() -> None:
    """Our own proxy wrote `created: 0` on every body and chunk (issue 21): the SDK reads it, a real answer never
    has it."""
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
             "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]}  # fmt: skip
    body = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
    assert findings("openai", body, True) == {
        "openai.created_is_a_time": ["chunk 0 has created 0", "chunk 1 has created 0"]
    }
    whole = {"id": "c", "object": "chat.completion", "created": "1767225600", "model": "m", "choices": []}
    assert findings("openai", json.dumps(whole).encode(), False) == {
        "openai.created_is_a_time": ['body has created "1767225600"']
    }


def test_responses_created_at_zero_breaks_its_rule() -> None:
    """Issue 21: Responses objects with `created_at: 0` pass the SDK; the API never sends one."""
    head = {"id": "resp_1", "object": "response", "created_at": 0, "status": "in_progress", "output": []}
    event = {"type": "response.created", "sequence_number": 0, "response": head}
    body = f"event: response.created\ndata: {json.dumps(event)}\n\n"
    assert findings("responses", body.encode(), True) == {
        "responses.created_at_is_a_time": ["event 0 has created_at 0"]
    }
    whole = {**head, "created_at": 1767225600, "status": "completed"}
    assert "responses.created_at_is_a_time" not in findings("responses", json.dumps(whole).encode(), False)
    assert findings("responses", json.dumps({**whole, "created_at": None}).encode(), False) == {}
    # The reference types it a number: a fractional time (codex-rosetta sends one) is still a time.
    assert findings("responses", json.dumps({**whole, "created_at": 1795745124.925}).encode(), False) == {}
    assert findings("responses", json.dumps({**whole, "created_at": "1767225600"}).encode(), False) == {
        "responses.created_at_is_a_time": ['body has created_at "1767225600"']
    }


def test_responses_phase_null_on_a_message_item_is_a_deviation() -> None:
    message = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": []}
    whole = {"object": "response", "id": "resp_1", "created_at": 1767225600, "status": "completed"}
    body = {**whole, "output": [{**message, "phase": None}]}
    assert findings("responses", json.dumps(body).encode(), False) == {
        "responses.phase_is_named": ["body output[0] (message msg_1) has phase null"]
    }
    named = {**whole, "output": [{**message, "phase": "final_answer"}, message]}  # a value, or no field at all
    assert findings("responses", json.dumps(named).encode(), False) == {}
    event = {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": body["output"][0]}
    stream = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
    assert findings("responses", stream.encode(), True) == {
        "responses.phase_is_named": ["event 0 item (message msg_1) has phase null"]
    }


def test_a_websocket_turn_refused_with_a_status_is_no_unnumbered_stream_event() -> None:
    """WebSocket mode's `error` event for a refused turn (`status`, nested `error`) has no `sequence_number` in the
    published type unless the stream emitted it; an `error` event without a status is a stream event and needs one."""
    refused = {"type": "error", "status": 429, "error": {"type": "requests", "message": "slow"}}
    assert findings("responses", f"data: {json.dumps(refused)}\n\n".encode(), True) == {}
    flat = {"type": "error", "code": "server_error", "message": "cut"}
    assert findings("responses", f"data: {json.dumps(flat)}\n\n".encode(), True) == {
        "responses.events_numbered": ["1 of 1 events have no sequence_number (the first: event 0)"]
    }
