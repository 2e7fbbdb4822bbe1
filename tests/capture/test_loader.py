"""`load_interactions` on every corpus file, concrete values from a few, and clear errors for bad files."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest
import yaml

from harness.capture import CaptureError, Interaction, load_interactions
from tests.conftest import CORPUS, corpus_dir, corpus_files

ALL_FILES = [p for d in sorted(CORPUS.iterdir()) if d.is_dir() for p in corpus_files(d.name)] if CORPUS.is_dir() else []


def _load(relative: str) -> list[Interaction]:
    protocol, name = relative.split("/")
    return load_interactions(corpus_dir(protocol) / name)


@pytest.mark.corpus
@pytest.mark.parametrize("path", ALL_FILES, ids=[f"{p.parent.name}/{p.name}" for p in ALL_FILES])
def test_every_corpus_file_loads(path: Path) -> None:
    """Every capture loads: POST requests with JSON bodies, real statuses, bodies free of transport encoding."""
    items = load_interactions(path)
    assert items
    for item in items:
        assert item.request.method == "POST"
        assert item.url.startswith(("http://", "https://"))
        assert item.request.path.startswith("/")
        json.loads(item.request.body)
        assert 200 <= item.response.status < 600
        body = item.response.body
        assert body
        assert not body.startswith(b"\x1f\x8b"), "still gzip-compressed"
        if item.response.status >= 400:
            json.loads(body)  # every recorded error body is JSON, whatever its content-type says
        elif "text/event-stream" in item.response.headers.get("content-type", ""):
            assert body.startswith((b"event:", b"data:", b":"))
        else:
            assert body.lstrip()[:1] in (b"{", b"[")


@pytest.mark.corpus
def test_corpus_is_all_covered() -> None:
    """The parametrization above sees every protocol folder's files (it is not silently empty)."""
    corpus_dir("anthropic")
    folders = {p.parent.name for p in ALL_FILES}
    assert {"anthropic", "gemini", "ollama", "openai_chat", "openai_compat", "openai_responses"} <= folders
    assert set(ALL_FILES) == {p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".httprr")}
    assert len(ALL_FILES) >= 60


STATUSES = {
    "anthropic/error-400-invalid-request.yaml": [400],
    "anthropic/error-401-authentication.yaml": [401],
    "anthropic/error-404-not-found-stream-request.yaml": [404],
    "anthropic/nonstream-parallel-tool-use.yaml": [200, 200],
    "anthropic/stream-text.yaml": [200],
    "gemini/error-429-resource-exhausted.yaml": [429],
    "gemini/json-array-stream-thought-function-call.yaml": [200, 200, 200],
    "ollama/api-chat-error-400-tools-unsupported.httprr": [400],
    "ollama/api-chat-stream-local.httprr": [200],
    "openai_chat/error-404-model-not-found.yaml": [404],
    "openai_chat/stream-parallel-tool-calls.yaml": [200, 200],
    "openai_compat/openrouter-error-429.yaml": [429],
    "openai_compat/xai-stream-tool-call.yaml": [200, 200],
}


@pytest.mark.corpus
@pytest.mark.parametrize(("relative", "statuses"), STATUSES.items(), ids=list(STATUSES))
def test_statuses(relative: str, statuses: list[int]) -> None:
    """Interaction count and status codes as recorded."""
    assert [item.response.status for item in _load(relative)] == statuses


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("relative", "prefix"),
    [
        ("anthropic/nonstream-text.yaml", b'{"model":"claude-sonnet-4-20250514","id":"msg_01EXuhhFC9buDpjCcznFPSDs"'),
        ("anthropic/error-404-not-found-stream-request.yaml", b'{"type":"error","error":{"type":"not_found_error"'),
        ("anthropic/stream-parallel-tool-use-empty-input-gzip.yaml", b"event: message_start\ndata: {"),
        ("anthropic/stream-thinking-gzip.yaml", b"event: message_start\ndata: {"),
        ("gemini/json-array-stream-thought-function-call.yaml", b'[{\n  "candidates": ['),
        ("openai_chat/nonstream-text.yaml", b'{\n  "id": "chatcmpl-'),
    ],
)
def test_gzip_bodies_are_gunzipped(relative: str, prefix: bytes) -> None:
    """vcrpy stored these bodies as base64 gzip (`!!binary`); they come out as the plain payload."""
    item = _load(relative)[0]
    assert item.response.headers["content-encoding"] == "gzip"
    assert item.response.body.startswith(prefix)


@pytest.mark.corpus
def test_httprr_chunked_ollama_stream() -> None:
    """The httprr trace keeps chunk-size lines; dechunked, the body is 22 NDJSON lines ending in done:true."""
    [item] = _load("ollama/api-chat-stream-local.httprr")
    assert item.url == "http://localhost:11434/api/chat"
    assert item.response.headers["transfer-encoding"] == "chunked"
    assert item.response.headers["content-type"] == "application/x-ndjson"
    lines = item.response.body.splitlines()
    assert len(lines) == 22
    assert item.response.body.endswith(b"}\n")
    chunks = [json.loads(line) for line in lines]
    assert "".join(c["message"]["content"] for c in chunks) == "Okay, here we go!\n\n1, 2, 3, 4, 5\n"
    last = chunks[-1]
    assert (last["done"], last["done_reason"], last["eval_count"], last["prompt_eval_count"]) == (True, "stop", 22, 16)
    assert [c["done"] for c in chunks].count(True) == 1
    assert json.loads(item.request.body)["model"] == "gemma3:1b"


@pytest.mark.corpus
def test_httprr_bare_lf_header_line() -> None:
    """langchaingo's trace has a `User-Agent` header line ended by LF alone; it still parses as a header."""
    [item] = _load("ollama/api-chat-stream-local.httprr")
    assert item.request.headers["user-agent"] == "langchaingo-httprr"
    assert item.request.headers["content-length"] == "151"
    assert item.request.headers["accept"] == "application/x-ndjson"


@pytest.mark.corpus
def test_go_vcr_v2_files_load() -> None:
    """go-vcr v2 cassettes (charmbracelet/fantasy): url/code/body keys, raw SSE bodies ending in [DONE]."""
    [item] = _load("openai_compat/groq-stream-text-x-groq-usage.yaml")
    assert item.url == "https://api.groq.com/openai/v1/chat/completions"
    assert item.request.path == "/openai/v1/chat/completions"
    assert json.loads(item.request.body)["model"] == "moonshotai/kimi-k2-instruct-0905"
    assert item.response.headers["content-type"] == "text/event-stream"
    assert item.response.body.count(b"data: ") == 7
    assert item.response.body.endswith(b"data: [DONE]\n\n")
    first, second = _load("openai_compat/llamacpp-stream-reasoning-content-tool-call.yaml")
    assert first.url == second.url == "http://localhost:8080/v1/chat/completions"
    assert json.loads(first.request.body)["model"] == "openai/gpt-oss-20b"


@pytest.mark.corpus
def test_pydantic_ai_parsed_body_gives_json() -> None:
    """pydantic-ai stores JSON bodies as YAML mappings (`parsed_body`); they come back as JSON bytes."""
    [item] = _load("anthropic/error-400-invalid-request.yaml")
    body = json.loads(item.response.body)
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert body["request_id"] == "req_011Ca7jT9AHpgXgdv8igm4z9"
    assert sorted(json.loads(item.request.body)) == ["max_tokens", "messages", "model", "output_config", "stream"]
    [item] = _load("openai_chat/error-400-unsupported-value.yaml")
    error = json.loads(item.response.body)["error"]
    assert (error["code"], error["param"], error["type"]) == (
        "unsupported_value",
        "messages[0].role",
        "invalid_request_error",
    )


@pytest.mark.corpus
def test_gemini_sse_error_body_is_plain_json() -> None:
    """Gemini answers a bad alt=sse request with content-type text/event-stream but a plain JSON error body."""
    [item] = _load("gemini/error-400-api-key-invalid-stream-request.yaml")
    assert item.request.query == {"alt": "sse"}
    assert item.response.headers["content-type"] == "text/event-stream"
    assert json.loads(item.response.body)["error"]["status"] == "INVALID_ARGUMENT"


@pytest.mark.corpus
def test_gemini_sse_crlf_separators_kept_verbatim() -> None:
    """Gemini separates SSE events with CRLF CRLF; the loader hands the bytes over unchanged."""
    [item] = _load("gemini/sse-stream-text.yaml")
    assert b"\r\n\r\n" in item.response.body
    assert item.request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"


@pytest.mark.corpus
def test_mistral_uri_fragment_dropped_from_path() -> None:
    """pydantic-ai recorded Mistral's URI with a `#stream` fragment; the request path leaves it out."""
    [item] = _load("openai_compat/mistral-stream-thinking-content-array.yaml")
    assert item.url == "https://api.mistral.ai/v1/chat/completions#stream"
    assert item.request.path == "/v1/chat/completions"


# --- bad files -------------------------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    """A missing file is a CaptureError naming it."""
    path = tmp_path / "nope.yaml"
    with pytest.raises(CaptureError, match=r"nope\.yaml: cannot read: No such file or directory"):
        load_interactions(path)


def test_not_yaml(tmp_path: Path) -> None:
    """Text that is not YAML says so."""
    path = tmp_path / "bad.yaml"
    path.write_text("interactions: [\n  - {request: \n")
    with pytest.raises(CaptureError, match=r"bad\.yaml: not a YAML cassette"):
        load_interactions(path)


@pytest.mark.parametrize("text", ["version: 1\n", "- a\n- b\n", "interactions: {}\n", ""])
def test_yaml_without_interactions(tmp_path: Path, text: str) -> None:
    """YAML that is not a cassette (no `interactions` list) is refused."""
    path = tmp_path / "other.yaml"
    path.write_text(text)
    with pytest.raises(CaptureError, match=r"other\.yaml: no 'interactions' list"):
        load_interactions(path)


def test_interaction_missing_keys(tmp_path: Path) -> None:
    """An interaction without its request fields names the interaction's position."""
    path = tmp_path / "partial.yaml"
    path.write_text("interactions:\n- request: {method: POST}\n  response: {status: {code: 200}}\n")
    with pytest.raises(CaptureError, match=r"partial\.yaml: interaction 0: KeyError\('uri'\)"):
        load_interactions(path)


def _httprr(request: bytes, response: bytes) -> bytes:
    return b"httprr trace v1\n" + f"{len(request)} {len(response)}\n".encode() + request + response


REQUEST = b"POST http://localhost:11434/api/chat HTTP/1.1\r\nHost: localhost\r\n\r\n{}"


def test_truncated_httprr(tmp_path: Path) -> None:
    """A trace cut short of the byte lengths its record header promises is refused with the offset."""
    path = tmp_path / "cut.httprr"
    path.write_bytes(_httprr(REQUEST, b"HTTP/1.1 200 OK\r\n\r\n{}")[:-5])
    with pytest.raises(CaptureError, match=r"cut\.httprr: record at byte 16 is shorter than its header says"):
        load_interactions(path)


def test_httprr_truncated_record_header(tmp_path: Path) -> None:
    """A record header line with no newline is truncated."""
    path = tmp_path / "head.httprr"
    path.write_bytes(b"httprr trace v1\n12 3")
    with pytest.raises(CaptureError, match=r"truncated record header at byte 16"):
        load_interactions(path)


def test_httprr_bad_record_header(tmp_path: Path) -> None:
    """A record header that is not two numbers is named with its offset."""
    path = tmp_path / "hdr.httprr"
    path.write_bytes(b"httprr trace v1\nten 3\n")
    with pytest.raises(CaptureError, match=r"bad record header b'ten 3' at byte 16"):
        load_interactions(path)


def test_httprr_truncated_chunked_body(tmp_path: Path) -> None:
    """A chunked body without its last-chunk marker is truncated, not silently short."""
    path = tmp_path / "chunk.httprr"
    response = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"
    path.write_bytes(_httprr(REQUEST, response))
    with pytest.raises(CaptureError, match=r"truncated chunked body at byte 8"):
        load_interactions(path)


def test_httprr_chunked_body_dechunked(tmp_path: Path) -> None:
    """Chunk-size lines (hex, with extensions) are removed from a complete chunked body."""
    path = tmp_path / "ok.httprr"
    response = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\na;x=1\r\n0123456789\r\n0\r\n\r\n"
    path.write_bytes(_httprr(REQUEST, response))
    [item] = load_interactions(path)
    assert item.response.body == b"abc0123456789"
    assert item.request.body == b"{}"


def test_gzip_header_with_plain_body(tmp_path: Path) -> None:
    """A body whose content-encoding says gzip but that has no gzip header was stored decoded: taken as it stands,
    whatever it holds, and the interaction's note says so (nothing is lost, nothing is silent)."""
    path = tmp_path / "gz.yaml"
    path.write_text(
        "interactions:\n- request: {method: POST, uri: 'https://x/v1', body: '{}'}\n"
        "  response:\n    status: {code: 502}\n    headers: {Content-Encoding: [gzip]}\n"
        "    body: {string: 'upstream connect error'}\n"
    )
    [item] = load_interactions(path)
    assert item.response.body == b"upstream connect error"
    assert item.notes == (
        "the body says Content-Encoding gzip but it has no gzip header: taken as stored (already decoded by the "
        "recorder)",
    )


def test_gzip_magic_without_header(tmp_path: Path) -> None:
    """Gzip bytes are recognized by their magic even when the content-encoding header was trimmed away."""
    path = tmp_path / "magic.yaml"
    payload = gzip.compress(b'{"ok": true}')
    path.write_text(
        "interactions:\n- request: {method: POST, uri: 'https://x/v1', body: null}\n"
        "  response:\n    status: {code: 200}\n    headers: {}\n"
        f"    body: {{string: !!binary '{base64.b64encode(payload).decode()}'}}\n"
    )
    [item] = load_interactions(path)
    assert item.response.body == b'{"ok": true}'
    assert item.request.body == b""


# --- the harness's own cassettes --------------------------------------------------------------------------------


def test_harness_body_forms_read_back_byte_for_byte(tmp_path: Path) -> None:
    """What the recorder's serializer writes (`json:`, `string:` with `chunks:`, `base64:`) loads as the exact bytes
    it stored, with the chunk boundaries kept."""
    from harness.record.serializer import serialize

    sse = b'event: ping\ndata: {"type":"ping"}\n\nevent: done\ndata: {}\n\n'
    binary = b"\xff\xfe not utf-8"
    data = {
        "version": 1,
        "interactions": [
            {
                "request": {"method": "POST", "uri": "http://x.invalid/v1/messages", "body": b'{"a":[1,"\xc3\xa9"]}'},
                "response": {"status": {"code": 200}, "headers": {}, "body": {"string": sse, "chunks": [11, 24, 22]}},
            },
            {
                "request": {"method": "POST", "uri": "http://x.invalid/v1/messages", "body": binary},
                "response": {"status": {"code": 200}, "headers": {}, "body": {"string": b'{"ok":true}'}},
            },
        ],
    }
    text = serialize(data)
    assert "json:" in text and "base64:" in text and "chunks:" in text
    path = tmp_path / "own.yaml"
    path.write_text(text, encoding="utf-8")
    first, second = load_interactions(path)
    assert first.request.body == '{"a":[1,"é"]}'.encode()
    assert (first.response.body, first.chunks) == (sse, (11, 24, 22))
    assert first.response_chunks() == [sse[:11], sse[11:35], sse[35:]]
    assert (second.request.body, second.response.body, second.chunks) == (binary, b'{"ok":true}', None)


def test_every_committed_cassette_reads_as_the_recorder_stored_it() -> None:
    """The capture reader and the recorder's own deserializer agree on every committed cassette: bodies and chunks."""
    from harness.record.serializer import deserialize
    from tests.conftest import REPO

    paths = sorted((REPO / "cassettes").rglob("*.yaml"))
    assert len(paths) > 500
    for path in paths:
        stored = deserialize(path.read_text(encoding="utf-8"))["interactions"]
        for item, raw in zip(load_interactions(path), stored, strict=True):
            assert item.request.body == raw["request"]["body"], path
            assert item.response.body == raw["response"]["body"]["string"], path
            assert item.chunks == (tuple(raw["response"]["body"]["chunks"]) or None), path


def test_chunks_that_do_not_add_up_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad-chunks.yaml"
    path.write_text(
        "interactions:\n- request: {method: POST, uri: 'https://x/v1', body: {json: {}}}\n"
        "  response:\n    status: {code: 200}\n    body: {string: 'abc', chunks: [1, 1]}\n"
    )
    with pytest.raises(CaptureError, match=r"interaction 0: .*body.chunks add up to 2 bytes, the body has 3"):
        load_interactions(path)


def test_a_body_mapping_without_a_known_form_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text("interactions:\n- request: {method: POST, uri: 'https://x/v1', body: {yaml: 1}}\n  response: {}\n")
    with pytest.raises(CaptureError, match=r"body has none of string, json, base64 \(keys: yaml\)"):
        load_interactions(path)


def test_the_harness_own_cassettes_load_with_their_json_and_base64_bodies() -> None:
    from harness.protocols import decode_events, registry
    from harness.record.serializer import decode_body
    from tests.conftest import REPO

    path = REPO / "cassettes" / "bedrock" / "text-basic.stream.yaml"
    (item,) = load_interactions(path)
    stored = yaml.safe_load(path.read_text())["interactions"][0]
    assert item.response.body == decode_body(stored["response"]["body"])  # the event stream, from base64
    assert item.request.path == "/bedrock/_s/text-basic/model/us.amazon.nova-micro-v1%3A0/converse-stream"
    assert json.loads(item.request.body)["messages"][0]["content"][0]["text"] == "Say hello in one sentence."
    events = decode_events(registry.get("bedrock"), [item.response.body])
    assert events[-1].kind == "done"
    assert "".join(e.text for e in events if e.kind == "text_delta") == "Hello! How can I help you today?"
