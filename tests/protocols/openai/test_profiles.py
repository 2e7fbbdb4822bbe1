"""Hosted providers' quirks (DeepSeek, Groq, Mistral, xAI), each on its corpus file where the corpus shows it
and on hand-built wire where it does not. Tests are named after the quirk they pin down."""

from __future__ import annotations

import json

import pytest

from harness import ir
from harness.protocols import DecodeError, decode_events, encode_events, registry
from harness.protocols.openai import DEEPSEEK, GROQ, quirks
from tests import strategies
from tests.protocols.openai import support
from tests.protocols.openai.support import choice, chunk_bytes, decode_corpus, interactions, joined, sse_payloads

pytestmark = pytest.mark.corpus

FOLDER = "openai_compat"
MISTRAL = registry.get("mistral")
XAI = registry.get("xai")


# --- DeepSeek ---------------------------------------------------------------------------------------------


def test_deepseek_reasoning_content_with_null_content_thenjoined() -> None:
    events, response = decode_corpus(support.DEEPSEEK, FOLDER, "deepseek-stream-reasoning-content.yaml")
    assert [p.kind for p in response.content] == ["thinking", "text"]
    assert joined(response, ir.ThinkingPart).startswith('Hmm, the user just said "Hello". It\'s a simple greeting')
    assert joined(response) == "Hello there! 😊 How can I help you today?"
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
    events, _ = decode_corpus(support.GROQ, FOLDER, "groq-stream-midstream-error-event.yaml")
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
    _, response = decode_corpus(support.GROQ, FOLDER, "groq-stream-text-x-groq-usage.yaml")
    assert joined(response) == "Olá!"
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


def test_groq_tool_calls_complete_in_one_fragment_afterjoined() -> None:
    _, response = decode_corpus(support.GROQ, FOLDER, "groq-stream-parallel-tool-calls.yaml")
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
    events: list[ir.StreamEvent] = [
        ir.MessageStart(id="g", model="m"),
        ir.ThinkingStart(index=0),
        ir.ThinkingDelta(index=0, text="hm"),
    ]
    events += [ir.ThinkingEnd(index=0), ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage())]
    body = encode_events(support.GROQ, events)
    assert sse_payloads(body)[1]["choices"][0]["delta"] == {"reasoning": "hm"}
    assert support.GROQ.encode_request(ir.Request(model="m")).path == "/openai/v1/chat/completions"
    assert GROQ.stream_error_events == frozenset({"error"})


# --- Mistral ----------------------------------------------------------------------------------------------


def test_mistral_thinking_content_arrays_in_stream() -> None:
    _, response = decode_corpus(MISTRAL, FOLDER, "mistral-stream-thinking-content-array.yaml")
    assert [p.kind for p in response.content] == ["thinking", "text"]
    assert joined(response, ir.ThinkingPart).startswith("Okay, the user is asking how to cross the street.")
    assert joined(response).endswith("you can ensure a safe crossing.")
    assert response.usage == ir.Usage(input_tokens=10, output_tokens=232)  # on the finish chunk, no usage chunk
    payloads = sse_payloads(interactions(FOLDER, "mistral-stream-thinking-content-array.yaml")[0].response.body)
    assert payloads[2]["choices"][0]["delta"]["content"] == [
        {"type": "thinking", "thinking": [{"type": "text", "text": "Okay"}]}
    ]
    # Without the profile's hook the array is not OpenAI content.
    with pytest.raises(DecodeError, match="unsupported part type 'thinking'"):
        decode_events(
            support.OPENAI, [interactions(FOLDER, "mistral-stream-thinking-content-array.yaml")[0].response.body]
        )


def test_mistral_thinking_content_arrays_in_nonstream_message() -> None:
    thinking = {
        "type": "thinking",
        "thinking": [{"type": "text", "text": "Two and two "}, {"type": "text", "text": "is four."}],
    }
    message = {"role": "assistant", "content": [thinking, {"type": "text", "text": "4"}]}
    body = {
        "id": "m1",
        "model": "magistral-small",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    response = MISTRAL.decode_response(json.dumps(body).encode())
    assert response.content == [ir.ThinkingPart(text="Two and two is four."), ir.TextPart(text="4")]


def test_mistral_encodes_thinking_as_content_arrays() -> None:
    reply = ir.Response(
        id="m1",
        model="magistral-medium-latest",
        content=[ir.ThinkingPart(text="Let me see."), ir.TextPart(text="Yes.")],
        stop_reason=ir.StopReason(kind="end_turn"),
        usage=ir.Usage(input_tokens=5, output_tokens=9),
    )
    message = json.loads(MISTRAL.encode_response(reply).body)["choices"][0]["message"]
    assert message["content"] == [
        {"type": "thinking", "thinking": [{"type": "text", "text": "Let me see."}]},
        {"type": "text", "text": "Yes."},
    ]
    assert "reasoning_content" not in message
    body = encode_events(MISTRAL, strategies.events_for(reply, chunk=1000))
    deltas = [p["choices"][0]["delta"] for p in sse_payloads(body)]
    assert deltas[1] == {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me see."}]}]}
    assert MISTRAL.decode_response(MISTRAL.encode_response(reply).body).content == reply.content


def test_mistral_no_stream_options_and_usage_on_the_finish_chunk() -> None:
    request = MISTRAL.decode_request(interactions(FOLDER, "mistral-stream-thinking-content-array.yaml")[0].request)
    assert request.stream and "mistral" not in request.provider_fields  # no stream_options to remember
    assert "stream_options" not in json.loads(MISTRAL.encode_request(request).body)
    reply = ir.Response(
        content=[ir.TextPart(text="Hi")],
        stop_reason=ir.StopReason(kind="end_turn"),
        usage=ir.Usage(input_tokens=3, output_tokens=1),
    )
    payloads = sse_payloads(encode_events(MISTRAL, strategies.events_for(reply, chunk=1000), request))
    assert payloads[-1]["choices"][0]["finish_reason"] == "stop"
    assert payloads[-1]["usage"] == {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
    assert all(p["choices"] for p in payloads)  # no usage-only chunk


def test_mistral_model_length_finish_reason_is_max_tokens() -> None:
    body = chunk_bytes(choice({"role": "assistant", "content": "Once upon"}), choice({}, "model_length"))
    done = decode_events(MISTRAL, [body])[-1]
    assert isinstance(done, ir.Done) and done.stop_reason == ir.StopReason(kind="max_tokens", raw="model_length")
    error_done = decode_events(MISTRAL, [chunk_bytes(choice({"content": "x"}, "error"))])[-1]
    assert isinstance(error_done, ir.Done) and error_done.stop_reason == ir.StopReason(kind="error", raw="error")


def test_mistral_nine_alphanumeric_tool_ids_keep_call_and_result_matched() -> None:
    call = ir.ToolCallPart(id="call_M26z19sncd7b4LBgzKRRbaUE", name="f", arguments={}, arguments_raw="{}")
    result = ir.ToolResultPart(tool_call_id=call.id, name="f", content=[ir.TextPart(text="ok")])
    request = ir.Request(
        model="m", messages=[ir.Message(role="assistant", content=[call]), ir.Message(role="tool", content=[result])]
    )
    messages = json.loads(MISTRAL.encode_request(request).body)["messages"]
    sent_id = messages[0]["tool_calls"][0]["id"]
    assert len(sent_id) == 9 and sent_id.isalnum() and sent_id.isascii()
    assert messages[1]["tool_call_id"] == sent_id
    assert quirks.nine_alphanumerics("abcDEF123") == "abcDEF123"
    assert quirks.nine_alphanumerics(call.id) == sent_id
    reply = ir.Response(content=[call], stop_reason=ir.StopReason(kind="tool_use"))
    sent = json.loads(MISTRAL.encode_response(reply).body)["choices"][0]["message"]["tool_calls"][0]["id"]
    assert sent == sent_id  # responses of the reference backend use the same form


# --- xAI --------------------------------------------------------------------------------------------------


def test_xai_reasoning_tokens_outside_completion_tokens() -> None:
    _, response = decode_corpus(XAI, FOLDER, "xai-stream-tool-call.yaml")
    # Recorded: prompt 361, completion 26, reasoning 235, total 622 = 361 + 26 + 235.
    assert response.usage == ir.Usage(input_tokens=361, output_tokens=261, cache_read_tokens=360, reasoning_tokens=235)
    _, plain = decode_corpus(support.OPENAI, FOLDER, "xai-stream-tool-call.yaml")
    assert plain.usage.output_tokens == 26  # what an OpenAI reading of the same bytes reports
    usage = json.loads(XAI.encode_response(ir.Response(usage=response.usage)).body)["usage"]
    assert (usage["completion_tokens"], usage["total_tokens"]) == (26, 622)
    assert usage["completion_tokens_details"]["reasoning_tokens"] == 235
    # As recorded: prompt tokens split by modality, the sources searched and the cost in ticks.
    assert usage["prompt_tokens_details"]["cached_tokens"] == 360
    assert {"num_sources_used", "cost_in_usd_ticks"} <= set(usage)


def test_xai_whole_tool_call_in_one_chunk_with_the_role() -> None:
    events, response = decode_corpus(XAI, FOLDER, "xai-stream-tool-call.yaml")
    first = sse_payloads(interactions(FOLDER, "xai-stream-tool-call.yaml")[0].response.body)[0]
    assert first["choices"][0]["delta"]["role"] == "assistant" and len(first["choices"][0]["delta"]["tool_calls"]) == 1
    assert [e.kind for e in events] == ["message_start", "tool_call_start", "tool_call_delta", "tool_call_end", "done"]
    assert [(p.id, p.name, p.arguments) for p in response.content if isinstance(p, ir.ToolCallPart)] == [
        ("call_51851897", "weather", {"location": "Florence, Italy"})
    ]
    assert response.stop_reason == ir.StopReason(kind="tool_use", raw="tool_calls")
