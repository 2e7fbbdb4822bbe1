"""Real traffic of OpenAI-compatible providers: every `openai_compat` corpus file (and Ollama's OpenAI-compatible
endpoint) decodes with the registered profile it was recorded from, and yields the recorded values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from harness import ir
from harness.protocols import decode_events, registry
from harness.stream import accumulate, validate
from tests.conftest import corpus_dir, corpus_files
from tests.protocols.openai.support import chunkings, interactions

pytestmark = pytest.mark.corpus

FOLDER = "openai_compat"


@dataclass(frozen=True)
class Expect:
    """What one recorded interaction must decode to (text as start/end when it is long)."""

    file: str
    interaction: int = 0
    model: str = ""
    text: str | None = None
    text_end: str | None = None
    thinking: str | None = None
    tools: list[tuple[str, str, Any]] = field(default_factory=list)
    stop: ir.StopReason | None = None
    usage: ir.Usage | None = None
    error: tuple[ir.ErrorKind, int | None, str | None, str] | None = None

    @property
    def profile(self) -> str:
        """The registered profile named by the file's prefix (groq-..., mistral-...)."""
        return self.file.split("-", 1)[0]


def _stop(kind: ir.StopKind, raw: str) -> ir.StopReason:
    return ir.StopReason(kind=kind, raw=raw)


KIMI, GPT_OSS = "moonshotai/kimi-k2-instruct-0905", "openai/gpt-oss-20b"
FLORENCE = {"location": "Florence, Italy"}
EXPECTED = [
    Expect(
        "deepseek-stream-reasoning-content.yaml",
        model="deepseek-reasoner",
        text="Hello there! 😊 How can I help you today?",
        thinking='Hmm, the user just said "Hello". It\'s a simple greeting',
        stop=_stop("end_turn", "stop"),
        usage=ir.Usage(input_tokens=6, output_tokens=212, cache_read_tokens=0, reasoning_tokens=198),
    ),
    Expect(
        "groq-stream-midstream-error-event.yaml",
        model="openai/gpt-oss-120b",
        thinking="We need to call the tool with invalid parameters first, then second call with valid args.",
        error=(ir.ErrorKind.INVALID_REQUEST, None, "tool_use_failed", "Tool call validation failed: tool call"),
    ),
    Expect(
        "groq-stream-parallel-tool-calls.yaml",
        model=KIMI,
        text="I'll perform both addition and multiplication on the numbers 2 and 3 for you.",
        tools=[("functions.add:0", "add", {"a": 2, "b": 3}), ("functions.multiply:1", "multiply", {"a": 2, "b": 3})],
        stop=_stop("tool_use", "tool_calls"),
        usage=ir.Usage(input_tokens=201, output_tokens=58),
    ),
    Expect(
        "groq-stream-parallel-tool-calls.yaml",
        1,
        model=KIMI,
        text="Here are the results:\n- Addition: 2 + 3 = 5\n- Multiplication: 2 \u00d7 3 = 6",
        stop=_stop("end_turn", "stop"),
        usage=ir.Usage(input_tokens=296, output_tokens=30),
    ),
    Expect(
        "groq-stream-text-x-groq-usage.yaml",
        model=KIMI,
        text="Olá!",
        stop=_stop("end_turn", "stop"),
        usage=ir.Usage(input_tokens=20, output_tokens=4),
    ),
    Expect(
        "llamacpp-stream-reasoning-content-tool-call.yaml",
        model=GPT_OSS,
        thinking="We need to call function 'weather' with location \"Florence, Italy\".",
        tools=[("1wNpqrejg1FCTjf6xq8JRCGKgWZO74AL", "weather", FLORENCE)],
        stop=_stop("tool_use", "tool_calls"),
        usage=ir.Usage(input_tokens=139, output_tokens=42, cache_read_tokens=138),
    ),
    Expect(
        "llamacpp-stream-reasoning-content-tool-call.yaml",
        1,
        model=GPT_OSS,
        text="The current weather in Florence, Italy is **40\u202f°C**.",
        stop=_stop("end_turn", "stop"),
        usage=ir.Usage(input_tokens=197, output_tokens=18, cache_read_tokens=161),
    ),
    Expect(
        "mistral-stream-thinking-content-array.yaml",
        model="magistral-medium-latest",
        text="To cross the street safely, follow these steps:\n\n1. Look both ways",
        text_end="By following these steps, you can ensure a safe crossing.",
        thinking="Okay, the user is asking how to cross the street. I know that crossing the street safely",
        stop=_stop("end_turn", "stop"),
        usage=ir.Usage(input_tokens=10, output_tokens=232),
    ),
    Expect(
        "openrouter-error-429.yaml",
        model="google/gemini-2.0-flash-exp:free",
        error=(ir.ErrorKind.THROTTLED, 429, "429", "Provider returned error"),
    ),
    Expect(
        "openrouter-kimi-stream-tool-args-single-chunk.yaml",
        model="gpt-4.1-mini",
        tools=[("0", "llm_version", {})],
        stop=None,  # OpenRouter (via Novita) sent no finish_reason at all
        usage=ir.Usage(input_tokens=57, output_tokens=17, cache_read_tokens=0, reasoning_tokens=0),
    ),
    Expect(
        "openrouter-stream-comments-and-error-chunk.yaml",
        model="minimax/minimax-m2:free",
        thinking="We need to respond to a greeting. The user",
        error=(ir.ErrorKind.INVALID_REQUEST, None, "400", "Token limit reached"),
    ),
    Expect(
        "together-nonstream-gzip.yaml",
        model="meta-llama/Llama-3.3-70B-Instruct-Turbo",
        text="To find the answer, add 4200 and 42.\n\n4200 + 42 = 4242",
        stop=_stop("end_turn", "stop"),
        usage=ir.Usage(input_tokens=44, output_tokens=23, cache_read_tokens=0),
    ),
    Expect(
        "xai-stream-tool-call.yaml",
        model="grok-4-fast",
        tools=[("call_51851897", "weather", FLORENCE)],
        stop=_stop("tool_use", "tool_calls"),
        usage=ir.Usage(input_tokens=361, output_tokens=261, cache_read_tokens=360, reasoning_tokens=235),
    ),
    Expect(
        "xai-stream-tool-call.yaml",
        1,
        model="grok-4-fast",
        text="The current weather in Florence, Italy, is 40°C (104°F). It feels quite hot—stay hydrated",
        text_end="If you need a forecast or more details, let me know.",
        stop=_stop("end_turn", "stop"),
        usage=ir.Usage(input_tokens=635, output_tokens=85, cache_read_tokens=623, reasoning_tokens=43),
    ),
]


def _joined(response: ir.Response, kind: type[ir.TextPart] | type[ir.ThinkingPart]) -> str:
    return "".join(p.text for p in response.content if isinstance(p, kind))


def test_every_compat_file_and_interaction_has_an_expectation() -> None:
    corpus_dir(FOLDER)  # skips, with the reason, when the corpus is absent
    recorded = {(p.name, i) for p in corpus_files(FOLDER) for i in range(len(interactions(FOLDER, p.name)))}
    assert recorded == {(e.file, e.interaction) for e in EXPECTED}


@pytest.mark.parametrize("expect", EXPECTED, ids=lambda e: f"{e.file}[{e.interaction}]")
def test_compat_corpus_decodes_with_its_profile(expect: Expect) -> None:
    codec = registry.get(expect.profile)
    item = interactions(FOLDER, expect.file)[expect.interaction]
    assert codec.decode_request(item.request).model == expect.model
    if expect.error is not None and item.response.status >= 400:
        err = codec.decode_error(item.response.status, item.response.headers, item.response.body)
        assert (err.kind, err.status, err.code) == expect.error[:3] and err.message.startswith(expect.error[3])
        return
    if codec.is_stream_request(item.request):
        events = decode_events(codec, [item.response.body])
        assert validate(events) == []
        for chunks in chunkings(item.response.body).values():
            assert decode_events(codec, chunks) == events
        result = accumulate(events)
        response, error = result.response, result.error
    else:
        response, error = codec.decode_response(item.response.body), None
    if expect.error is not None:
        assert error is not None
        assert (error.kind, error.status, error.code) == expect.error[:3]
        assert error.message.startswith(expect.error[3])
    else:
        assert error is None and response.stop_reason == expect.stop and response.usage == expect.usage
    text = _joined(response, ir.TextPart)
    assert text.startswith(expect.text or "") and (expect.text is not None or text == "")
    assert text.endswith(expect.text_end or "")
    thinking = _joined(response, ir.ThinkingPart)
    assert thinking.startswith(expect.thinking or "") and (expect.thinking is not None or thinking == "")
    tools = [(p.id, p.name, p.arguments) for p in response.content if isinstance(p, ir.ToolCallPart)]
    assert tools == expect.tools


def test_ollama_openai_compatible_endpoint_decodes_with_the_gemma_profile() -> None:
    # Ollama serving gemma3:4b on /v1/chat/completions: Gemma's own profile reads it like OpenAI's would.
    (item,) = interactions("ollama", "openai-compat-v1-chat-nonstream.yaml")
    gemma = registry.get("gemma")
    request = gemma.decode_request(item.request)
    assert request.model == "gemma3:4b" and request.system is None
    assert request.messages == [ir.Message(role="user", content=[ir.TextPart(text="What is 4200 + 42?")])]
    response = gemma.decode_response(item.response.body)
    assert (response.id, response.model) == ("chatcmpl-674", "gemma3:4b")
    assert response.content == [ir.TextPart(text="4200 + 42 = 4242\n")]
    assert response.stop_reason == _stop("end_turn", "stop")
    assert response.usage == ir.Usage(input_tokens=21, output_tokens=16)
