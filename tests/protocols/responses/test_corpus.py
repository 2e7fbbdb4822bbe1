"""Every real Responses recording decodes, with the recorded values asserted: requests (and their re-encoding,
byte for byte as JSON), non-streamed and streamed responses (the same events for any chunking), and errors."""

from __future__ import annotations

import json
from functools import cache

import pytest

from harness import ir
from harness.capture import Interaction
from harness.protocols import decode_events
from harness.protocols.responses import schemas
from harness.stream import accumulate, validate
from tests.protocols.responses.support import (
    CODEC,
    byte_chunks,
    corpus_paths,
    events_of,
    interactions,
    random_chunks,
    sse_payloads,
)

pytestmark = pytest.mark.corpus

FILES = [p.name for p in corpus_paths()]


@cache
def _stream(name: str, index: int = 0) -> list[ir.StreamEvent]:
    return events_of(interactions(name)[index].response.body)


def _all() -> list[tuple[str, int, Interaction]]:
    return [(name, i, item) for name in FILES for i, item in enumerate(interactions(name))]


def test_the_corpus_has_the_six_recordings() -> None:
    if not FILES:
        pytest.skip("corpus not available")
    assert FILES == [
        "error-400-model-not-found-stream-request.yaml",
        "nonstream-text.yaml",
        "stream-function-call.yaml",
        "stream-incomplete-max-output-tokens.yaml",
        "stream-reasoning-summary.yaml",
        "stream-text.yaml",
    ]


@pytest.mark.parametrize("name", FILES)
def test_every_request_decodes_and_reencodes_to_the_same_json(name: str) -> None:
    for item in interactions(name):
        request = CODEC.decode_request(item.request)
        again = CODEC.encode_request(request)
        assert json.loads(again.body) == json.loads(item.request.body)
        assert again.path == item.request.path == "/v1/responses"
        schemas.validate("request", json.loads(item.request.body))


@pytest.mark.parametrize("name", FILES)
def test_every_stream_decodes_the_same_for_any_chunking_and_follows_the_grammar(name: str) -> None:
    for i, item in enumerate(interactions(name)):
        if item.response.status >= 400 or not CODEC.is_stream_request(item.request):
            continue
        body = item.response.body
        events = _stream(name, i)
        assert validate(events) == []
        assert decode_events(CODEC, byte_chunks(body)) == events
        assert decode_events(CODEC, random_chunks(body, seed=len(body))) == events
        for event, data in sse_payloads(body):
            schemas.validate("stream_event", data)  # our schema accepts what the real API sends
            assert event == data["type"]


def test_nonstream_text() -> None:
    item = interactions("nonstream-text.yaml")[0]
    request = CODEC.decode_request(item.request)
    assert request.model == "gpt-5.5" and request.stream is False and request.system is None
    assert request.messages == [ir.Message(role="user", content=[ir.TextPart(text="Reply with exactly: pong")])]
    assert request.thinking == ir.ThinkingConfig(enabled=True)  # reasoning.effort low
    raw = request.provider_fields["responses"]
    assert raw["_shape"]["reasoning"] == {"effort": "low", "summary": None}
    # store false and include [reasoning.encrypted_content] are what a stateless encoder sends itself
    assert "store" not in raw and "include" not in raw
    response = CODEC.decode_response(item.response.body)
    assert response == ir.Response(
        id="resp_08ddf351751647d60169fab1b8a7ac81a081b9e2400e87fb63",
        model="gpt-5.5-2026-04-23",
        content=[ir.TextPart(text="pong")],
        stop_reason=ir.StopReason(kind="end_turn", raw="completed"),
        usage=ir.Usage(input_tokens=11, output_tokens=5, cache_read_tokens=0, reasoning_tokens=0),
        # What the IR has no place for is kept: billing and the message's phase; the times are the encoder's own
        # (a proxy answers now), and `default` is the tier the encoder writes when it knows none.
        extras={
            "responses": {
                "billing": {"payer": "developer"},
                "moderation": None,
                "prompt_cache_retention": "24h",
                "output": [{"phase": "final_answer"}],
            }
        },
    )
    schemas.validate("response", json.loads(item.response.body))
    # Re-encoded, the body has the recorded keys and values again; the times are the encoder's clock.
    again = json.loads(CODEC.encode_response(response).body)
    assert again["created_at"] >= 1778037176 and again["completed_at"] >= again["created_at"]
    assert again["billing"] == {"payer": "developer"}
    assert again["output"][0]["phase"] == "final_answer" and again["service_tier"] == "default"


def test_stream_text() -> None:
    events = _stream("stream-text.yaml")
    start = {"moderation": None, "prompt_cache_retention": "24h"}
    assert events == [
        ir.MessageStart(
            id="resp_00592e63e61b66660169fab1b9f8e481a2b321356198d7ac1b",
            model="gpt-5.5-2026-04-23",
            extras={"responses": {**start, "service_tier": "auto"}},
        ),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="pong"),
        ir.TextEnd(index=0),
        ir.Done(
            stop_reason=ir.StopReason(kind="end_turn", raw="completed"),
            usage=ir.Usage(input_tokens=11, output_tokens=5, cache_read_tokens=0, reasoning_tokens=0),
            extras={"responses": {**start, "output": [{"phase": "final_answer"}]}},
        ),
    ]


def test_stream_function_call_then_its_output_fed_back() -> None:
    first, second = interactions("stream-function-call.yaml")
    request = CODEC.decode_request(first.request)
    assert request.tools == [
        ir.Tool(
            name="multiply",
            description="Multiply two numbers.",
            parameters={
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
                "type": "object",
            },
        )
    ]
    # The client left `strict` out (the API then enforces it): remembered so re-encoding leaves it out too.
    assert request.provider_fields["responses"]["_shape"]["tools_without_strict"] == [0]
    response = accumulate(_stream("stream-function-call.yaml")).response
    call = ir.ToolCallPart(
        id="call_sVidsfFJ6zlzRpelrPkTPlpd", name="multiply", arguments={"a": 1231, "b": 2331},
        arguments_raw='{"a":1231,"b":2331}',
    )  # fmt: skip
    assert response.content == [call]
    assert response.stop_reason == ir.StopReason(kind="tool_use", raw="completed")
    assert response.usage == ir.Usage(input_tokens=58, output_tokens=23, cache_read_tokens=0, reasoning_tokens=0)
    fragments = [e.arguments for e in _stream("stream-function-call.yaml") if isinstance(e, ir.ToolCallDelta)]
    assert fragments == ['{"', "a", '":', "123", "1", ',"', "b", '":', "233", "1", "}"]

    follow_up = CODEC.decode_request(second.request)
    assert [m.role for m in follow_up.messages] == ["user", "assistant", "tool"]
    assert follow_up.messages[1].content == [
        ir.ToolCallPart(
            id="call_sVidsfFJ6zlzRpelrPkTPlpd", name="multiply", arguments={"a": 1231, "b": 2331},
            arguments_raw='{"a": 1231, "b": 2331}',
        )
    ]  # fmt: skip
    result = ir.ToolResultPart(tool_call_id=call.id, name="multiply", content=[ir.TextPart(text="2869461")])
    assert follow_up.messages[2].content == [result]
    answer = accumulate(_stream("stream-function-call.yaml", 1)).response
    assert [p.text for p in answer.content if isinstance(p, ir.TextPart)] == ["1231 \u00d7 2331 = **2,869,461**"]
    assert answer.stop_reason == ir.StopReason(kind="end_turn", raw="completed")


def test_stream_incomplete_max_output_tokens_is_a_max_tokens_stop() -> None:
    item = interactions("stream-incomplete-max-output-tokens.yaml")[0]
    request = CODEC.decode_request(item.request)
    assert request.max_tokens == 50 and request.model == "gpt-4o" and request.thinking is None
    events = _stream("stream-incomplete-max-output-tokens.yaml")
    done = events[-1]
    assert done == ir.Done(
        stop_reason=ir.StopReason(kind="max_tokens", raw="max_output_tokens"),
        usage=ir.Usage(input_tokens=14, output_tokens=50, cache_read_tokens=0, reasoning_tokens=0),
        extras=None,  # its times are the encoder's own, its tier the encoder's default
    )
    text = accumulate(events).response.content[0]
    assert isinstance(text, ir.TextPart) and text.text.endswith("8. Delaware\n9. Florida")
    assert len([e for e in events if isinstance(e, ir.TextDelta)]) == 50


def test_stream_reasoning_summary_parts_are_thinking_blocks_before_the_answer() -> None:
    item = interactions("stream-reasoning-summary.yaml")[0]
    request = CODEC.decode_request(item.request)
    assert request.thinking == ir.ThinkingConfig(enabled=True)
    # effort medium and summary auto are what the encoder writes: no hint for them; store and include were absent
    assert request.provider_fields["responses"]["_shape"] == {"omitted": ["store", "include"]}
    events = _stream("stream-reasoning-summary.yaml")
    response = accumulate(events).response
    kinds = [p.kind for p in response.content]
    assert kinds == ["thinking", "thinking", "thinking", "text"]
    thinking = [p for p in response.content if isinstance(p, ir.ThinkingPart)]
    assert [t.text.split("\n")[0] for t in thinking] == [
        "**Exploring prime numbers**",
        "**Testing prime candidates**",
        "**Final count of primes**",
    ]
    assert all(t.signature is None for t in thinking)  # the request did not include encrypted content
    assert response.content[-1] == ir.TextPart(text="3")
    assert response.usage == ir.Usage(input_tokens=32, output_tokens=839, cache_read_tokens=0, reasoning_tokens=832)
    # Each summary part's block ends when the next part begins, before any of its deltas.
    ends = [i for i, e in enumerate(events) if isinstance(e, ir.ThinkingEnd)]
    starts = [i for i, e in enumerate(events) if isinstance(e, ir.ThinkingStart)]
    assert [end + 1 for end in ends[:2]] == starts[1:]


def test_error_400_model_not_found() -> None:
    item = interactions("error-400-model-not-found-stream-request.yaml")[0]
    assert CODEC.is_stream_request(item.request)
    error = CODEC.decode_error(item.response.status, item.response.headers, item.response.body)
    assert error == ir.IRError.of(
        ir.ErrorKind.NOT_FOUND,
        "The requested model 'this-model-does-not-exist-12345' does not exist.",
        status=400,
        code="model_not_found",
    )
    schemas.validate("error", json.loads(item.response.body))
    # A pass-through keeps the code and the status.
    again = CODEC.encode_error(error)
    assert json.loads(again.body)["error"]["code"] == "model_not_found"
