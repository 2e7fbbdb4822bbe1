"""Real OpenAI traffic: every `openai_chat` corpus file decodes, and each yields the recorded values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from harness import ir
from harness.protocols import decode_events
from harness.stream import accumulate, validate
from tests.conftest import corpus_files
from tests.protocols.openai.support import OPENAI, chunkings, interactions, sse_payloads

pytestmark = pytest.mark.corpus

FOLDER = "openai_chat"


@dataclass(frozen=True)
class Expect:
    """What one recorded interaction must decode to."""

    file: str
    interaction: int = 0
    text: str | None = None
    tools: list[tuple[str, str, Any]] = field(default_factory=list)
    stop: str | None = None
    usage: ir.Usage | None = None
    error: ir.ErrorKind | None = None
    status: int | None = None
    code: str | None = None


def _usage(inp: int, out: int, reasoning: int = 0) -> ir.Usage:
    return ir.Usage(input_tokens=inp, output_tokens=out, cache_read_tokens=0, reasoning_tokens=reasoning)


STATES = "Here is a list of all 50 U.S. states:\n\n1. Alabama\n2. Alaska\n3. Arizona\n4. Arkansas\n5. California\n"
UNSUPPORTED, BAD_KEY = "unsupported_value", "invalid_api_key"
EXPECTED = [
    Expect("error-400-unsupported-value.yaml", error=ir.ErrorKind.INVALID_REQUEST, status=400, code=UNSUPPORTED),
    Expect("error-401-invalid-api-key-stream-request.yaml", error=ir.ErrorKind.AUTH, status=401, code=BAD_KEY),
    Expect("error-404-model-not-found.yaml", error=ir.ErrorKind.NOT_FOUND, status=404, code="model_not_found"),
    Expect(
        "nonstream-finish-length.yaml",
        text="Certainly! " + STATES + "6. Colorado\n7. Connecticut\n8. Delaware\n9. Florida",
        stop="max_tokens",
        usage=_usage(14, 50),
    ),
    Expect(
        "nonstream-parallel-tool-calls.yaml",
        tools=[
            ("call_v6LacIrChvs6ITVpIZqy5tFc", "secret_retrieval_tool", {"password": "mellon"}),
            ("call_onyWzk4mLTGKzW9cthmf4Llq", "secret_retrieval_tool", {"password": "radiance"}),
        ],
        stop="tool_use",
        usage=_usage(75, 53),
    ),
    Expect(
        "nonstream-parallel-tool-calls.yaml",
        1,
        text='The secrets associated with the passwords are as follows:\n- For "mellon": Welcome to Moria!\n'
        '- For "radiance": Life before Death',
        stop="end_turn",
        usage=_usage(149, 32),
    ),
    Expect("nonstream-text.yaml", text="\\(4200 + 42 = 4242\\).", stop="end_turn", usage=_usage(16, 12)),
    Expect(
        "stream-finish-length.yaml",
        text=STATES + "6. Colorado\n7. Connecticut\n8. Delaware\n9. Florida\n10",
        stop="max_tokens",
        usage=_usage(14, 50),
    ),
    Expect(
        "stream-parallel-tool-calls.yaml",
        tools=[
            ("call_M26z19sncd7b4LBgzKRRbaUE", "secret_retrieval_tool", {"password": "mellon"}),
            ("call_KPXe5NX7IcKkaBUhc6dto2QV", "secret_retrieval_tool", {"password": "radiance"}),
        ],
        stop="tool_use",
        usage=_usage(75, 53),
    ),
    Expect(
        "stream-parallel-tool-calls.yaml",
        1,
        text='The secrets associated with the passwords are:\n\n- "mellon": Welcome to Moria!\n'
        '- "radiance": Life before Death',
        stop="end_turn",
        usage=_usage(149, 28),
    ),
    Expect("stream-reasoning-model-finish-length-empty.yaml", text="", stop="max_tokens", usage=_usage(13, 50, 50)),
    Expect("stream-text-include-usage.yaml", text="4200 + 42 equals 4242.", stop="end_turn", usage=_usage(16, 10)),
    Expect(
        "stream-tool-call-then-text.yaml",
        tools=[("call_1EYWDzueHEp8OsB8jJSEp7WB", "multiply", {"a": 1231, "b": 2331})],
        stop="tool_use",
        usage=_usage(54, 20),
    ),
    Expect(
        "stream-tool-call-then-text.yaml",
        1,
        text="The result of \\( 1231 \\times 2331 \\) is \\( 2,869,461 \\).",
        stop="end_turn",
        usage=_usage(87, 26),
    ),
]


def _is_stream(item: Any) -> bool:
    return "text/event-stream" in item.response.headers.get("content-type", "")


def test_every_corpus_interaction_has_an_expectation() -> None:
    files = corpus_files(FOLDER)
    if not files:
        pytest.skip("corpus absent")
    recorded = {(p.name, i) for p in files for i in range(len(interactions(FOLDER, p.name)))}
    assert recorded == {(e.file, e.interaction) for e in EXPECTED}


def _response_of(item: Any) -> ir.Response:
    if _is_stream(item):
        events = decode_events(OPENAI, [item.response.body])
        assert validate(events) == []
        result = accumulate(events)
        assert result.error is None and result.problems == []
        return result.response
    return OPENAI.decode_response(item.response.body)


@pytest.mark.parametrize("expect", EXPECTED, ids=lambda e: f"{e.file}#{e.interaction}")
def test_corpus_interaction_decodes_to_recorded_values(expect: Expect) -> None:
    item = interactions(FOLDER, expect.file)[expect.interaction]
    request = OPENAI.decode_request(item.request)
    assert request.model
    if expect.error is not None:
        error = OPENAI.decode_error(item.response.status, item.response.headers, item.response.body)
        assert (error.kind, error.status, error.code) == (expect.error, expect.status, expect.code)
        assert error.message
        return
    response = _response_of(item)
    text = "".join(p.text for p in response.content if isinstance(p, ir.TextPart))
    if expect.text is not None:
        assert text == expect.text
    calls = [(p.id, p.name, p.arguments) for p in response.content if isinstance(p, ir.ToolCallPart)]
    assert calls == expect.tools
    assert response.stop_reason is not None and response.stop_reason.kind == expect.stop
    assert response.usage == expect.usage
    assert response.id is not None and response.id.startswith("chatcmpl-")
    assert not any(isinstance(p, ir.ThinkingPart) for p in response.content)


STREAMS = [
    (e.file, e.interaction)
    for e in EXPECTED
    if e.error is None and e.file.startswith("stream-")  # names say which bodies are SSE
]


@pytest.mark.parametrize(("name", "index"), STREAMS, ids=lambda v: str(v))
def test_corpus_stream_decodes_the_same_in_any_chunking(name: str, index: int) -> None:
    body = interactions(FOLDER, name)[index].response.body
    runs = {label: decode_events(OPENAI, chunks) for label, chunks in chunkings(body).items()}
    assert runs["1-byte"] == runs["whole"]
    assert runs["random"] == runs["whole"]


def test_finish_chunk_before_usage_chunk_ends_blocks_at_once_and_holds_done() -> None:
    body = interactions(FOLDER, "stream-text-include-usage.yaml")[0].response.body
    head, _, tail = body.partition(b'"choices":[],')  # cut just before the usage-only chunk
    decoder = OPENAI.stream_decoder()
    first = decoder.feed(head)
    assert first[-1] == ir.TextEnd(index=0)  # block end went out with finish_reason
    assert not any(e.kind == "done" for e in first)
    rest = decoder.feed(b'"choices":[],' + tail) + decoder.close()
    done = rest[-1]
    assert isinstance(done, ir.Done)
    assert done.usage is not None and done.usage.input_tokens == 16 and done.usage.output_tokens == 10


def test_obfuscation_field_is_tolerated() -> None:
    body = interactions(FOLDER, "stream-text-include-usage.yaml")[0].response.body
    assert all("obfuscation" in p for p in sse_payloads(body))
    assert decode_events(OPENAI, [body])[-1].kind == "done"


def test_reasoning_model_with_no_content_opens_no_block() -> None:
    body = interactions(FOLDER, "stream-reasoning-model-finish-length-empty.yaml")[0].response.body
    events = decode_events(OPENAI, [body])
    assert [e.kind for e in events] == ["message_start", "done"]


def test_tool_call_fragments_keep_first_fragment_id_and_argument_pieces() -> None:
    body = interactions(FOLDER, "stream-parallel-tool-calls.yaml")[0].response.body
    events = decode_events(OPENAI, [body])
    starts = [e for e in events if isinstance(e, ir.ToolCallStart)]
    assert [(s.index, s.id) for s in starts] == [
        (0, "call_M26z19sncd7b4LBgzKRRbaUE"),
        (1, "call_KPXe5NX7IcKkaBUhc6dto2QV"),
    ]
    deltas = [e.arguments for e in events if isinstance(e, ir.ToolCallDelta) and e.index == 0]
    assert deltas == ['{"pa', "sswor", 'd": "m', "ello", 'n"}']  # the empty first fragment makes no delta


def test_corpus_requests_decode_roles_and_fields() -> None:
    developer = OPENAI.decode_request(interactions(FOLDER, "error-400-unsupported-value.yaml")[0].request)
    assert developer.system == "You are a helpful assistant."
    assert developer.provider_fields["openai"]["n"] == 1
    assert developer.provider_fields["openai"]["_shape"]["system_roles"] == ["developer"]
    empty = interactions(FOLDER, "stream-reasoning-model-finish-length-empty.yaml")[0]
    reasoning = OPENAI.decode_request(empty.request)
    assert reasoning.max_tokens == 50 and reasoning.stream is True
    assert reasoning.provider_fields == {}  # max_completion_tokens and include_usage are the defaults
    legacy = OPENAI.decode_request(interactions(FOLDER, "stream-finish-length.yaml")[0].request)
    assert legacy.max_tokens == 50
    assert legacy.provider_fields["openai"]["_shape"]["max_tokens_field"] == "max_tokens"


def test_corpus_tool_turn_request_recovers_tool_result_names() -> None:
    request = OPENAI.decode_request(interactions(FOLDER, "stream-parallel-tool-calls.yaml")[1].request)
    assert request.system == "Use parallel tool calling."
    assistant, tool = request.messages[1], request.messages[2]
    assert assistant.role == "assistant"
    assert [p.arguments for p in assistant.content if isinstance(p, ir.ToolCallPart)] == [
        {"password": "mellon"},
        {"password": "radiance"},
    ]
    assert tool.role == "tool"  # the two wire tool messages are one IR turn
    results = [p for p in tool.content if isinstance(p, ir.ToolResultPart)]
    assert [(r.tool_call_id, r.name, r.content[0].text) for r in results if isinstance(r.content[0], ir.TextPart)] == [
        ("call_M26z19sncd7b4LBgzKRRbaUE", "secret_retrieval_tool", "Welcome to Moria!"),
        ("call_KPXe5NX7IcKkaBUhc6dto2QV", "secret_retrieval_tool", "Life before Death"),
    ]
    assert request.tools[0].name == "secret_retrieval_tool"
    assert request.provider_fields["openai"]["_shape"]["tools"] == {"0": {"strict": False}}


def test_empty_assistant_content_turn_decodes_to_an_empty_message() -> None:
    request = OPENAI.decode_request(interactions(FOLDER, "stream-tool-call-then-text.yaml")[1].request)
    assert [m.role for m in request.messages] == ["user", "assistant", "assistant", "tool"]
    assert request.messages[1].content == []
    assert request.messages[3].content[0] == ir.ToolResultPart(
        tool_call_id="call_1EYWDzueHEp8OsB8jJSEp7WB", name="multiply", content=[ir.TextPart(text="2869461")]
    )
