"""The codec on real Bedrock Converse traffic recorded by other projects (see recordings.py; skipped, saying how
to get it, when the mirrors are absent): recorded values decode as recorded, in any chunking, and what the
encoder writes for the decoded IR has the shape of the recording (event sequence, keys, headers, padding)."""

from __future__ import annotations

import json

import pytest

from harness import ir
from harness.protocols import DecodeError, decode_events, encode_events
from harness.protocols.bedrock.stream_encode import PADDING
from harness.stream import accumulate, validate
from tests.protocols.bedrock import recordings
from tests.protocols.bedrock.support import CODEC, assert_schema, event_types, frames, random_chunks
from tests.wire.chunking import chunkings

# Recorded request bodies that are not JSON: pydantic-ai edited them by hand (a truncated object, a lost quote).
BROKEN_REQUESTS = {
    "test_bedrock_model_other_parameters.yaml": 320,
    "test_video_as_binary_content_input.yaml": 52,
}


def _response(body: bytes) -> ir.Response:
    return accumulate(decode_events(CODEC, [body])).response


def test_every_recorded_exchange_decodes() -> None:
    checked = {"stream": 0, "response": 0, "error": 0, "request": 0}
    for rec in recordings.all_recordings():
        name = rec.source.rsplit("/", 1)[1].split("#")[0]
        if name in BROKEN_REQUESTS:
            with pytest.raises(DecodeError) as info:
                CODEC.decode_request(rec.request())
            assert info.value.offset == BROKEN_REQUESTS[name], rec.source
        else:
            request = CODEC.decode_request(rec.request())
            assert request.stream is rec.stream and request.model and ":" not in rec.path, rec.source
            # Whatever the IR cannot say rides in provider_fields: the re-encoded request decodes the same.
            assert CODEC.decode_request(CODEC.encode_request(request)) == request, rec.source
            checked["request"] += 1
        if rec.status >= 400:
            error = CODEC.decode_error(rec.status, rec.headers, rec.body)
            assert (error.status, error.kind) == (400, ir.ErrorKind.INVALID_REQUEST), rec.source
            checked["error"] += 1
        elif rec.stream:
            events = decode_events(CODEC, [rec.body])
            assert validate(events) == [] and isinstance(events[-1], ir.Done), rec.source
            assert decode_events(CODEC, random_chunks(rec.body, 7)) == events, rec.source
            checked["stream"] += 1
        else:
            assert CODEC.decode_response(rec.body).usage.output_tokens, rec.source
            checked["response"] += 1
    assert checked == {"stream": 9, "response": 84, "error": 2, "request": 93}


def test_a_streamed_answer_with_its_usage_and_stop_reason() -> None:
    rec = recordings.recording("test_bedrock_model_stream.yaml")
    assert rec.path == "/model/us.amazon.nova-micro-v1%3A0/converse-stream"
    assert CODEC.decode_request(rec.request()).model == "us.amazon.nova-micro-v1:0"
    for chunks in chunkings(rec.body).values():
        events = decode_events(CODEC, chunks)
        response = accumulate(events).response
        text = response.content[0]
        assert isinstance(text, ir.TextPart)
        assert text.text.startswith("The capital of France is Paris. Paris is not only the capital city but also")
        assert response.stop_reason == ir.StopReason(kind="end_turn", raw="end_turn")
        assert response.usage == ir.Usage(input_tokens=13, output_tokens=82)


def test_text_then_a_streamed_tool_call_recorded_through_envoy_ai_gateway() -> None:
    events = decode_events(CODEC, [recordings.gateway_stream()])
    response = accumulate(events).response
    text, call = response.content
    assert isinstance(text, ir.TextPart) and isinstance(call, ir.ToolCallPart)
    assert text.text.startswith('To calculate the cosine of 7, we can use the "cosine" function')
    assert (call.id, call.name, call.arguments, call.arguments_raw) == (
        "tooluse_QklrEHKjRu6Oc4BQUfy7ZQ",
        "cosine",
        {"x": 7},
        '{"x": 7}',  # the fragments as sent ("" first), not re-serialized
    )
    assert [e.kind for e in events if e.kind.startswith("tool_call")] == [
        "tool_call_start",
        "tool_call_delta",
        "tool_call_end",
    ]
    assert response.stop_reason is not None and response.stop_reason.kind == "tool_use"
    assert response.usage == ir.Usage(input_tokens=386, output_tokens=75)


def test_reasoning_text_and_its_signature_delta() -> None:
    response = _response(recordings.recording("test_bedrock_model_thinking_part_stream.yaml").body)
    thinking, text = response.content
    assert isinstance(thinking, ir.ThinkingPart) and isinstance(text, ir.TextPart)
    assert thinking.text.startswith('The user has greeted me with a simple "Hello".')
    assert thinking.signature is not None and thinking.signature.startswith("Eu0CCkgIBxABGAIqQJDccbDQkr81n7Qj")


def test_redacted_reasoning_is_anthropics_data_text_inside_a_base64_blob() -> None:
    rec = recordings.recording("test_bedrock_model_thinking_part_redacted_stream.yaml")
    first, second, text = _response(rec.body).content
    assert isinstance(first, ir.RedactedThinkingPart) and isinstance(second, ir.RedactedThinkingPart)
    assert first.data.startswith("EtkECkgIBxAB") and second.data.startswith("EqADCkgIBxAB")
    wire = frames(rec.body)[1]["payload"]["delta"]["reasoningContent"]["redactedContent"]
    assert wire.startswith("RXRrRUNrZ0lCeEFC")  # base64 of "EtkECkgIBxAB..."
    assert isinstance(text, ir.TextPart) and text.text.startswith("I notice you've sent")


def test_blocks_open_on_their_first_delta_even_an_empty_one() -> None:
    # openai.gpt-oss-120b: an empty text block, a reasoning block, then the answer; no contentBlockStart at all.
    rec = recordings.recording("test_bedrock_model_stream_empty_text_delta.yaml")
    assert "contentBlockStart" not in event_types(rec.body)
    assert _response(rec.body).content == [
        ir.TextPart(text=""),
        ir.ThinkingPart(
            text='The user just says "Hi". We need to respond appropriately, friendly greeting. '
            "No special instructions. Should be short."
        ),
        ir.TextPart(text="Hello! How can I help you today?"),
    ]


def test_server_tool_calls_and_their_results_have_no_ir_form() -> None:
    # Nova's code interpreter: a toolUse of type server_tool_use and a toolResult block, then the real call.
    rec = recordings.recording("test_bedrock_model_code_execution_tool_stream.yaml")
    assert event_types(rec.body).count("contentBlockStart") == 3
    response = _response(rec.body)
    assert [(p.name, p.arguments) for p in response.content if isinstance(p, ir.ToolCallPart)] == [
        ("final_result", {"result": 7006652.0})
    ]
    assert len(response.content) == 1 and response.usage == ir.Usage(input_tokens=1002, output_tokens=59)


def test_cache_reads_and_writes_count_into_input_tokens() -> None:
    write, read = recordings.cassette("test_bedrock_cache_write_and_read.yaml")
    assert json.loads(write.body)["usage"]["totalTokens"] == 1329  # 2 fresh + 1322 written + 5 out
    assert CODEC.decode_response(write.body).usage == ir.Usage(
        input_tokens=1324, output_tokens=5, cache_read_tokens=0, cache_write_tokens=1322
    )
    assert CODEC.decode_response(read.body).usage == ir.Usage(
        input_tokens=1324, output_tokens=5, cache_read_tokens=1322, cache_write_tokens=0
    )
    # The cache points of the request have no IR form: they ride along verbatim.
    request = CODEC.decode_request(write.request())
    raw = request.provider_fields["bedrock"]
    assert {"cachePoint": {"type": "default"}} in raw["messages"][0]["content"]
    assert json.loads(CODEC.encode_request(request).body)["messages"] == raw["messages"]


def test_a_tool_turn_with_thinking_history_decodes_into_ir_turns() -> None:
    first, second = recordings.cassette("test_bedrock_anthropic_tool_with_thinking.yaml")
    response = CODEC.decode_response(first.body)
    assert [p.kind for p in response.content] == ["thinking", "text", "tool_call"]
    assert response.content[2] == ir.ToolCallPart(
        id="tooluse_W9DaUFg4Tj2cRPpndqxWSg", name="get_user_country", arguments={}, arguments_raw="{}"
    )
    assert response.stop_reason == ir.StopReason(kind="tool_use", raw="tool_use")
    assert response.usage == ir.Usage(input_tokens=397, output_tokens=130, cache_read_tokens=0, cache_write_tokens=0)
    request = CODEC.decode_request(second.request())
    assert request.thinking == ir.ThinkingConfig(enabled=True, budget_tokens=1024)
    assert [m.role for m in request.messages] == ["user", "assistant", "tool"]
    assistant = request.messages[1].content
    assert isinstance(assistant[0], ir.ThinkingPart) and assistant[0].signature == response.content[0].signature  # type: ignore[union-attr]
    assert request.messages[2].content == [
        ir.ToolResultPart(
            tool_call_id="tooluse_W9DaUFg4Tj2cRPpndqxWSg", name="get_user_country", content=[ir.TextPart(text="Mexico")]
        )
    ]


def test_an_image_in_bytes_and_a_recorded_error() -> None:
    request = CODEC.decode_request(recordings.recording("test_image_as_binary_content_input.yaml").request())
    image = request.messages[0].content[1]
    assert isinstance(image, ir.ImagePart) and isinstance(image.source, ir.Base64Image)
    assert image.source.media_type == "image/png" and image.source.data.startswith("iVBORw0KGgo")
    rec = recordings.recording("test_bedrock_error.yaml")
    error = CODEC.decode_error(rec.status, rec.headers, rec.body)
    assert error == ir.IRError.of(
        ir.ErrorKind.INVALID_REQUEST, "The provided model identifier is invalid.", status=400, code=None
    )


# --- what the encoder derives from the recordings ---------------------------------------------------------


def _shape(body: bytes) -> list[tuple[str, list[str]]]:
    """(event type, payload keys without the padding) of each frame."""
    return [
        (f["headers"][":event-type"], sorted(k for k in f["payload"] if k != "p"))
        for f in frames(body)
        if f["headers"].get(":message-type") == "event"
    ]


@pytest.mark.parametrize(
    "name",
    [
        "test_bedrock_model_stream.yaml",
        "test_bedrock_model_thinking_part_redacted_stream.yaml",
        "test_bedrock_model_stream_empty_text_delta.yaml",
        "test_bedrock_model_iter_stream.yaml",
    ],
)
def test_the_encoder_writes_the_recorded_event_sequence_and_keys(name: str) -> None:
    rec = recordings.recording(name)
    events = decode_events(CODEC, [rec.body])
    body = encode_events(CODEC, events)
    assert _shape(body) == _shape(rec.body)
    for frame in frames(body):
        assert list(frame["headers"]) == [":event-type", ":content-type", ":message-type"]
        assert PADDING.startswith(frame["payload"]["p"]) and 1 <= len(frame["payload"]["p"]) <= 57
        assert_schema("stream_event", frame)
    assert decode_events(CODEC, [body]) == events


def test_recorded_frames_match_the_schema() -> None:
    for rec in recordings.all_recordings():
        if rec.stream and rec.status == 200:
            for frame in frames(rec.body):
                assert_schema("stream_event", frame)
        elif rec.status == 200:
            assert_schema("response", json.loads(rec.body))
