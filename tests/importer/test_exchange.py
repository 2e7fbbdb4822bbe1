"""Reading the exchange to import: its protocol found from the recorded URL, its body cut as recorded (or at its
event ends when the capture kept no boundaries), gzip undone and said, raw files taken with their URL."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from harness.capture import load_interactions
from harness.importer import ImportUsageError, detect_protocol, from_capture, from_raw
from harness.protocols.corpus import protocol_of
from tests.conftest import CORPUS, REPO, corpus_dir


@pytest.mark.parametrize(
    ("url", "protocol"),
    [
        ("https://api.anthropic.com/v1/messages?beta=true", "anthropic"),
        ("https://api.openai.com/v1/chat/completions", "openai"),
        ("https://api.openai.com/v1/responses", "responses"),
        ("https://api.groq.com/openai/v1/chat/completions", "groq"),
        ("https://openrouter.ai/api/v1/chat/completions", "openrouter"),
        ("https://api.deepseek.com/chat/completions", "deepseek"),
        (
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            "gemini",
        ),
        (
            "https://us-central1-aiplatform.googleapis.com/v1/projects/acme/locations/us-central1/publishers/google/"
            "models/gemini-2.5-flash:generateContent",
            "vertex-gemini",
        ),
        ("http://localhost:11434/api/chat", "ollama"),
    ],
)
def test_protocol_from_the_recorded_url(url: str, protocol: str) -> None:
    assert detect_protocol(url) == protocol


def test_a_path_many_servers_share_asks_for_protocol() -> None:
    with pytest.raises(ImportUsageError, match=r"several protocols .*llamacpp.*vllm.*pass --protocol"):
        detect_protocol("http://localhost:8080/v1/chat/completions")
    with pytest.raises(ImportUsageError, match="no protocol has requests at this path"):
        detect_protocol("https://example.com/v2/generate")


# The test suite that recorded it pointed the OpenAI client at OpenRouter but kept api.openai.com in the cassette.
RECORDED_UNDER_ANOTHER_HOST = {"openai_compat/openrouter-kimi-stream-tool-args-single-chunk.yaml": "openai"}


@pytest.mark.corpus
def test_every_corpus_url_is_detected_right_or_asked_about() -> None:
    corpus_dir("anthropic")
    for path in sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".httprr")):
        relative = path.relative_to(CORPUS).as_posix()
        expected = RECORDED_UNDER_ANOTHER_HOST.get(relative) or protocol_of(relative)
        for item in load_interactions(path):
            try:
                assert detect_protocol(item.url) == expected, path
            except ImportUsageError as exc:  # a local OpenAI-compatible server: the user names it
                assert f"{expected}," in str(exc) and "localhost" in item.url, path


@pytest.mark.corpus
def test_a_capture_without_boundaries_is_cut_at_its_event_ends() -> None:
    path = corpus_dir("anthropic") / "stream-text.yaml"
    exchange = from_capture(path, 0)
    (item,) = load_interactions(path)
    assert exchange.protocol == "anthropic" and exchange.stream
    assert exchange.body == item.response.body
    events = item.response.body.count(b"\n\n")
    assert len(exchange.chunks) == events and all(c.endswith(b"\n\n") for c in exchange.chunks)
    assert any("kept no chunk boundaries" in n for n in exchange.origin.notes)
    assert exchange.origin.url == "https://api.anthropic.com/v1/messages" and exchange.origin.source == "real"


@pytest.mark.corpus
def test_gzip_is_undone_and_said() -> None:
    path = corpus_dir("openai_compat") / "together-nonstream-gzip.yaml"
    exchange = from_capture(path, 0)
    assert exchange.protocol == "together"
    assert "content-encoding" not in exchange.headers and "content-length" not in exchange.headers
    assert json.loads(exchange.body)["object"] == "chat.completion"
    assert any(n.startswith("gzip undone") for n in exchange.origin.notes)


def test_own_cassette_keeps_its_recorded_boundaries_and_source() -> None:
    path = REPO / "cassettes" / "gemini" / "tool-call-parallel.stream.yaml"
    exchange = from_capture(path, 0)
    (item,) = load_interactions(path)
    assert item.chunks and [len(c) for c in exchange.chunks] == list(item.chunks)
    assert exchange.protocol == "gemini" and exchange.request.path.startswith("/v1beta/models/")
    assert exchange.origin.source == "reference" and exchange.origin.notes == ()


def test_raw_body_and_request_files(tmp_path: Path) -> None:
    body = tmp_path / "answer.sse"
    body.write_bytes(
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":'
        b'"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    request = tmp_path / "request.json"
    request.write_text('{"model":"claude-x","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]}')
    exchange = from_raw(body, request, protocol="anthropic")
    assert (exchange.protocol, exchange.stream, exchange.status) == ("anthropic", True, 200)
    assert exchange.headers == {"content-type": "text/event-stream"} and len(exchange.chunks) == 2
    assert exchange.request.path == "/v1/messages"
    gemini_request = tmp_path / "gemini.json"
    gemini_request.write_text('{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}')
    with pytest.raises(ImportUsageError, match="keeps the model in the URL: pass --url"):
        from_raw(body, gemini_request, protocol="gemini")
    answer = tmp_path / "gemini-answer.json"
    answer.write_bytes(gzip.decompress(gzip.compress(b'{"candidates":[]}')))
    url = "/v1beta/models/gemini-2.5-flash:generateContent"
    exchange = from_raw(answer, gemini_request, protocol="gemini", url=url, status=200)
    assert exchange.request.path == url and not exchange.stream
