"""Real recorded Anthropic traffic: every corpus file decodes, matches the schemas, and yields known values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import ir
from harness.protocols import decode_events
from harness.stream import accumulate, validate
from tests.conftest import corpus_dir
from tests.protocols.anthropic.support import (
    CODEC,
    assert_schema,
    assert_stream_schema,
    byte_chunks,
    corpus_paths,
    events_of,
    interactions,
    is_stream,
    random_chunks,
    texts,
    tool_calls,
)

pytestmark = pytest.mark.corpus

FILES = [pytest.param(p, id=p.name) for p in corpus_paths()]


def test_corpus_has_every_expected_file() -> None:
    corpus_dir("anthropic")  # skips, with the reason, when the corpus is absent
    names = {p.name for p in corpus_paths()}
    assert len(names) == 15, names


@pytest.mark.parametrize("path", FILES)
def test_every_interaction_decodes(path: Path) -> None:
    for item in interactions(path.name):
        request = CODEC.decode_request(item.request)
        assert request.model and request.messages
        status = item.response.status
        if status >= 400:
            error = CODEC.decode_error(status, item.response.headers, item.response.body)
            assert error.status == status and error.message and error.code
        elif request.stream:
            events = events_of(item.response.body)
            assert validate(events) == []
            assert isinstance(events[0], ir.MessageStart) and isinstance(events[-1], ir.Done)
        else:
            assert CODEC.decode_response(item.response.body).content


@pytest.mark.parametrize("path", FILES)
def test_streams_decode_the_same_in_any_chunking(path: Path) -> None:
    for item in interactions(path.name):
        if item.response.status >= 400 or not is_stream(item):
            continue
        body = item.response.body
        whole = events_of(body)
        assert decode_events(CODEC, byte_chunks(body)) == whole
        for seed in range(3):
            assert decode_events(CODEC, random_chunks(body, seed)) == whole


@pytest.mark.parametrize("path", FILES)
def test_corpus_bodies_match_the_schemas(path: Path) -> None:
    for item in interactions(path.name):
        assert_schema("request", json.loads(item.request.body))
        if item.response.status >= 400:
            assert_schema("error", json.loads(item.response.body))
        elif is_stream(item):
            assert_stream_schema(item.response.body)
        else:
            assert_schema("response", json.loads(item.response.body))


def _normalized(body: dict[str, object]) -> object:
    """A request body with equivalent spellings made equal (string content = one text block, nulls dropped)."""

    def walk(value: object) -> object:
        if isinstance(value, list):
            return [walk(v) for v in value]
        if not isinstance(value, dict):
            return value
        out = {}
        for key, item in value.items():
            if item is None or (key in ("is_error", "stream") and item is False):
                continue
            if key == "content" and isinstance(item, str):
                item = [{"type": "text", "text": item}]
            out[key] = walk(item)
        return out

    return walk(body)


@pytest.mark.parametrize("path", FILES)
def test_pass_through_reencodes_every_request_unchanged(path: Path) -> None:
    for item in interactions(path.name):
        request = CODEC.decode_request(item.request)
        encoded = CODEC.encode_request(request)
        assert CODEC.decode_request(encoded) == request
        assert _normalized(json.loads(encoded.body)) == _normalized(json.loads(item.request.body))
        assert encoded.headers["anthropic-version"] == "2023-06-01"
        assert_schema("request", json.loads(encoded.body))


# --- per-file values --------------------------------------------------------------------------------------


def _stream(name: str, index: int = 0) -> tuple[list[ir.StreamEvent], ir.Response]:
    events = events_of(interactions(name)[index].response.body)
    result = accumulate(events)
    assert result.error is None and result.problems == []
    return events, result.response


def test_stream_text_ping_after_first_delta_is_ignored() -> None:
    events, response = _stream("stream-text.yaml")
    assert [e.kind for e in events] == [
        "message_start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert response.id == "msg_018bk6q16LtrDpGDm6TyXTgn"
    assert response.model == "claude-sonnet-4-20250514"
    assert texts(response) == ["4200 + 42 = 4242"]
    assert response.stop_reason == ir.StopReason(kind="end_turn", raw="end_turn")
    assert response.usage == ir.Usage(input_tokens=17, output_tokens=15, cache_read_tokens=0, cache_write_tokens=0)
    start = events[0]
    assert isinstance(start, ir.MessageStart) and start.usage is not None and start.usage.output_tokens == 1


def test_stream_max_tokens() -> None:
    _, response = _stream("stream-max-tokens.yaml")
    (text,) = texts(response)
    assert text.startswith("Here are all 50 U.S. states in alphabetical order:\n\n1. Alabama\n2. Alaska")
    assert text.endswith("7. Connecticut\n8. Delaware\n9") and len(text) == 150
    assert response.stop_reason == ir.StopReason(kind="max_tokens", raw="max_tokens")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (15, 50)
    request = CODEC.decode_request(interactions("stream-max-tokens.yaml")[0].request)
    assert request.max_tokens == 50 and request.stream is True


def test_stream_parallel_tool_use_first_input_json_delta_is_empty() -> None:
    events, response = _stream("stream-parallel-tool-use.yaml")
    # The wire opens each tool_use with partial_json "": no empty fragment reaches the IR.
    assert all(e.arguments for e in events if isinstance(e, ir.ToolCallDelta))
    assert texts(response) == ["I'll retrieve the secrets for both passwords you provided."]
    assert tool_calls(response) == [
        ("toolu_015cUijgET79LXjgeYQerN2h", "secret_retrieval_tool", {"password": "mellon"}),
        ("toolu_01XZTimPexA7h3EVKesnKt5T", "secret_retrieval_tool", {"password": "radiance"}),
    ]
    raws = [p.arguments_raw for p in response.content if isinstance(p, ir.ToolCallPart)]
    assert raws == ['{"password": "mellon"}', '{"password": "radiance"}']  # as streamed, with the space
    assert response.stop_reason is not None and response.stop_reason.kind == "tool_use"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (416, 109)


def test_stream_parallel_tool_use_second_turn_recovers_tool_result_names() -> None:
    item = interactions("stream-parallel-tool-use.yaml")[1]
    request = CODEC.decode_request(item.request)
    assert request.system == "Use parallel tool calling."
    assert [m.role for m in request.messages] == ["user", "assistant", "tool"]
    results = request.messages[2].content
    assert [(r.tool_call_id, r.name, r.content) for r in results if isinstance(r, ir.ToolResultPart)] == [
        ("toolu_015cUijgET79LXjgeYQerN2h", "secret_retrieval_tool", [ir.TextPart(text="Welcome to Moria!")]),
        ("toolu_01XZTimPexA7h3EVKesnKt5T", "secret_retrieval_tool", [ir.TextPart(text="Life before Death")]),
    ]
    # cache_control on a tool_result has no IR field: the raw messages ride in provider_fields.
    assert request.provider_fields["anthropic"]["messages"][2]["content"][1]["cache_control"] == {"type": "ephemeral"}
    _, response = _stream("stream-parallel-tool-use.yaml", 1)
    (text,) = texts(response)
    assert text.startswith('Here are the secrets retrieved for each password:\n\n1. **Password "mellon"**:')
    assert text.endswith("Both secrets have been successfully retrieved!")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (602, 52)


def test_stream_parallel_tool_use_empty_input_gzip_no_argument_calls() -> None:
    _, response = _stream("stream-parallel-tool-use-empty-input-gzip.yaml")
    assert tool_calls(response) == [
        ("toolu_01LtHJmixrs9NcWQkK8hu8hj", "pelican_name_generator", {}),
        ("toolu_01N8a4jWyf116qKTMqKKmjyt", "pelican_name_generator", {}),
    ]
    assert [p.arguments_raw for p in response.content if isinstance(p, ir.ToolCallPart)] == ["", ""]
    assert response.usage == ir.Usage(input_tokens=542, output_tokens=62, cache_read_tokens=0, cache_write_tokens=0)
    request = CODEC.decode_request(interactions("stream-parallel-tool-use-empty-input-gzip.yaml")[0].request)
    assert request.tools == [
        ir.Tool(name="pelican_name_generator", description="", parameters={"properties": {}, "type": "object"})
    ]
    assert request.temperature == 1.0


def test_stream_thinking_empty_thinking_delta_before_signature_delta() -> None:
    events, response = _stream("stream-thinking.yaml")
    assert all(e.text for e in events if isinstance(e, ir.ThinkingDelta))
    thinking, text = response.content
    assert isinstance(thinking, ir.ThinkingPart) and isinstance(text, ir.TextPart)
    assert thinking.text.startswith('I need to find all prime numbers below 400 that contain "79" as a substring.')
    assert thinking.text.endswith("is 79, 179, and 379—three primes total.") and len(thinking.text) == 1883
    assert thinking.signature is not None and len(thinking.signature) == 3312
    assert thinking.signature.startswith("Eq0TCkYICxgC")
    assert text.text.endswith("- 379: Prime\n\n3")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (67, 1193)
    request = CODEC.decode_request(interactions("stream-thinking.yaml")[0].request)
    assert request.thinking == ir.ThinkingConfig(enabled=True, budget_tokens=6400)


def test_stream_thinking_gzip_stop_details_field_is_tolerated() -> None:
    _, response = _stream("stream-thinking-gzip.yaml")
    thinking, _ = response.content
    assert isinstance(thinking, ir.ThinkingPart)
    assert thinking.text.startswith("The user wants two names for a pet pelican")
    assert thinking.signature is not None and len(thinking.signature) == 656
    assert texts(response) == [
        '1. **Pouch** - references their iconic bill pouch\n2. **Pelé** - playful take on "pelican"'
    ]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (46, 133)


def test_stream_thinking_tool_use_thinking_tokens_are_reasoning_tokens() -> None:
    _, response = _stream("stream-thinking-tool-use.yaml")
    thinking, _ = response.content
    assert isinstance(thinking, ir.ThinkingPart) and thinking.signature is not None
    assert thinking.text.startswith("The user wants me to:\n1. Use the fixed_version tool")
    # the tool_use block carries `caller: {type: direct}`, which has no IR field and is ignored
    assert tool_calls(response) == [("toolu_01825dXWLSoJwCst1qTsiWdb", "fixed_version", {})]
    assert response.usage.reasoning_tokens == 53
    assert (response.usage.input_tokens, response.usage.output_tokens) == (598, 92)
    request = CODEC.decode_request(interactions("stream-thinking-tool-use.yaml")[0].request)
    assert request.thinking == ir.ThinkingConfig(enabled=True, budget_tokens=1024)
    # `display: summarized` has no IR field: the raw thinking object is kept for the Anthropic encoder.
    assert request.provider_fields["anthropic"]["thinking"]["display"] == "summarized"


def test_stream_redacted_thinking_delivered_whole_in_block_start() -> None:
    events, response = _stream("stream-redacted-thinking.yaml")
    redacted = [e for e in events if isinstance(e, ir.RedactedThinking)]
    assert [(e.index, len(e.data)) for e in redacted] == [(0, 744), (1, 296)]
    assert redacted[0].data.startswith("EqkECkYIBxgCKkA8AZ4noDfV5VcOJe")
    (text,) = texts(response)
    assert text.startswith("I notice that you've sent what appears to be some kind of test string")
    assert text.endswith("How can I assist you today with a legitimate task or question?")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (92, 189)
    request = CODEC.decode_request(interactions("stream-redacted-thinking.yaml")[0].request)
    assert request.model == "claude-sonnet-4-5-20250929" and request.max_tokens == 4096


def test_stream_web_search_server_tool_blocks_skipped_with_dense_indices() -> None:
    events, response = _stream("stream-web-search-citations.yaml")
    starts = [e.index for e in events if isinstance(e, ir.TextStart)]
    assert starts == list(range(10))  # 12 wire blocks, the first two (server tool use + result) skipped
    assert all(isinstance(p, ir.TextPart) for p in response.content)
    joined = "".join(texts(response))
    assert joined.startswith("Based on the search results, here's the current weather in San Francisco:\n\n")
    assert "Today (November 15, 2025) in San Francisco is overcast" in joined
    assert joined.endswith("a Level 1 storm system bringing periods of rain this weekend.")
    # message_delta usage is cumulative and replaces message_start's input figure (2039 -> 10423)
    start = events[0]
    assert isinstance(start, ir.MessageStart) and start.usage is not None and start.usage.input_tokens == 2039
    assert (response.usage.input_tokens, response.usage.output_tokens) == (10423, 341)
    request = CODEC.decode_request(interactions("stream-web-search-citations.yaml")[0].request)
    assert request.tools == []  # web_search is a server tool: kept raw only
    assert request.provider_fields["anthropic"]["tools"] == [{"type": "web_search_20250305", "name": "web_search"}]


def test_nonstream_text() -> None:
    item = interactions("nonstream-text.yaml")[0]
    response = CODEC.decode_response(item.response.body)
    assert response.id == "msg_01EXuhhFC9buDpjCcznFPSDs"
    assert texts(response) == ["4200 + 42 = 4242"]
    assert response.stop_reason == ir.StopReason(kind="end_turn", raw="end_turn")
    assert response.usage == ir.Usage(input_tokens=17, output_tokens=15, cache_read_tokens=0, cache_write_tokens=0)
    request = CODEC.decode_request(item.request)
    assert request.messages == [ir.Message(role="user", content=[ir.TextPart(text="What is 4200 + 42?")])]
    assert (request.max_tokens, request.system, request.stream, request.provider_fields) == (16000, None, False, {})


def test_nonstream_parallel_tool_use_system_as_cached_blocks() -> None:
    first, second = interactions("nonstream-parallel-tool-use.yaml")
    response = CODEC.decode_response(first.response.body)
    assert texts(response) == ["I'll retrieve the secrets for both passwords you provided."]
    assert tool_calls(response) == [
        ("toolu_01BUvqBj8Yb34pNAbCJJY1oc", "secret_retrieval_tool", {"password": "mellon"}),
        ("toolu_01VPuQJ1LonDBYXrr8pqPkqQ", "secret_retrieval_tool", {"password": "radiance"}),
    ]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (416, 109)
    request = CODEC.decode_request(first.request)
    assert request.system == "Use parallel tool calling."
    fields = request.provider_fields["anthropic"]
    cached = {"type": "ephemeral"}
    assert fields["system"] == [{"type": "text", "text": "Use parallel tool calling.", "cache_control": cached}]
    assert fields["tools"][0]["cache_control"] == {"type": "ephemeral"}
    assert request.tools[0].parameters["required"] == ["password"]
    final = CODEC.decode_response(second.response.body)
    (text,) = texts(final)
    assert text.endswith('- Password "radiance": **Life before Death**')
    assert final.stop_reason is not None and final.stop_reason.kind == "end_turn"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (602, 39)


def test_nonstream_thinking_with_signature() -> None:
    item = interactions("nonstream-thinking.yaml")[0]
    response = CODEC.decode_response(item.response.body)
    thinking, text = response.content
    assert isinstance(thinking, ir.ThinkingPart) and text == ir.TextPart(text="3")
    assert thinking.text.startswith('I need to find all primes below 400 that contain "79" as a substring.')
    assert thinking.signature is not None and len(thinking.signature) == 3044
    assert (response.usage.input_tokens, response.usage.output_tokens) == (67, 964)


def test_error_400_beta_query_output_config_effort() -> None:
    item = interactions("error-400-invalid-request.yaml")[0]
    assert item.request.query == {"beta": "true"}
    request = CODEC.decode_request(item.request)
    assert request.provider_fields == {"anthropic": {"output_config": {"effort": "xhigh"}}}
    assert request.messages == [ir.Message(role="user", content=[ir.TextPart(text="What is 2+2?")])]
    error = CODEC.decode_error(item.response.status, item.response.headers, item.response.body)
    assert (error.kind, error.status, error.code) == (ir.ErrorKind.INVALID_REQUEST, 400, "invalid_request_error")
    assert error.message.startswith("This model does not support effort level 'xhigh'.")
    assert not error.retryable


def test_error_401_authentication() -> None:
    item = interactions("error-401-authentication.yaml")[0]
    error = CODEC.decode_error(item.response.status, item.response.headers, item.response.body)
    assert error == ir.IRError.of(ir.ErrorKind.AUTH, "invalid x-api-key", status=401, code="authentication_error")


def test_error_404_json_error_body_on_a_stream_request() -> None:
    item = interactions("error-404-not-found-stream-request.yaml")[0]
    assert CODEC.is_stream_request(item.request)
    error = CODEC.decode_error(item.response.status, item.response.headers, item.response.body)
    assert (error.kind, error.status, error.code) == (ir.ErrorKind.NOT_FOUND, 404, "not_found_error")
    assert error.message == "model: this-model-does-not-exist-12345"
