"""Router and hosting platforms' quirks (OpenRouter, Together), each on its corpus file where the corpus shows
it and on hand-built wire where it does not. Tests are named after the quirk they pin down."""

from __future__ import annotations

import json

import pytest

from harness import ir
from harness.protocols import decode_events, registry
from harness.protocols.openai import quirks
from harness.stream import accumulate
from tests.protocols.openai.support import choice, chunk_bytes, decode_corpus, interactions, joined

pytestmark = pytest.mark.corpus

FOLDER = "openai_compat"
OPENROUTER = registry.get("openrouter")
TOGETHER = registry.get("together")


# --- OpenRouter -------------------------------------------------------------------------------------------


def test_openrouter_sse_comment_lines_are_skipped() -> None:
    body = interactions(FOLDER, "openrouter-stream-comments-and-error-chunk.yaml")[0].response.body
    assert body.count(b": OPENROUTER PROCESSING\n\n") == 17
    events, response = decode_corpus(OPENROUTER, FOLDER, "openrouter-stream-comments-and-error-chunk.yaml")
    assert events[0] == ir.MessageStart(
        id="gen-1762179802-UN8pkJI4AGZvryk0kFnb",
        model="minimax/minimax-m2:free",
        extras={"openrouter": {"provider": "Minimax"}},  # the upstream provider, kept as an extra
    )
    assert joined(response, ir.ThinkingPart) == "We need to respond to a greeting. The user"  # delta.reasoning


def test_openrouter_error_object_inside_a_normal_chunk_after_finish_reason() -> None:
    events, _ = decode_corpus(OPENROUTER, FOLDER, "openrouter-stream-comments-and-error-chunk.yaml")
    # finish_reason "length" came twice first; the error chunk still wins, and the [DONE] after it is ignored.
    assert [e.kind for e in events[-2:]] == ["thinking_end", "error"]
    error = events[-1]
    assert isinstance(error, ir.ErrorEvent)
    assert (error.error.kind, error.error.message, error.error.code, error.error.status) == (
        ir.ErrorKind.INVALID_REQUEST,
        "Token limit reached",
        "400",
        None,
    )


def test_openrouter_stream_with_no_finish_reason_and_repeated_role_chunks() -> None:
    events, response = decode_corpus(OPENROUTER, FOLDER, "openrouter-kimi-stream-tool-args-single-chunk.yaml")
    assert events[-1] == ir.Done(
        stop_reason=None,
        usage=ir.Usage(input_tokens=57, output_tokens=17, cache_read_tokens=0, reasoning_tokens=0),
    )
    assert [
        (p.id, p.name, p.arguments, p.arguments_raw) for p in response.content if isinstance(p, ir.ToolCallPart)
    ] == [("0", "llm_version", {}, "{}")]


def test_openrouter_429_with_numeric_code_and_provider_metadata() -> None:
    item = interactions(FOLDER, "openrouter-error-429.yaml")[0]
    error = OPENROUTER.decode_error(item.response.status, item.response.headers, item.response.body)
    assert (error.kind, error.status, error.code, error.message) == (
        ir.ErrorKind.THROTTLED,
        429,
        "429",
        "Provider returned error",
    )
    assert error.retryable
    raw = json.loads(item.response.body)["error"]["metadata"]["raw"]
    assert raw.startswith("google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream")


def test_openrouter_finish_reason_error_path_and_reasoning_field() -> None:
    done = decode_events(OPENROUTER, [chunk_bytes(choice({"role": "assistant", "content": "x"}, "error"))])[-1]
    assert isinstance(done, ir.Done) and done.stop_reason == ir.StopReason(kind="error", raw="error")
    assert OPENROUTER.encode_request(ir.Request(model="m")).path == "/api/v1/chat/completions"
    reply = ir.Response(content=[ir.ThinkingPart(text="hm"), ir.TextPart(text="ok")])
    message = json.loads(OPENROUTER.encode_response(reply).body)["choices"][0]["message"]
    assert (message["reasoning"], message["content"]) == ("hm", "ok")


# --- Together ---------------------------------------------------------------------------------------------


# OpenRouter in front of Anthropic (anthropic/claude-*): the thinking text arrives as `delta.reasoning` and as
# `reasoning.text` entries of `delta.reasoning_details`; the block's signature arrives only in a later
# `reasoning_details` entry with no text. Wire shape from OpenRouter's docs ("Reasoning Tokens": "Preserving
# reasoning blocks", format `anthropic-claude-v1`); no corpus capture has it.
_SIGNED = "EqoBCkgIBxABGAIiQL2rXQ"  # signature-like opaque text


def _detail(**fields: object) -> list[dict[str, object]]:
    return [{"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0, **fields}]


def test_openrouter_anthropic_thinking_signature_in_reasoning_details_is_kept() -> None:
    body = chunk_bytes(
        choice(
            {
                "role": "assistant",
                "content": "",
                "reasoning": "Add them.",
                "reasoning_details": _detail(text="Add them."),
            }
        ),
        choice({"role": "assistant", "content": "", "reasoning": " 2+2.", "reasoning_details": _detail(text=" 2+2.")}),
        choice({"role": "assistant", "content": "", "reasoning_details": _detail(signature=_SIGNED)}),
        choice({"role": "assistant", "content": "4"}, "stop"),
    )
    events = decode_events(OPENROUTER, [body])
    ends = [e for e in events if isinstance(e, ir.ThinkingEnd)]
    assert ends == [ir.ThinkingEnd(index=0, signature=_SIGNED)]
    response = accumulate(events).response
    assert response.content == [ir.ThinkingPart(text="Add them. 2+2.", signature=_SIGNED), ir.TextPart(text="4")]
    assert decode_events(registry.get("openai"), [body]) != events  # OpenAI's own decoder knows no such field


def test_openrouter_anthropic_signature_only_thinking_block_is_kept() -> None:
    # Hidden thinking (no text) still signs: the signature alone is an empty signed thinking block.
    body = chunk_bytes(
        choice({"role": "assistant", "content": "", "reasoning_details": _detail(signature=_SIGNED)}),
        choice({"role": "assistant", "content": "4"}, "stop"),
    )
    response = accumulate(decode_events(OPENROUTER, [body])).response
    assert response.content == [ir.ThinkingPart(text="", signature=_SIGNED), ir.TextPart(text="4")]


def test_openrouter_empty_signature_opening_a_thinking_block_is_no_signature() -> None:
    # A real stream (anthropic/claude-sonnet-4.5 through OpenRouter, December 2025) opens the block with an entry
    # whose text and signature are both empty; taken as a signature it made an empty unsigned thinking block
    # before the real one, which the next turn would send back to Anthropic.
    body = chunk_bytes(
        choice({"role": "assistant", "content": "", "reasoning": None, "reasoning_details": []}),
        choice(
            {"role": "assistant", "content": "", "reasoning": None, "reasoning_details": _detail(text="", signature="")}
        ),
        choice(
            {
                "role": "assistant",
                "content": "",
                "reasoning": "Add them.",
                "reasoning_details": _detail(text="Add them."),
            }
        ),
        choice({"role": "assistant", "content": "", "reasoning_details": _detail(signature=_SIGNED)}),
        choice({"role": "assistant", "content": "4"}, "stop"),
    )
    response = accumulate(decode_events(OPENROUTER, [body])).response
    assert response.content == [ir.ThinkingPart(text="Add them.", signature=_SIGNED), ir.TextPart(text="4")]


def test_openrouter_anthropic_thinking_signature_in_a_message_is_kept() -> None:
    message = {"role": "assistant", "content": "4", "reasoning": "Add them.",
               "reasoning_details": _detail(text="Add them.", signature=_SIGNED)}  # fmt: skip
    body = {"id": "gen-1", "object": "chat.completion", "created": 0, "model": "anthropic/claude-sonnet-4",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}}  # fmt: skip
    response = OPENROUTER.decode_response(json.dumps(body).encode())
    assert response.content == [ir.ThinkingPart(text="Add them.", signature=_SIGNED), ir.TextPart(text="4")]
    assert quirks.reasoning_details_signature_in_body({"choices": "x"}) == {"choices": "x"}  # untrusted JSON


def test_together_nonstream_extra_fields_are_ignored() -> None:
    item = interactions(FOLDER, "together-nonstream-gzip.yaml")[0]
    body = json.loads(item.response.body)
    assert body["prompt"] == [] and body["choices"][0]["message"]["tool_calls"] == [] and "seed" in body["choices"][0]
    response = TOGETHER.decode_response(item.response.body)
    assert response.content == [ir.TextPart(text="To find the answer, add 4200 and 42.\n\n4200 + 42 = 4242")]
    assert response.stop_reason == ir.StopReason(kind="end_turn", raw="stop")


def test_together_top_level_cached_tokens() -> None:
    item = interactions(FOLDER, "together-nonstream-gzip.yaml")[0]
    assert json.loads(item.response.body)["usage"]["cached_tokens"] == 0
    assert TOGETHER.decode_response(item.response.body).usage == ir.Usage(
        input_tokens=44, output_tokens=23, cache_read_tokens=0
    )
    usage = {"prompt_tokens": 2100, "completion_tokens": 9, "total_tokens": 2109, "cached_tokens": 2048}
    assert quirks.top_level_cached_tokens(usage)["prompt_tokens_details"] == {"cached_tokens": 2048}
    sent = json.loads(
        TOGETHER.encode_response(
            ir.Response(usage=ir.Usage(input_tokens=2100, output_tokens=9, cache_read_tokens=2048))
        ).body
    )
    assert sent["usage"] == {"prompt_tokens": 2100, "completion_tokens": 9, "total_tokens": 2109, "cached_tokens": 2048}


def test_together_eos_finish_reason_is_end_turn() -> None:
    body = chunk_bytes(choice({"role": "assistant", "content": "Hello"}), choice({}, "eos"))
    done = decode_events(TOGETHER, [body])[-1]
    assert isinstance(done, ir.Done) and done.stop_reason == ir.StopReason(kind="end_turn", raw="eos")


def test_together_reasoning_field() -> None:
    body = chunk_bytes(choice({"role": "assistant", "reasoning": "Think."}), choice({"content": "9.9"}, "stop"))
    response = accumulate(decode_events(TOGETHER, [body])).response
    assert response.content == [ir.ThinkingPart(text="Think."), ir.TextPart(text="9.9")]
    reply = ir.Response(content=[ir.ThinkingPart(text="Think."), ir.TextPart(text="9.9")])
    assert json.loads(TOGETHER.encode_response(reply).body)["choices"][0]["message"]["reasoning"] == "Think."
