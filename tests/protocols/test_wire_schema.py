"""The vendored specs and `harness.protocols.wire_schema`: what each kind of departure weighs, that the documents are
JSON Schema `jsonschema` reads alike, their provenance, and that our own reference backends (the committed cassettes)
and the built-in proxy's encoders pass their own protocols' specs (issue 21, item 5)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.capture.loader import Interaction, load_interactions
from harness.protocols import registry
from harness.protocols.base import decode_events, encode_events
from harness.protocols.corpus import protocol_of
from harness.protocols.wire_schema import (
    SOCKET_FRAMES,
    SchemaFinding,
    answer_findings,
    answer_parts,
    answer_payloads,
    event_json,
    has_spec,
    part_payloads,
    request_findings,
    sse_data,
)
from harness.wire import FramingError, iter_sse
from tests.conftest import CORPUS

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"
FAMILIES = ("openai", "responses", "anthropic", "gemini", "bedrock")
"""The protocols with a vendored spec of their own (profiles inherit their family's)."""

CHAT_BODY: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1761175236,
    "model": "gpt-4o-mini",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop", "logprobs": None}
    ],
}


def _bugs(findings: list[SchemaFinding]) -> list[SchemaFinding]:
    return [f for f in findings if f.governs]


def _only(findings: list[SchemaFinding]) -> SchemaFinding:
    assert len(findings) == 1, findings
    return findings[0]


# ---- what each departure weighs ----------------------------------------------------------------------------------


def test_a_valid_chat_completion_has_no_finding() -> None:
    assert answer_findings("openai", "body", CHAT_BODY) == []


def test_a_missing_required_field_governs_and_names_the_spec() -> None:
    body = {k: v for k, v in CHAT_BODY.items() if k != "created"}
    found = _only(answer_findings("openai", "body", body))
    assert found.path == "created" and found.message == "required field 'created' is missing" and found.governs
    assert found.spec.startswith("OpenAI openai-python ") and found.spec.endswith("#/ChatCompletion")


def test_a_wrong_type_null_and_enum_govern() -> None:
    body = json.loads(json.dumps(CHAT_BODY))
    body["created"] = "now"
    body["choices"][0]["message"]["role"] = None
    body["choices"][0]["finish_reason"] = "done"
    found = {f.path: f for f in answer_findings("openai", "body", body)}
    assert found["created"].message == "expected integer, got string" and found["created"].governs
    assert found["choices[0].message.role"].message.startswith("null where the spec does not allow it")
    assert found["choices[0].finish_reason"].message.startswith('value "done" is not one of the spec\'s (stop,')
    assert all(f.governs for f in found.values())


def test_an_undocumented_answer_field_only_warns() -> None:
    found = _only(answer_findings("openai", "body", {**CHAT_BODY, "x_groq": {"id": "req_1"}}))
    assert found.path == "x_groq" and found.message == "undocumented field 'x_groq'" and not found.governs


def test_an_undocumented_event_type_warns_a_wrong_nested_type_governs() -> None:
    assert [(f.path, f.governs) for f in answer_findings("anthropic", "event", {"type": "keepalive"})] == [
        ("type", False)
    ]
    event = {"type": "content_block_delta", "index": 0, "delta": {"type": "words", "text": "hi"}}
    found = _only(answer_findings("anthropic", "event", event))
    assert found.path == "delta.type" and found.governs and found.spec.endswith("#/RawContentBlockDeltaEvent")


def test_an_unknown_request_field_governs_where_the_api_rejects_them() -> None:
    request = {"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": [], "stream_options": {}}
    found = _only(request_findings("anthropic", request))
    assert found.path == "stream_options" and found.message == "unknown field 'stream_options'" and found.governs


def test_an_unknown_request_field_only_warns_for_an_openai_compatible_server() -> None:
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "reasoning_effort": "low", "x": 1}
    assert _bugs(request_findings("openai", request)) == [
        SchemaFinding("x", "unknown field 'x'", _bugs(request_findings("openai", request))[0].spec, True)
    ]
    found = _only(request_findings("groq", request))
    assert found.path == "x" and not found.governs


def test_open_responses_findings_only_warn() -> None:
    body = json.loads(json.dumps(_responses_body()))
    del body["completed_at"]
    found = _only([f for f in answer_findings("responses", "body", body) if f.path == "completed_at"])
    assert found.message == "required field 'completed_at' is missing" and not found.governs
    assert found.spec.startswith("Open Responses spec ")


def test_has_spec_through_the_family() -> None:
    assert all(has_spec(p) for p in (*FAMILIES, "groq", "azure", "vertex-anthropic", "vertex-gemini"))
    assert not has_spec("ollama") and answer_findings("ollama", "body", {"anything": 1}) == []


def test_a_bedrock_frame_is_checked_by_its_event_type() -> None:
    good = {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "hi"}, "p": "abc"}}
    assert answer_findings("bedrock", "event", good) == []
    bad = {"contentBlockDelta": {"delta": {"text": "hi"}}}
    assert [(f.path, f.governs) for f in answer_findings("bedrock", "event", bad)] == [
        ("contentBlockDelta.contentBlockIndex", True)
    ]


# ---- the documents -----------------------------------------------------------------------------------------------


def _documents() -> Iterator[tuple[str, str, dict[str, Any]]]:
    seen = set()
    for name in registry.names():
        for ref in registry.facts(name).wire_specs:
            if (ref.package, ref.document) not in seen:
                seen.add((ref.package, ref.document))
                text = resources.files(ref.package).joinpath(f"{ref.document}.json").read_text(encoding="utf-8")
                yield ref.package, ref.document, json.loads(text)


def test_every_document_has_its_provenance() -> None:
    docs = list(_documents())
    assert len(docs) == 7
    for package, document, doc in docs:
        jsonschema.Draft202012Validator.check_schema(doc)
        prov = json.loads(resources.files(package).joinpath("PROVENANCE.json").read_text(encoding="utf-8"))
        entry = prov[f"{document}.json"]
        assert entry["spec"] == doc["x-spec"] and entry["governs"] == doc["x-governs"]
        assert entry["source"].startswith("PyPI ") and entry["date"][:2] == "20" and entry["how"]
        # WebSocket mode's own error event only where the provider publishes the mode (the Responses API)
        extra = {"socket_error"} if document == "openai" and "responses" in package else set()
        assert set(doc["x-entries"]) == {"body", "event", "error", "request"} | extra


def _jsonschema_valid(protocol: str, kind: str, payload: Any) -> bool:
    ref = registry.facts(protocol).wire_specs[0]
    doc = json.loads(resources.files(ref.package).joinpath(f"{ref.document}.json").read_text(encoding="utf-8"))
    schema = {**doc, "$ref": f"#/$defs/{doc['x-entries'][kind]}"}
    return bool(jsonschema.Draft202012Validator(schema).is_valid(payload))


def test_jsonschema_reads_the_documents_alike() -> None:
    body = {k: v for k, v in CHAT_BODY.items() if k != "created"}
    assert not _jsonschema_valid("openai", "body", body) and _bugs(answer_findings("openai", "body", body))
    assert _jsonschema_valid("openai", "body", CHAT_BODY) and not answer_findings("openai", "body", CHAT_BODY)
    message = _payloads("anthropic", "function-call-outputs-fed-back.nonstream.yaml")[0][1]
    assert _jsonschema_valid("anthropic", "body", message) and not _bugs(answer_findings("anthropic", "body", message))
    del message["usage"]
    assert not _jsonschema_valid("anthropic", "body", message)
    assert [f.path for f in _bugs(answer_findings("anthropic", "body", message))] == ["usage"]


# ---- our own reference backends and proxy pass their protocols' specs ------------------------------------------

# What the reference backends of OpenAI-compatible providers write because the real provider does (each measured
# in docs/shape.md): OpenAI's spec says otherwise, and a profile is a backend only, so no client of ours reads it.
REAL_WIRE_DEVIATIONS = {
    ("azure", "object", 'value "" is not "chat.completion.chunk"'): "Azure's first chunk: prompt_filter_results",
    ("groq", "service_tier", 'value "on_demand" is not one of'): "Groq's tier on every chunk",
    ("mistral", "choices[0].delta.content", "expected string, got array"): "Mistral's typed content chunks",
    ("mistral", "choices[0].message.content", "expected string, got array"): "Mistral's typed content chunks",
    ("openrouter", "error.code", "expected string, got integer"): "OpenRouter's error code is the status",
    ("openrouter", "error.type", "required field 'type' is missing"): "OpenRouter's error has no type",
}


def _cassettes() -> list[tuple[str, Path]]:
    return [(d.name, f) for d in sorted(CASSETTES.iterdir()) if has_spec(d.name) for f in sorted(d.glob("*.yaml"))]


def _payloads(backend: str, name: str) -> list[tuple[str, Any]]:
    item = load_interactions(CASSETTES / backend / name)[0]
    return _answer(item)


def _answer(item: Interaction) -> list[tuple[str, Any]]:
    media = item.response.headers.get("content-type", "application/json")
    return list(answer_payloads(item.response.body, media_type=media, status=item.response.status))


def _excused(backend: str, finding: SchemaFinding) -> bool:
    return any(
        backend == b and finding.path == path and finding.message.startswith(msg)
        for b, path, msg in REAL_WIRE_DEVIATIONS
    )


def test_every_committed_cassette_passes_its_protocols_spec() -> None:
    bugs, checked = [], 0
    for backend, path in _cassettes():
        for item in load_interactions(path):
            for kind, payload in _answer(item):
                checked += 1
                found = answer_findings(backend, kind, payload)  # type: ignore[arg-type]
                bugs += [(backend, path.name, f) for f in _bugs(found) if not _excused(backend, f)]
            request = json.loads(item.request.body)
            bugs += [(backend, path.name, f) for f in _bugs(request_findings(backend, request))]
    assert checked > 19000
    assert bugs == []


def test_each_real_wire_deviation_is_still_there() -> None:
    """The excuses above are not stale: each is found in its profile's cassettes."""
    seen = set()
    for backend, path in _cassettes():
        if backend not in {b for b, _, _ in REAL_WIRE_DEVIATIONS}:
            continue
        for item in load_interactions(path):
            for kind, payload in _answer(item):
                for f in _bugs(answer_findings(backend, kind, payload)):  # type: ignore[arg-type]
                    seen |= {k for k in REAL_WIRE_DEVIATIONS if k[0] == backend and _excused(backend, f)}
    assert seen == set(REAL_WIRE_DEVIATIONS)


def test_the_real_providers_own_answers_and_accepted_requests_pass() -> None:
    """No false alarm: every real recording (../shared/corpus) of a protocol with a spec, answers and requests,
    has no governing finding but the profiles' known real-wire deviations. This is what the specs' relaxations
    (`x-relaxed`, from `RELAXED` in scripts/refresh_specs.py) and the weights of nullable request fields and nested
    unknown OpenAI keys rest on."""
    if not CORPUS.is_dir():
        pytest.skip(f"real-traffic corpus not found at {CORPUS} (set CONFORMANCE_CORPUS)")
    bugs, checked = [], 0
    for path in sorted(CORPUS.rglob("*.yaml")):
        protocol = protocol_of(str(path.relative_to(CORPUS)))
        if protocol is None or not has_spec(protocol):
            continue
        for item in load_interactions(path):
            for kind, payload in _answer(item):
                checked += 1
                found = _bugs(answer_findings(protocol, kind, payload))  # type: ignore[arg-type]
                bugs += [(path.name, f) for f in found if not _excused(protocol, f)]
            if item.response.status < 400 and item.request.body:
                bugs += [(path.name, f) for f in _bugs(request_findings(protocol, json.loads(item.request.body)))]
    assert checked > 500
    assert bugs == []


def _translated(frontend: str, item: Interaction, backend: str, stream: bool) -> list[tuple[str, Any]]:
    """The answer the built-in proxy's encoders give `frontend`'s client for one recorded upstream answer."""
    upstream, codec = registry.get(backend), registry.get(frontend)
    status = item.response.status
    if status >= 400:
        out = codec.encode_error(upstream.decode_error(status, item.response.headers, item.response.body))
        return list(answer_payloads(out.body, media_type=out.headers.get("content-type", ""), status=out.status))
    if stream:
        body = encode_events(codec, decode_events(upstream, item.response_chunks()))
        return list(answer_payloads(body, media_type=codec.stream_media_type, status=200))
    out = codec.encode_response(upstream.decode_response(item.response.body))
    return list(answer_payloads(out.body, media_type=out.headers.get("content-type", ""), status=out.status))


@pytest.mark.parametrize("backend", ["openai", "responses", "anthropic", "gemini", "bedrock", "ollama", "cloudflare"])
def test_the_proxys_translated_answers_pass_the_frontends_specs(backend: str) -> None:
    """Every recorded answer of `backend`, translated for each frontend with a spec: no governing finding, and
    no required field missing by any spec (Open Responses' `completed_at` and `service_tier` included)."""
    bad = []
    for path in sorted((CASSETTES / backend).glob("*.yaml")):
        for item in load_interactions(path):
            for frontend in FAMILIES:
                for kind, payload in _translated(frontend, item, backend, path.name.endswith(".stream.yaml")):
                    found = answer_findings(frontend, kind, payload)  # type: ignore[arg-type]
                    bad += [
                        (frontend, path.name, f) for f in found if f.governs or f.message.startswith("required field")
                    ]
    assert bad == []


def _responses_body() -> dict[str, Any]:
    payloads = _payloads("responses", "function-call-outputs-fed-back.nonstream.yaml")
    assert payloads[0][0] == "body"
    body: dict[str, Any] = payloads[0][1]
    return {k: v for k, v in body.items() if k not in ("billing", "moderation", "prompt_cache_retention", "user")}


def test_answer_payloads_by_media_type() -> None:
    assert list(answer_payloads(b'{"error": {"code": 400}}', media_type="application/json", status=400)) == [
        ("error", {"error": {"code": 400}})
    ]
    sse = b'data: {"a": 1}\n\ndata: [DONE]\n\n'
    assert list(answer_payloads(sse, media_type="text/event-stream; charset=utf-8", status=200)) == [
        ("event", {"a": 1})
    ]
    assert list(answer_payloads(b'[{"a": 1}, {"b": 2}]', media_type="application/json", status=200)) == [
        ("event", {"a": 1}),
        ("event", {"b": 2}),
    ]
    assert list(answer_payloads(b'{"a": 1}\n{"b": 2}\n', media_type="application/x-ndjson", status=200)) == [
        ("event", {"a": 1}),
        ("event", {"b": 2}),
    ]
    assert list(answer_payloads(b'{"a": 1}', media_type="application/json", status=200)) == [("body", {"a": 1})]
    with pytest.raises(ValueError):
        answer_payloads(b"not json", media_type="application/json", status=200)


def test_answer_parts_are_the_payloads_unparsed() -> None:
    """Each part is one payload's text (an array body is one part of many payloads); parsed, they are
    `answer_payloads`, so a caller that remembers parts by text reads the same payloads."""
    frame = b'data: {"type": "error", "error": {"code": "x"}}\n\n'
    cases = [
        (b'{"error": {"code": 400}}', "application/json", 400, [("error", b'{"error": {"code": 400}}')]),
        (b'data: {"a": 1}\n\ndata: [DONE]\n\n', "text/event-stream", 200, [("sse", '{"a": 1}')]),
        (frame, f"text/event-stream; {SOCKET_FRAMES}", 200, [("socket", '{"type": "error", "error": {"code": "x"}}')]),
        (b'{"a": 1}\n{"b": 2}\n', "application/x-ndjson", 200, [("line", b'{"a": 1}'), ("line", b'{"b": 2}')]),
        (b'[{"a": 1}, {"b": 2}]', "application/json", 200, [("json", b'[{"a": 1}, {"b": 2}]')]),
    ]
    for body, media, status, parts in cases:
        assert list(answer_parts(body, media_type=media, status=status)) == parts
        parsed = [p for how, text in parts for p in part_payloads(how, text)]
        assert parsed == list(answer_payloads(body, media_type=media, status=status))
    assert part_payloads("socket", '{"type": "error", "error": {"code": "x"}}')[0][0] == "socket_error"
    assert part_payloads("frame messageStop", b"") == (("event", {"messageStop": {}}),)
    with pytest.raises(ValueError):
        part_payloads("sse", "not json")


SSE_PIECES = st.sampled_from(
    [
        b"data: ",
        b"data:",
        b"event: x",
        b": c",
        b"id: 1",
        b"retry: 5",
        b'{"a": 1}',
        b"[DONE]",
        b" ",
        b"\n",
        b"\r",
        b"\r\n",
    ]
)


def _iter_sse_data(body: bytes) -> tuple[str, ...] | str:
    try:
        return tuple(event.data for event in iter_sse([body]))
    except FramingError:
        return "framing error"


@given(st.lists(SSE_PIECES | st.binary(max_size=6), max_size=24).map(b"".join))
def test_sse_data_is_what_iter_sse_reads(body: bytes) -> None:
    """The shared split of an SSE body (`sse_data`, read by the answer spec and the wire rules in place of their
    own `iter_sse`) is each event's data as `iter_sse` gives it, or the same framing error, asked once or twice."""
    sse_data.cache_clear()
    for _ in range(2):
        try:
            found: tuple[str, ...] | str = sse_data(body)
        except FramingError:
            found = "framing error"
        assert found == _iter_sse_data(body)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@given(JSON_VALUES.map(json.dumps) | st.text(max_size=12))
def test_event_json_is_json_loads(text: str) -> None:
    """The kept parse of an SSE event's data (`event_json`, shared by the answer spec, the raw fields and the wire
    rules) is `json.loads`'s value, or the same error, asked once or twice (a second ask is the kept value)."""
    try:
        expected: Any = json.loads(text)
    except json.JSONDecodeError as error:
        expected = ("error", str(error))
    for _ in range(2):
        try:
            found: Any = event_json(text)
        except json.JSONDecodeError as error:
            found = ("error", str(error))
        assert json.dumps(found) == json.dumps(expected)  # by the text: NaN-free, but -0.0 == 0.0 is not enough


def test_a_kind_outside_the_three_is_refused() -> None:
    with pytest.raises(ValueError, match="kind must be body, event, error or socket_error"):
        answer_findings("openai", "request", {})  # type: ignore[arg-type]


def test_openai_rejects_unknown_parameters_not_unknown_nested_keys() -> None:
    """A real api.openai.com request sent an assistant message's `annotations` back and was answered 200."""
    message = {"role": "assistant", "content": "hi", "annotations": []}
    request = {"model": "gpt-4o-mini", "messages": [message], "stream_options": None, "foo": 1}
    found = {f.path: f.governs for f in request_findings("openai", request)}
    assert found == {"messages[0].annotations": False, "foo": True}


def test_a_missing_nullable_required_request_field_only_warns() -> None:
    """The SDK types a function tool's `strict` `Required[Optional[bool]]`; the API takes its absence."""
    tool = {"type": "function", "name": "f", "parameters": {"type": "object"}}
    request = {"model": "m", "input": "hi", "tools": [tool]}
    found = _only([f for f in request_findings("responses", request) if f.path.startswith("tools")])
    assert found.path == "tools[0].strict" and not found.governs
    body = {k: v for k, v in CHAT_BODY.items() if k != "choices"}
    assert _only(answer_findings("openai", "body", body)).governs  # in an answer, a missing field governs


def test_a_field_one_spec_of_the_protocol_documents_is_not_undocumented() -> None:
    # The stream error event: OpenAI's types document the flat code/message/param, Open Responses the nested
    # `error`; the proxy sends both (responses/errors.py), so neither is an undocumented field.
    inner = {"type": "server_error", "code": "server_error", "message": "cut", "param": None}
    event = {"type": "error", "sequence_number": 3, "code": "server_error", "message": "cut", "param": None}
    assert [f for f in answer_findings("responses", "event", {**event, "error": inner}) if not f.governs] == []
    unknown = [f.path for f in answer_findings("responses", "event", {**event, "surprise": 1})]
    assert unknown.count("surprise") == 2  # named by neither: both documents say so


def test_an_sse_event_holding_only_an_error_is_held_to_the_error_shape() -> None:
    # Gemini sends a failure inside the stream as its error body; it is not a GenerateContentResponse.
    body = b'data: {"candidates": []}\n\ndata: {"error": {"code": 502, "message": "cut", "status": "INTERNAL"}}\n\n'
    payloads = answer_payloads(body, media_type="text/event-stream", status=200)
    assert [kind for kind, _ in payloads] == ["event", "error"]
    assert answer_findings("gemini", "error", payloads[1][1]) == []


def test_gemini_reads_proto_json_so_snake_case_names_and_the_model_are_known_fields() -> None:
    # LiteLLM sends `generationConfig.max_output_tokens` and `model` in the body; the API reads both.
    body = {"model": "models/gemini-2.5-flash", "contents": [], "generationConfig": {"max_output_tokens": 8}}
    assert request_findings("gemini", body) == []
    findings = request_findings("gemini", {"contents": [], "generationConfig": {"max_tokens": 8}})
    assert [(f.path, f.message) for f in findings] == [("generationConfig.max_tokens", "unknown field 'max_tokens'")]


def test_a_websocket_modes_error_event_is_held_to_its_own_published_shape() -> None:
    """Frames of a WebSocket mode (the `frames=websocket` media-type parameter the ws runs' frames carry): an
    `error` event with a nested `error` is the mode's own (`ResponseWsError`: `status`, `error.type` and
    `error.message` required); the same event in an HTTP stream stays a stream event, where it departs from the
    spec (the flat `ResponseErrorEvent`)."""
    refused = {"type": "error", "status": 429, "error": {"type": "requests", "code": "rate_limit", "message": "slow"}}
    body = f"data: {json.dumps(refused)}\n\n".encode()
    framed = answer_payloads(body, media_type=f"text/event-stream; {SOCKET_FRAMES}", status=200)
    assert [kind for kind, _ in framed] == ["socket_error"]
    assert answer_findings("responses", "socket_error", refused) == []
    missing = {**refused, "error": {"code": "rate_limit", "message": "slow"}}
    assert [f.path for f in answer_findings("responses", "socket_error", missing) if f.governs] == ["error.type"]
    [(kind, _)] = answer_payloads(body, media_type="text/event-stream", status=200)
    assert kind == "event" and any(f.governs for f in answer_findings("responses", "event", refused))
