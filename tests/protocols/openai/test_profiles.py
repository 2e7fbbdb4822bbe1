"""Profiles on real traffic of OpenAI-compatible providers (`openai_compat` corpus): DeepSeek and Groq as
registered profiles, and the base decoder's tolerance for what the later profiles (OpenRouter, Mistral,
llama.cpp, xAI, Together) send. Tests are named after the quirk they pin down."""

from __future__ import annotations

import json

import pytest

from harness import ir
from harness.protocols import Codec, DecodeError, decode_events, encode_events
from harness.protocols.openai import DEEPSEEK, GROQ, OpenAICodec, Profile, quirks
from harness.stream import accumulate, validate
from tests.conftest import corpus_files
from tests.protocols.openai import support
from tests.protocols.openai.support import chunkings, interactions, sse_payloads

pytestmark = pytest.mark.corpus

FOLDER = "openai_compat"


def _decode(codec: Codec, name: str, index: int = 0) -> tuple[list[ir.StreamEvent], ir.Response]:
    body = interactions(FOLDER, name)[index].response.body
    events = decode_events(codec, [body])
    assert validate(events) == []
    for chunks in chunkings(body).values():
        assert decode_events(codec, chunks) == events
    return events, accumulate(events).response


def _text(response: ir.Response, kind: type[ir.TextPart] | type[ir.ThinkingPart] = ir.TextPart) -> str:
    return "".join(p.text for p in response.content if isinstance(p, kind))


MISTRAL_TEST = OpenAICodec(Profile(name="mistral-test", decode_chunk=quirks.content_arrays))


def _codec_for(name: str) -> Codec:
    prefix = name.split("-", 1)[0]
    return {"deepseek": support.DEEPSEEK, "groq": support.GROQ, "mistral": MISTRAL_TEST}.get(prefix, support.OPENAI)


@pytest.mark.parametrize("name", [p.name for p in corpus_files(FOLDER)])
def test_every_openai_compat_file_decodes(name: str) -> None:
    codec = _codec_for(name)
    for item in interactions(FOLDER, name):
        assert codec.decode_request(item.request).messages
        if item.response.status >= 400:
            assert codec.decode_error(item.response.status, item.response.headers, item.response.body).message
        elif "event-stream" in item.response.headers.get("content-type", ""):
            events = decode_events(codec, [item.response.body])
            assert validate(events) == []
            assert all(e.signature is None for e in events if isinstance(e, ir.ThinkingEnd))  # no wire field
        else:
            assert codec.decode_response(item.response.body).content


# --- DeepSeek ---------------------------------------------------------------------------------------------


def test_deepseek_reasoning_content_with_null_content_then_text() -> None:
    events, response = _decode(support.DEEPSEEK, "deepseek-stream-reasoning-content.yaml")
    assert [p.kind for p in response.content] == ["thinking", "text"]
    assert _text(response, ir.ThinkingPart).startswith('Hmm, the user just said "Hello". It\'s a simple greeting')
    assert _text(response) == "Hello there! 😊 How can I help you today?"
    assert response.stop_reason == ir.StopReason(kind="end_turn", raw="stop")
    assert response.usage == ir.Usage(input_tokens=6, output_tokens=212, cache_read_tokens=0, reasoning_tokens=198)
    assert events[1] == ir.ThinkingStart(index=0)  # the empty reasoning_content of the role chunk opens nothing


def test_deepseek_prompt_cache_hit_tokens_are_cache_reads() -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 3, "prompt_cache_hit_tokens": 8, "prompt_cache_miss_tokens": 2}
    chunk = {"id": "d", "object": "chat.completion.chunk", "created": 0, "model": "deepseek-chat", "choices": []}
    body = f"data: {json.dumps({**chunk, 'usage': usage})}\n\ndata: [DONE]\n\n".encode()
    done = decode_events(support.DEEPSEEK, [body])[-1]
    assert isinstance(done, ir.Done) and done.usage == ir.Usage(input_tokens=10, output_tokens=3, cache_read_tokens=8)
    # The plain OpenAI profile does not know the DeepSeek field.
    plain = decode_events(support.OPENAI, [body])[-1]
    assert isinstance(plain, ir.Done) and plain.usage is not None and plain.usage.cache_read_tokens is None


def test_deepseek_encoder_reports_cache_hits_and_misses_and_uses_its_path() -> None:
    response = ir.Response(id="d", model="deepseek-chat", usage=ir.Usage(input_tokens=10, cache_read_tokens=8))
    body = json.loads(support.DEEPSEEK.encode_response(response).body)
    assert body["usage"]["prompt_cache_hit_tokens"] == 8 and body["usage"]["prompt_cache_miss_tokens"] == 2
    request = support.DEEPSEEK.encode_request(ir.Request(model="deepseek-chat", max_tokens=5))
    assert request.path == "/chat/completions"
    assert json.loads(request.body)["max_tokens"] == 5
    assert DEEPSEEK.finish_reasons["insufficient_system_resource"] == "error"


# --- Groq -------------------------------------------------------------------------------------------------


def test_groq_event_error_inside_200_stream_without_done_is_terminal_error() -> None:
    events, _ = _decode(support.GROQ, "groq-stream-midstream-error-event.yaml")
    assert [e.kind for e in events[-2:]] == ["thinking_end", "error"]
    error = events[-1]
    assert isinstance(error, ir.ErrorEvent)
    assert error.error.kind == ir.ErrorKind.INVALID_REQUEST and error.error.code == "tool_use_failed"
    assert error.error.message.startswith("Tool call validation failed: tool call validation failed: parameters")
    assert error.error.status is None
    thinking = "".join(e.text for e in events if isinstance(e, ir.ThinkingDelta))
    assert thinking.startswith("We need to call the tool with invalid parameters first")


def test_groq_delta_reasoning_with_channel_is_thinking() -> None:
    payloads = sse_payloads(interactions(FOLDER, "groq-stream-midstream-error-event.yaml")[0].response.body)
    assert payloads[1]["choices"][0]["delta"] == {"reasoning": "We", "channel": "analysis"}


def test_groq_x_groq_usage_and_duplicate_usage_chunks() -> None:
    _, response = _decode(support.GROQ, "groq-stream-text-x-groq-usage.yaml")
    assert _text(response) == "Olá!"
    assert response.usage == ir.Usage(input_tokens=20, output_tokens=4)
    chunk = {"choices": [], "x_groq": {"id": "req_1", "usage": {"prompt_tokens": 7, "completion_tokens": 2}}}
    assert quirks.x_groq_usage(chunk)["usage"] == {"prompt_tokens": 7, "completion_tokens": 2}
    assert quirks.x_groq_usage({"usage": {"prompt_tokens": 1}, "x_groq": chunk["x_groq"]})["usage"] == {
        "prompt_tokens": 1
    }


def test_groq_x_groq_only_usage_lands_in_done() -> None:
    base = {"id": "g", "object": "chat.completion.chunk", "created": 0, "model": "llama"}
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": None}]},
        {
            **base,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "x_groq": {"id": "req_1", "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}},
        },
    ]
    body = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"
    done = decode_events(support.GROQ, [body])[-1]
    assert done == ir.Done(
        stop_reason=ir.StopReason(kind="end_turn", raw="stop"), usage=ir.Usage(input_tokens=9, output_tokens=1)
    )


def test_groq_tool_calls_complete_in_one_fragment_after_text() -> None:
    _, response = _decode(support.GROQ, "groq-stream-parallel-tool-calls.yaml")
    assert [p.kind for p in response.content] == ["text", "tool_call", "tool_call"]
    calls = [(p.id, p.name, p.arguments) for p in response.content if isinstance(p, ir.ToolCallPart)]
    assert calls == [
        ("functions.add:0", "add", {"a": 2, "b": 3}),
        ("functions.multiply:1", "multiply", {"a": 2, "b": 3}),
    ]
    assert response.usage == ir.Usage(input_tokens=201, output_tokens=58)
    request = support.GROQ.decode_request(interactions(FOLDER, "groq-stream-parallel-tool-calls.yaml")[1].request)
    results = [p for p in request.messages[-1].content if isinstance(p, ir.ToolResultPart)]
    assert [(r.tool_call_id, r.name) for r in results] == [
        ("functions.add:0", "add"),
        ("functions.multiply:1", "multiply"),
    ]


def test_groq_profile_encodes_reasoning_field_and_path() -> None:
    events = [ir.MessageStart(id="g", model="m"), ir.ThinkingStart(index=0), ir.ThinkingDelta(index=0, text="hm")]
    events += [ir.ThinkingEnd(index=0), ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage())]
    body = encode_events(support.GROQ, events)
    assert sse_payloads(body)[1]["choices"][0]["delta"] == {"reasoning": "hm"}
    assert support.GROQ.encode_request(ir.Request(model="m")).path == "/openai/v1/chat/completions"
    assert GROQ.stream_error_events == frozenset({"error"})


# --- what later profiles need from the base decoder --------------------------------------------------------


def test_openrouter_sse_comments_and_error_chunk_after_finish_reason() -> None:
    events, response = _decode(support.OPENAI, "openrouter-stream-comments-and-error-chunk.yaml")
    assert _text(response, ir.ThinkingPart) == "We need to respond to a greeting. The user"
    error = events[-1]
    assert isinstance(error, ir.ErrorEvent)  # the error chunk wins over the earlier finish_reason; [DONE] ignored
    assert (error.error.kind, error.error.message, error.error.code) == (
        ir.ErrorKind.INVALID_REQUEST,
        "Token limit reached",
        "400",
    )


def test_openrouter_no_finish_reason_duplicate_role_chunks_usage_on_choice_chunk() -> None:
    events, response = _decode(support.OPENAI, "openrouter-kimi-stream-tool-args-single-chunk.yaml")
    assert events[-1] == ir.Done(
        stop_reason=None,
        usage=ir.Usage(input_tokens=57, output_tokens=17, cache_read_tokens=0, reasoning_tokens=0),
    )
    assert [
        (p.id, p.name, p.arguments, p.arguments_raw) for p in response.content if isinstance(p, ir.ToolCallPart)
    ] == [("0", "llm_version", {}, "{}")]


def test_openrouter_429_with_numeric_code_and_metadata() -> None:
    item = interactions(FOLDER, "openrouter-error-429.yaml")[0]
    error = support.OPENAI.decode_error(item.response.status, item.response.headers, item.response.body)
    assert (error.kind, error.status, error.code, error.message) == (
        ir.ErrorKind.THROTTLED,
        429,
        "429",
        "Provider returned error",
    )
    assert error.retryable


def test_mistral_content_array_of_typed_thinking_chunks_via_hook() -> None:
    _, response = _decode(MISTRAL_TEST, "mistral-stream-thinking-content-array.yaml")
    assert [p.kind for p in response.content] == ["thinking", "text"]
    assert _text(response, ir.ThinkingPart).startswith("Okay, the user is asking how to cross the street.")
    assert _text(response).endswith("you can ensure a safe crossing.")
    assert response.usage == ir.Usage(input_tokens=10, output_tokens=232)
    assert response.stop_reason == ir.StopReason(kind="end_turn", raw="stop")
    with pytest.raises(DecodeError, match="unsupported part type 'thinking'"):
        decode_events(
            support.OPENAI, [interactions(FOLDER, "mistral-stream-thinking-content-array.yaml")[0].response.body]
        )


def test_llamacpp_reasoning_content_then_tool_call_and_request_reasoning_content() -> None:
    _, response = _decode(support.OPENAI, "llamacpp-stream-reasoning-content-tool-call.yaml")
    assert [p.kind for p in response.content] == ["thinking", "tool_call"]
    assert _text(response, ir.ThinkingPart) == "We need to call function 'weather' with location \"Florence, Italy\"."
    assert response.usage == ir.Usage(input_tokens=139, output_tokens=42)
    request = support.OPENAI.decode_request(
        interactions(FOLDER, "llamacpp-stream-reasoning-content-tool-call.yaml")[1].request
    )
    assert request.messages[1].content[0] == ir.ThinkingPart(text=_text(response, ir.ThinkingPart))
    assert request.provider_fields["openai"]["reasoning_effort"] == "high"


def test_xai_whole_tool_call_in_role_chunk_and_reasoning_not_in_completion_tokens() -> None:
    _, response = _decode(support.OPENAI, "xai-stream-tool-call.yaml")
    assert [(p.id, p.arguments) for p in response.content if isinstance(p, ir.ToolCallPart)] == [
        ("call_51851897", {"location": "Florence, Italy"})
    ]
    # xAI's completion_tokens (26) excludes its reasoning_tokens (235); the base decoder reports them as sent,
    # an xAI profile's decode_usage hook will add them up.
    assert response.usage == ir.Usage(input_tokens=361, output_tokens=26, cache_read_tokens=360, reasoning_tokens=235)


def test_together_nonstream_extra_fields() -> None:
    item = interactions(FOLDER, "together-nonstream-gzip.yaml")[0]
    response = support.OPENAI.decode_response(item.response.body)
    assert _text(response) == "To find the answer, add 4200 and 42.\n\n4200 + 42 = 4242"
    assert response.usage == ir.Usage(input_tokens=44, output_tokens=23)
    assert response.stop_reason == ir.StopReason(kind="end_turn", raw="stop")


def test_mistral_nine_alphanumeric_tool_ids_hook_keeps_call_and_result_matched() -> None:
    mistral = OpenAICodec(Profile(name="mistral-test", encode_tool_id=quirks.nine_alphanumerics))
    call = ir.ToolCallPart(id="call_M26z19sncd7b4LBgzKRRbaUE", name="f", arguments={}, arguments_raw="{}")
    result = ir.ToolResultPart(tool_call_id=call.id, name="f", content=[ir.TextPart(text="ok")])
    request = ir.Request(
        model="m", messages=[ir.Message(role="assistant", content=[call]), ir.Message(role="tool", content=[result])]
    )
    messages = json.loads(mistral.encode_request(request).body)["messages"]
    sent_id = messages[0]["tool_calls"][0]["id"]
    assert len(sent_id) == 9 and sent_id.isalnum() and sent_id.isascii()
    assert messages[1]["tool_call_id"] == sent_id
    assert quirks.nine_alphanumerics("abcDEF123") == "abcDEF123"
    assert quirks.nine_alphanumerics(call.id) == sent_id
