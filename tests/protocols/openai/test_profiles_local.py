"""Self-hosted servers' and open models' quirks (vLLM, llama.cpp, LM Studio, gpt-oss, Gemma), each on its corpus
file where the corpus shows it and on hand-built wire where it does not. Tests are named after the quirk."""

from __future__ import annotations

import json

import pytest

from harness import ir
from harness.protocols import decode_events, encode_events, registry
from harness.protocols.openai import quirks
from harness.protocols.openai.profiles import SYSTEM_FOLDED
from harness.scenarios.model import Capability
from harness.stream import accumulate
from tests import strategies
from tests.conftest import corpus_dir
from tests.protocols.openai.support import choice, chunk_bytes, decode_corpus, interactions, joined, sse_payloads

pytestmark = pytest.mark.corpus

FOLDER = "openai_compat"
VLLM = registry.get("vllm")
LLAMACPP = registry.get("llamacpp")
LMSTUDIO = registry.get("lmstudio")
GPTOSS = registry.get("gptoss")
GEMMA = registry.get("gemma")
LLAMACPP_FILE = "llamacpp-stream-reasoning-content-tool-call.yaml"


def _thinking_turn() -> ir.Request:
    call = ir.ToolCallPart(id="c1", name="weather", arguments={"city": "Rome"}, arguments_raw='{"city":"Rome"}')
    return ir.Request(
        model="m",
        messages=[
            ir.Message(role="user", content=[ir.TextPart(text="Weather in Rome?")]),
            ir.Message(role="assistant", content=[ir.ThinkingPart(text="Call the tool.", signature="sig"), call]),
        ],
    )


# --- vLLM -------------------------------------------------------------------------------------------------


def test_vllm_reasoning_field_both_names_read_and_abort_finish_reason() -> None:
    body = chunk_bytes(
        choice({"role": "assistant", "content": ""}),
        choice({"reasoning": "Hmm, "}),
        choice({"reasoning_content": "older vLLM."}),
        choice({"content": "Done"}, "abort"),
    )
    response = accumulate(decode_events(VLLM, [body])).response
    assert joined(response, ir.ThinkingPart) == "Hmm, older vLLM." and joined(response) == "Done"
    assert response.stop_reason == ir.StopReason(kind="error", raw="abort")
    reply = ir.Response(content=[ir.ThinkingPart(text="Hmm")])
    assert json.loads(VLLM.encode_response(reply).body)["choices"][0]["message"]["reasoning"] == "Hmm"


def test_vllm_flat_error_body() -> None:
    body = (
        b'{"object":"error","message":"max_tokens must be at least 1, got -1.",'
        b'"type":"BadRequestError","param":null,"code":400}'
    )
    error = VLLM.decode_error(400, {}, body)
    assert (error.kind, error.status, error.message) == (
        ir.ErrorKind.INVALID_REQUEST,
        400,
        "max_tokens must be at least 1, got -1.",
    )


def test_vllm_tool_call_without_id_gets_a_chatcmpl_tool_id() -> None:
    fragment = {"tool_calls": [{"index": 0, "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    events = decode_events(VLLM, [chunk_bytes(choice(fragment), choice({}, "tool_calls"))])
    start = events[1]
    assert isinstance(start, ir.ToolCallStart) and start.id.startswith("chatcmpl-tool-")


# --- llama.cpp --------------------------------------------------------------------------------------------


def test_llamacpp_timings_cache_n_is_cache_read() -> None:
    _, response = decode_corpus(LLAMACPP, FOLDER, LLAMACPP_FILE)
    payload = sse_payloads(interactions(FOLDER, LLAMACPP_FILE)[0].response.body)[-1]
    assert payload["timings"]["cache_n"] == 138 and "prompt_tokens_details" not in payload["usage"]
    assert response.usage == ir.Usage(input_tokens=139, output_tokens=42, cache_read_tokens=138)
    _, plain = decode_corpus(registry.get("openai"), FOLDER, LLAMACPP_FILE)
    assert plain.usage.cache_read_tokens is None
    reply = ir.Response(usage=ir.Usage(input_tokens=139, output_tokens=42, cache_read_tokens=138))
    sent = json.loads(LLAMACPP.encode_response(reply).body)
    timings = sent["timings"]
    assert (timings["cache_n"], timings["prompt_n"], timings["predicted_n"]) == (138, 1, 42)
    assert "prompt_tokens_details" not in sent["usage"]  # as recorded: the cache figure lives in timings only
    assert {"prompt_ms", "prompt_per_second", "predicted_ms", "predicted_per_token_ms"} <= set(timings)
    assert quirks.timings_cache_n({"timings": {"cache_n": 5}}) == {"timings": {"cache_n": 5}}  # no usage beside


def test_llamacpp_reasoning_content_then_tool_call() -> None:
    _, response = decode_corpus(LLAMACPP, FOLDER, LLAMACPP_FILE)
    assert [p.kind for p in response.content] == ["thinking", "tool_call"]
    assert joined(response, ir.ThinkingPart) == "We need to call function 'weather' with location \"Florence, Italy\"."


def test_llamacpp_reasoning_content_sent_back_in_requests() -> None:
    request = LLAMACPP.decode_request(interactions(FOLDER, LLAMACPP_FILE)[1].request)
    thinking = "We need to call function 'weather' with location \"Florence, Italy\"."
    assert request.messages[1].content[0] == ir.ThinkingPart(text=thinking)
    assert request.thinking == ir.ThinkingConfig(enabled=True)  # reasoning_effort "high"
    message = json.loads(LLAMACPP.encode_request(_thinking_turn()).body)["messages"][1]
    assert message["reasoning_content"] == "Call the tool."
    assert "request.ThinkingPart" not in LLAMACPP.losses


# --- LM Studio --------------------------------------------------------------------------------------------


def test_lmstudio_reasoning_content_and_flat_error_body() -> None:
    body = chunk_bytes(
        choice({"role": "assistant", "reasoning_content": "Let me think."}), choice({"content": "Hi"}, "stop")
    )
    response = accumulate(decode_events(LMSTUDIO, [body])).response
    assert response.content == [ir.ThinkingPart(text="Let me think."), ir.TextPart(text="Hi")]
    error = LMSTUDIO.decode_error(404, {}, b'{"error":"Model \\"qwen3\\" not found. Please load it first."}')
    assert (error.kind, error.message) == (ir.ErrorKind.NOT_FOUND, 'Model "qwen3" not found. Please load it first.')
    assert Capability.PROMPT_CACHE not in LMSTUDIO.capabilities
    reply = ir.Response(content=[ir.ThinkingPart(text="t")])
    assert json.loads(LMSTUDIO.encode_response(reply).body)["choices"][0]["message"]["reasoning_content"] == "t"


# --- gpt-oss ----------------------------------------------------------------------------------------------


def test_gptoss_delta_reasoning_and_reasoning_sent_back() -> None:
    # Groq serving gpt-oss-120b: the harmony analysis channel arrives as delta.reasoning.
    events, _ = decode_corpus(GPTOSS, FOLDER, "groq-stream-midstream-error-event.yaml")
    thinking = "".join(e.text for e in events if isinstance(e, ir.ThinkingDelta))
    assert thinking.startswith("We need to call the tool with invalid parameters first")
    assert isinstance(events[-1], ir.ErrorEvent)
    message = json.loads(GPTOSS.encode_request(_thinking_turn()).body)["messages"][1]
    assert message["reasoning"] == "Call the tool." and "reasoning_content" not in message
    body = encode_events(GPTOSS, strategies.events_for(ir.Response(content=[ir.ThinkingPart(text="a")]), chunk=9))
    assert sse_payloads(body)[1]["choices"][0]["delta"] == {"reasoning": "a"}
    assert Capability.VISION not in GPTOSS.capabilities


# --- Gemma ------------------------------------------------------------------------------------------------


def _gemma_messages(request: ir.Request) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = json.loads(GEMMA.encode_request(request).body)["messages"]
    return messages


def test_gemma_system_in_first_user_turn() -> None:
    user = ir.Message(role="user", content=[ir.TextPart(text="How is the sea today?")])
    request = ir.Request(model="gemma3:4b", system="You are a pirate.", messages=[user])
    assert _gemma_messages(request) == [{"role": "user", "content": "You are a pirate.\n\nHow is the sea today?"}]
    # The upstream request as the request-side diff sees it: no system prompt, the first user text starts with it.
    upstream = GEMMA.decode_request(GEMMA.encode_request(request))
    assert upstream.system is None
    assert upstream.messages == [
        ir.Message(role="user", content=[ir.TextPart(text="You are a pirate.\n\nHow is the sea today?")])
    ]
    assert SYSTEM_FOLDED in GEMMA.reshapes and "request.Request.system" not in GEMMA.losses
    plain = registry.get("openai").encode_request(request)
    assert json.loads(plain.body)["messages"][0] == {"role": "system", "content": "You are a pirate."}


def test_gemma_system_in_first_user_turn_with_images_and_without_a_user_turn() -> None:
    image = ir.ImagePart(source=ir.UrlImage(url="https://example.com/a.png"))
    with_image = ir.Request(
        model="g", system="Be brief.", messages=[ir.Message(role="user", content=[image, ir.TextPart(text="What?")])]
    )
    content = _gemma_messages(with_image)[0]["content"]
    assert content == [
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "text", "text": "Be brief.\n\nWhat?"},
    ]
    image_only = ir.Request(model="g", system="Be brief.", messages=[ir.Message(role="user", content=[image])])
    assert _gemma_messages(image_only)[0]["content"] == [
        {"type": "text", "text": "Be brief."},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
    ]
    opens_with_assistant = ir.Request(
        model="g", system="Be brief.", messages=[ir.Message(role="assistant", content=[ir.TextPart(text="Hi")])]
    )
    assert _gemma_messages(opens_with_assistant) == [
        {"role": "user", "content": "Be brief."},
        {"role": "assistant", "content": "Hi"},
    ]
    no_system = ir.Request(model="g", messages=[ir.Message(role="user", content=[ir.TextPart(text="x")])])
    assert _gemma_messages(no_system) == [{"role": "user", "content": "x"}]


def test_gemma_has_no_tools_or_thinking() -> None:
    # Ollama's answer to a tools request for a Gemma 3 model, recorded: tools are not a Gemma capability.
    from harness.capture import load_interactions

    (item,) = load_interactions(corpus_dir("ollama") / "api-chat-error-400-tools-unsupported.httprr")
    assert b"gemma3:1b does not support tools" in item.response.body
    for capability in (Capability.TOOLS, Capability.PARALLEL_TOOLS, Capability.TOOL_CHOICE, Capability.THINKING):
        assert capability not in GEMMA.capabilities
    assert Capability.VISION in GEMMA.capabilities and GEMMA.family == "openai"
