"""The `cloudflare-openai` profile: Workers AI's OpenAI-compatible route, its chunks (with `p` and `neurons`)."""

from __future__ import annotations

from harness import ir
from harness.protocols import decode_events, registry
from harness.stream import accumulate
from tests.protocols.cloudflare.support import provider_body

CODEC = registry.get("cloudflare-openai")


def test_the_route_carries_the_account_in_its_base_path() -> None:
    request = ir.Request(model="@cf/meta/llama-3.1-8b-instruct", messages=[], max_tokens=5)
    wire = CODEC.encode_request(request)
    assert wire.path == f"/client/v4/accounts/{'0' * 32}/ai/v1/chat/completions"
    assert b'"max_tokens":5' in wire.body


def test_padding_and_neurons_in_chunks_are_ignored() -> None:
    body = (
        b'data: {"choices":[{"delta":{"content":"Hi","role":"assistant"},"finish_reason":null,"index":0}],'
        b'"created":1,"id":"x","model":"@cf/google/gemma","object":"chat.completion.chunk","p":"pf8tb",'
        b'"usage":{"prompt_tokens":147,"completion_tokens":1,"total_tokens":148,"neurons":1.3}}\n\n'
        b'data: {"choices":[{"delta":{},"finish_reason":"stop","index":0}],"id":"x","model":"@cf/google/gemma",'
        b'"object":"chat.completion.chunk","p":"l48s"}\n\ndata: [DONE]\n\n'
    )
    response = accumulate(decode_events(CODEC, [body])).response
    assert response.content == [ir.TextPart(text="Hi")]
    assert response.stop_reason == ir.StopReason(kind="end_turn", raw="stop")
    assert response.usage.input_tokens == 147


def test_openai_form_tool_call_chunks_from_workers_ai() -> None:
    body = provider_body("should handle streamed tool calls (OpenAI format) with tools present")
    response = accumulate(decode_events(CODEC, [body])).response
    (call,) = response.content
    assert (
        isinstance(call, ir.ToolCallPart)
        and call.id == "chatcmpl-tool-abc"
        and call.arguments == {"location": "London"}
    )
