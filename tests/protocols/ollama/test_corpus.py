"""Every Ollama capture in the real-traffic corpus decodes, with the values the provider actually sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import ir
from harness.capture import load_interactions
from harness.protocols import decode_events, registry
from harness.stream import accumulate, validate
from tests.conftest import corpus_dir, corpus_files
from tests.protocols.ollama import support
from tests.protocols.ollama.support import CODEC, chunkings, corpus, decode_stream

pytestmark = pytest.mark.corpus

NATIVE = [p for p in corpus_files("ollama") if p.suffix == ".httprr"]
STREAMS = ["api-chat-stream-local.httprr", "api-chat-stream-thinking-cloud.httprr"]


def test_corpus_has_the_expected_files() -> None:
    corpus_dir("ollama")  # skips, with the reason, when the corpus is absent
    names = sorted(p.name for p in corpus_files("ollama"))
    assert names == [
        "api-chat-error-400-tools-unsupported.httprr",
        "api-chat-stream-local.httprr",
        "api-chat-stream-thinking-cloud.httprr",
        "api-chat-tool-call-thinking-cloud.httprr",
        "openai-compat-v1-chat-nonstream.yaml",
    ]


@pytest.mark.parametrize("path", NATIVE, ids=lambda p: p.name)
def test_every_native_file_decodes_and_matches_the_schemas(path: Path) -> None:
    item = corpus(path.name)
    support.check_request(item.request)
    CODEC.decode_request(item.request)
    if item.response.status >= 400:
        support.check_error(item.response)
        assert CODEC.decode_error(item.response.status, item.response.headers, item.response.body).status == 400
    elif CODEC.is_stream_request(item.request):
        support.check_stream(item.response.body)
        assert validate(decode_stream(item.response.body)) == []
    else:
        support.check_response(item.response)
        CODEC.decode_response(item.response.body)


@pytest.mark.parametrize("name", STREAMS)
def test_streams_decode_the_same_in_any_chunking(name: str) -> None:
    body = corpus(name).response.body
    expected = decode_stream(body)
    for label, chunks in chunkings(body).items():
        assert decode_events(CODEC, chunks) == expected, label


def test_stream_local_gemma_text() -> None:
    item = corpus("api-chat-stream-local.httprr")
    request = CODEC.decode_request(item.request)
    assert request.model == "gemma3:1b"
    assert request.stream is True
    assert request.max_tokens == 50
    assert request.temperature == 0.0
    assert request.messages == [ir.Message(role="user", content=[ir.TextPart(text="Count from 1 to 5")])]
    # langchaingo sends `"format": ""`, Ollama's "no format".
    assert request.response_format == ir.ResponseFormatText()
    assert item.response.headers["content-type"] == "application/x-ndjson"
    events = decode_stream(item.response.body)
    assert events[0] == ir.MessageStart(model="gemma3:1b")
    assert events[1] == ir.TextStart(index=0)
    assert events[-2] == ir.TextEnd(index=0)
    # 21 non-empty content lines, one delta each; the final line's empty content opens nothing.
    assert sum(isinstance(e, ir.TextDelta) for e in events) == 21
    # The durations have no IR field: they are kept as Ollama extras, which only Ollama's encoder writes back.
    durations = {
        "total_duration": 171946792,
        "load_duration": 38473250,
        "prompt_eval_duration": 27608250,
        "eval_duration": 105611917,
    }
    assert events[-1] == ir.Done(
        stop_reason=ir.StopReason(kind="end_turn", raw="stop"),
        usage=ir.Usage(input_tokens=16, output_tokens=22),
        extras={"ollama": durations},
    )
    result = accumulate(events)
    assert result.error is None
    assert result.response.content == [ir.TextPart(text="Okay, here we go!\n\n1, 2, 3, 4, 5\n")]


def test_stream_thinking_then_content_cloud() -> None:
    item = corpus("api-chat-stream-thinking-cloud.httprr")
    # Ollama Cloud streams NDJSON with a plain application/json content type.
    assert item.response.headers["content-type"] == "application/json"
    assert CODEC.is_stream_request(item.request)
    events = decode_stream(item.response.body)
    kinds = [e.kind for e in events if e.kind.endswith(("_start", "_end"))]
    assert kinds == ["message_start", "thinking_start", "thinking_end", "text_start", "text_end"]
    result = accumulate(events).response
    assert result.model == "gpt-oss:120b"
    assert result.content == [
        ir.ThinkingPart(
            text='User asks: "Count from 1 to 5". Simple. Respond with numbers: 1 2 3 4 5. '
            "Possibly each on separate line. Provide answer."
        ),
        ir.TextPart(text="1  \n2  \n3  \n4  \n5"),
    ]
    assert result.stop_reason == ir.StopReason(kind="end_turn", raw="stop")
    assert result.usage == ir.Usage(input_tokens=74, output_tokens=57)


def test_nonstream_tool_call_with_thinking_and_id_cloud() -> None:
    item = corpus("api-chat-tool-call-thinking-cloud.httprr")
    request = CODEC.decode_request(item.request)
    assert request.stream is False
    assert request.tools == [
        ir.Tool(
            name="getWeather",
            description="Get the current weather for a location.",
            parameters={
                "type": "object",
                "required": ["location"],
                "properties": {
                    "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"}
                },
            },
        )
    ]
    response = CODEC.decode_response(item.response.body)
    assert response.model == "gpt-oss:120b"
    assert response.content == [
        ir.ThinkingPart(text="User asks about weather in San Francisco. Use function getWeather."),
        ir.ToolCallPart(
            id="call_mo1wm122",
            name="getWeather",
            arguments={"location": "San Francisco, CA"},
            arguments_raw='{"location":"San Francisco, CA"}',
        ),
    ]
    # Ollama says `stop` even for a tool call; the IR says tool_use.
    assert response.stop_reason == ir.StopReason(kind="tool_use", raw="stop")
    assert response.usage == ir.Usage(input_tokens=145, output_tokens=44)
    assert all(p.kind != "thinking" or p.signature is None for p in response.content)


def test_error_400_model_does_not_support_tools() -> None:
    item = corpus("api-chat-error-400-tools-unsupported.httprr")
    request = CODEC.decode_request(item.request)
    assert [t.name for t in request.tools] == ["getTime"]
    error = CODEC.decode_error(item.response.status, item.response.headers, item.response.body)
    assert error == ir.IRError.of(
        ir.ErrorKind.INVALID_REQUEST, "registry.ollama.ai/library/gemma3:1b does not support tools", status=400
    )
    assert error.retryable is False


def test_openai_compat_endpoint_decodes_with_the_openai_codec() -> None:
    if "openai" not in registry.names():
        pytest.skip("the openai codec is not registered yet (another part of the tree); this file is OpenAI-shaped")
    openai = registry.get("openai")
    (item,) = load_interactions(corpus_dir("ollama") / "openai-compat-v1-chat-nonstream.yaml")
    assert item.request.path == "/v1/chat/completions"
    request = openai.decode_request(item.request)
    assert request.model == "gemma3:4b"
    assert request.messages == [ir.Message(role="user", content=[ir.TextPart(text="What is 4200 + 42?")])]
    response = openai.decode_response(item.response.body)
    assert response.id == "chatcmpl-674"
    assert response.model == "gemma3:4b"
    assert response.content == [ir.TextPart(text="4200 + 42 = 4242\n")]
    assert response.stop_reason is not None and response.stop_reason.kind == "end_turn"
    assert response.usage.input_tokens == 21
    assert response.usage.output_tokens == 16
    assert json.loads(item.response.body)["system_fingerprint"] == "fp_ollama"


def test_quirk_cloud_streams_ndjson_under_application_json() -> None:
    item = corpus("api-chat-stream-thinking-cloud.httprr")
    assert item.response.headers["content-type"] == "application/json"
    # The body is still one JSON object per line; the decoder ignores the content type.
    lines = item.response.body.splitlines()
    assert len(lines) == 48
    assert json.loads(lines[-1])["done"] is True


def test_quirk_final_done_line_carries_an_empty_content_that_opens_no_block() -> None:
    body = corpus("api-chat-stream-thinking-cloud.httprr").response.body
    last_two = [json.loads(line) for line in body.splitlines()[-2:]]
    assert [c["message"]["content"] for c in last_two] == ["", ""]
    events = decode_stream(body)
    assert sum(isinstance(e, ir.TextStart) for e in events) == 1
    assert not any(isinstance(e, ir.TextDelta) and e.text == "" for e in events)


def test_quirk_empty_format_string_means_plain_text() -> None:
    for name in ("api-chat-stream-local.httprr", "api-chat-error-400-tools-unsupported.httprr"):
        item = corpus(name)
        assert json.loads(item.request.body)["format"] == ""
        assert CODEC.decode_request(item.request).response_format == ir.ResponseFormatText()


def test_quirk_cloud_tool_call_has_id_and_function_index() -> None:
    body = json.loads(corpus("api-chat-tool-call-thinking-cloud.httprr").response.body)
    (call,) = body["message"]["tool_calls"]
    assert call["id"] == "call_mo1wm122"
    assert call["function"]["index"] == 0
    (part,) = [p for p in CODEC.decode_response(json.dumps(body).encode()).content if isinstance(p, ir.ToolCallPart)]
    assert part.id == "call_mo1wm122"
