"""Gemini's server-side tools in an answer: code execution parts (`executableCode`, `codeExecutionResult`) and
grounding metadata (Google Search, File Search) decode without losing the text, calls, stop reason and usage.

The bodies follow the documented wire format (ai.google.dev/gemini-api/docs/code-execution, "Code execution"
and .../docs/google-search and .../docs/file-search, `groundingMetadata`; the REST reference's `Part`,
`ExecutableCode`, `CodeExecutionResult` and `GroundingMetadata`); the corpus has no such capture."""

from __future__ import annotations

import json
from typing import Any

from harness import ir
from harness.protocols import decode_events, encode_events, registry
from harness.stream import accumulate, validate
from tests.protocols.gemini.support import CODEC, chunkings

CODE = {"language": "PYTHON", "code": "primes = [n for n in range(2, 250) if all(n % d for d in range(2, n))]\n"
        "print(sum(primes[:50]))\n"}  # fmt: skip
RESULT = {"outcome": "OUTCOME_OK", "output": "5117\n"}
USAGE = {
    "promptTokenCount": 22,
    "candidatesTokenCount": 41,
    "toolUsePromptTokenCount": 310,
    "totalTokenCount": 373,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 22}],
    "toolUsePromptTokensDetails": [{"modality": "TEXT", "tokenCount": 310}],
}


def _chunk(parts: list[dict[str, Any]], **candidate: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"parts": parts, "role": "model"}, **candidate, "index": 0}]}


def _code_execution_answer() -> list[dict[str, Any]]:
    """The documented code-execution answer as a stream: text, the code, its result, the answer text."""
    last = _chunk([{"text": "The sum of the first 50 prime numbers is 5117."}], finishReason="STOP")
    return [
        _chunk([{"text": "I'll compute that with code."}]),
        _chunk([{"executableCode": CODE}]),
        _chunk([{"codeExecutionResult": RESULT}]),
        {**last, "usageMetadata": USAGE, "modelVersion": "gemini-2.5-flash", "responseId": "r1"},
    ]


def _sse(objects: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(o).encode() + b"\r\n\r\n" for o in objects)


def test_gemini_code_execution_parts_keep_text_stop_and_usage_in_a_stream() -> None:
    body = _sse(_code_execution_answer())
    for how, chunks in chunkings(body).items():
        events = decode_events(CODEC, chunks)
        assert validate(events) == [], how
        kept = [e for e in events if isinstance(e, ir.ProviderEvent)]
        assert [(e.protocol, e.type) for e in kept] == [("gemini", "executableCode"), ("gemini", "codeExecutionResult")]
        assert kept[0].data == _chunk([{"executableCode": CODE}])
        answer = accumulate(events).response
        assert answer.content == [
            ir.TextPart(text="I'll compute that with code."),
            ir.TextPart(text="The sum of the first 50 prime numbers is 5117."),
        ]
        assert answer.stop_reason is not None and answer.stop_reason.kind == "end_turn"
        assert (answer.usage.input_tokens, answer.usage.output_tokens) == (22, 41)


def test_gemini_code_execution_parts_are_written_back_by_the_gemini_encoder_only() -> None:
    events = decode_events(CODEC, [_sse(_code_execution_answer())])
    again = decode_events(CODEC, [encode_events(CODEC, events)])
    assert [e for e in again if isinstance(e, ir.ProviderEvent)] == [
        e for e in events if isinstance(e, ir.ProviderEvent)
    ]
    other = encode_events(registry.get("anthropic"), events)
    assert b"executableCode" not in other and b"5117\\n" not in other


def test_gemini_code_execution_parts_in_a_generate_content_body() -> None:
    chunks = _code_execution_answer()
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    body = {**chunks[-1], "candidates": [{**chunks[-1]["candidates"][0], "content": {"parts": parts, "role": "model"}}]}
    response = CODEC.decode_response(json.dumps(body).encode())
    assert [p.text for p in response.content if isinstance(p, ir.TextPart)] == [
        "I'll compute that with code.",
        "The sum of the first 50 prime numbers is 5117.",
    ]
    assert response.stop_reason is not None and response.stop_reason.kind == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens, response.id) == (22, 41, "r1")
    tool_use = {k: USAGE[k] for k in ("toolUsePromptTokenCount", "toolUsePromptTokensDetails")}
    assert response.extras == {"gemini": {"usageMetadata": tool_use}}


def test_gemini_grounding_metadata_breaks_nothing() -> None:
    # Google Search grounding: the candidate's groundingMetadata (queries, chunks with web sources, supports);
    # File Search: chunks with `retrievedContext`.
    grounding = {
        "webSearchQueries": ["euro 2024 winner"],
        "searchEntryPoint": {"renderedContent": "<style>...</style>"},
        "groundingChunks": [
            {"web": {"uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/x", "title": "uefa.com"}},
            {"retrievedContext": {"title": "notes.txt", "text": "Spain won Euro 2024.", "fileSearchStore": "s/1"}},
        ],
        "groundingSupports": [
            {
                "segment": {"startIndex": 0, "endIndex": 20, "text": "Spain won Euro 2024."},
                "groundingChunkIndices": [0, 1],
                "confidenceScores": [0.97, 0.9],
            }
        ],
    }
    text = {"text": "Spain won Euro 2024."}
    usage = {"promptTokenCount": 8, "candidatesTokenCount": 6, "totalTokenCount": 14}
    body = {**_chunk([text], finishReason="STOP", groundingMetadata=grounding), "usageMetadata": usage}
    response = CODEC.decode_response(json.dumps(body).encode())
    assert response.content == [ir.TextPart(text="Spain won Euro 2024.")]
    assert response.stop_reason is not None and response.stop_reason.kind == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (8, 6)
    streamed = decode_events(CODEC, [_sse([_chunk([text]), body])])
    assert validate(streamed) == []
    assert accumulate(streamed).response.content == [ir.TextPart(text="Spain won Euro 2024.Spain won Euro 2024.")]


SIGNATURE = "EhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4v"  # base64, as the google-genai SDK reads it


def test_gemini_signature_on_a_code_execution_part_is_written_back_once() -> None:
    # Gemini 3 signs its first executableCode part (a real gemini-3-flash-preview stream, pydantic-ai's
    # test_code_execution_stream cassette). The signature was kept both in the provider event and as the
    # thinking block it ends, so the encoder wrote it twice: on the code part and again on the next text part,
    # and a Gemini client through the proxy saw a second thinking block.
    code = {"executableCode": {**CODE, "id": "8xju7mua"}, "thoughtSignature": SIGNATURE}
    chunks = [_chunk([code, {"text": ""}]), *_code_execution_answer()[2:]]
    events = decode_events(CODEC, [_sse(chunks)])
    assert [e for e in events if isinstance(e, ir.ThinkingEnd)] == [ir.ThinkingEnd(index=0, signature=SIGNATURE)]
    kept = [e for e in events if isinstance(e, ir.ProviderEvent)]
    assert kept[0].data == _chunk([{"executableCode": {**CODE, "id": "8xju7mua"}}])
    wire = encode_events(CODEC, events)
    assert wire.count(SIGNATURE.encode()) == 1
    first = json.loads(wire.split(b"\r\n\r\n")[0].removeprefix(b"data: "))
    assert first["candidates"][0]["content"]["parts"] == [code]
    assert decode_events(CODEC, [wire]) == events


def test_gemini_3_built_in_tool_call_and_response_parts_keep_text_stop_and_usage() -> None:
    # Gemini 3 with File Search (a real gemini-3-flash-preview answer, pydantic-ai's
    # test_google_model_file_search_grounding_gemini_3 cassette): a `toolCall` part and a `toolResponse` part, each
    # signed, before the answer text. They aborted the decode ("unsupported part 'toolCall'"), streamed or not.
    signatures = [SIGNATURE, "EhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4w", "EhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4x"]
    call = {"thoughtSignature": signatures[0], "toolCall": {"id": "1ml9ew09", "toolType": "FILE_SEARCH"}}
    result = {"thoughtSignature": signatures[1], "toolResponse": {"id": "1ml9ew09", "toolType": "FILE_SEARCH"}}
    text = {"text": "Paris is home to the Eiffel Tower.", "thoughtSignature": signatures[2]}
    usage = {"promptTokenCount": 12, "candidatesTokenCount": 9, "totalTokenCount": 21}
    body = {**_chunk([call, result, text], finishReason="STOP"), "usageMetadata": usage}
    response = CODEC.decode_response(json.dumps(body).encode())
    assert response.content == [
        ir.ThinkingPart(text="", signature=signatures[0]),
        ir.ThinkingPart(text="", signature=signatures[1]),
        ir.ThinkingPart(text="", signature=signatures[2]),
        ir.TextPart(text="Paris is home to the Eiffel Tower."),
    ]
    assert response.stop_reason is not None and response.stop_reason.kind == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 9)
    last = {**body, "candidates": [{**body["candidates"][0], "content": {"parts": [text], "role": "model"}}]}
    events = decode_events(CODEC, [_sse([_chunk([call]), _chunk([result]), last])])
    assert validate(events) == []
    kept = [e for e in events if isinstance(e, ir.ProviderEvent)]
    assert [e.type for e in kept] == ["toolCall", "toolResponse"]
    assert accumulate(events).response.content == response.content
    wire = encode_events(CODEC, events)
    assert [wire.count(s.encode()) for s in signatures] == [1, 1, 1]
    assert decode_events(CODEC, [wire]) == events
