"""`conformance decode` run in-process: the project's own cassettes (`body: {json: ...}`, chunk boundaries), every
capture form `harness.capture` reads, a cassette without --interaction listed (never decoded as a body), and a raw
request whose model sits in the URL (--url, or the model said to be unknown)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.capture import load_interactions
from harness.cli import main
from tests.conftest import REPO, corpus_dir

CASSETTES = REPO / "cassettes"
GEMINI_BODY = b'{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}'
BEDROCK_BODY = b'{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{"maxTokens":16}}'


def decode(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """Exit code, parsed stdout (or its text when it is no JSON) and stderr."""
    code = main(["decode", *args])
    out, err = capsys.readouterr()
    try:
        return code, json.loads(out), err
    except json.JSONDecodeError:
        return code, out, err


def test_own_cassette_request_in_the_json_body_form(capsys: pytest.CaptureFixture[str]) -> None:
    """Our cassettes store a JSON request body parsed (`body: {json: ...}`): it decodes as the request it was."""
    path = CASSETTES / "anthropic" / "text-basic.stream.yaml"
    assert "    body:\n      json:\n        model: claude-sonnet-4-5-20250929" in path.read_text(encoding="utf-8")
    code, out, err = decode(capsys, "--protocol", "anthropic", "--kind", "request", str(path), "--interaction", "0")
    assert (code, err) == (0, "")
    request = out["request"]
    assert (request["model"], request["max_tokens"], request["stream"]) == ("claude-sonnet-4-5-20250929", 64, True)
    assert request["messages"] == [
        {"role": "user", "content": [{"kind": "text", "text": "Say hello in one sentence."}]}
    ]


def test_own_cassette_stream_at_its_recorded_chunk_boundaries(capsys: pytest.CaptureFixture[str]) -> None:
    path = CASSETTES / "anthropic" / "text-basic.stream.yaml"
    code, out, err = decode(capsys, "--protocol", "anthropic", "--kind", "stream", str(path), "--interaction", "0")
    assert (code, err) == (0, "")
    assert [e["kind"] for e in out["events"]][:2] == ["message_start", "text_start"]
    assert out["events"][-1]["kind"] == "done"
    response = out["response"]
    assert response["content"] == [{"kind": "text", "text": "Hello! How can I help you today?"}]
    assert (response["stop_reason"]["kind"], response["usage"]["output_tokens"]) == ("end_turn", 9)


def test_own_cassette_json_response_and_recorded_error(capsys: pytest.CaptureFixture[str]) -> None:
    ok = CASSETTES / "gemini" / "text-basic.nonstream.yaml"
    code, out, _ = decode(capsys, "--protocol", "gemini", "--kind", "response", str(ok), "--interaction", "0")
    assert code == 0 and out["response"]["content"] == [{"kind": "text", "text": "Hello! How can I help you today?"}]
    failed = CASSETTES / "openai" / "error-rate-limit-429.nonstream.yaml"
    code, out, _ = decode(capsys, "--protocol", "openai", "--kind", "response", str(failed), "--interaction", "0")
    assert code == 0
    assert (out["error"]["kind"], out["error"]["status"]) == ("throttled", 429)


def test_a_cassette_without_interaction_is_listed_not_decoded(capsys: pytest.CaptureFixture[str]) -> None:
    path = CASSETTES / "anthropic" / "text-basic.stream.yaml"
    code, out, err = decode(capsys, "--protocol", "anthropic", "--kind", "stream", str(path))
    assert code == 2
    (item,) = load_interactions(path)
    sizes = f"{len(item.request.body):>7} B  {len(item.response.body):>7} B"
    assert out.splitlines() == [
        f"{path}: 1 interaction(s)",
        "  #  method  status    request   response  url",
        f"  0  POST       200  {sizes}  http://reference.invalid/anthropic/_s/text-basic/v1/messages",
    ]
    assert err == f"conformance decode: {path} is a cassette: pass --interaction INDEX (0-0) to decode one\n"


@pytest.mark.corpus
def test_a_foreign_cassette_lists_each_interaction(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_dir("gemini") / "json-array-stream-thought-function-call.yaml"
    code, out, err = decode(capsys, "--protocol", "gemini", "--kind", "request", str(path))
    rows = out.splitlines()[2:]
    assert code == 2 and len(rows) == 3 and "(0-2)" in err
    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert all(row.split()[1:3] == ["POST", "200"] and row.endswith(url) for row in rows)


def test_interaction_out_of_range_and_on_a_raw_body_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = CASSETTES / "anthropic" / "text-basic.stream.yaml"
    code, _, err = decode(capsys, "--protocol", "anthropic", "--kind", "stream", str(path), "--interaction", "3")
    assert (code, err) == (2, f"conformance decode: {path}: --interaction 3: the cassette has 1 (0-based)\n")
    raw = tmp_path / "body.json"
    raw.write_bytes(b'{"model":"m","max_tokens":5,"messages":[]}')
    code, _, err = decode(capsys, "--protocol", "anthropic", "--kind", "request", str(raw), "--interaction", "0")
    assert code == 2
    assert err.startswith(f"conformance decode: {raw}: --interaction 0: the file is a raw body, not a cassette")


def test_a_broken_cassette_says_what_is_wrong_with_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cut.yaml"
    path.write_text("version: 1\ninteractions:\n- request: {method: POST}\n", encoding="utf-8")
    code, _, err = decode(capsys, "--protocol", "openai", "--kind", "request", str(path), "--interaction", "0")
    assert code == 1
    assert err.startswith(f"conformance decode: {path}: interaction 0: KeyError('response')")


# -- raw bodies whose model sits in the URL ----------------------------------------------------------------------


def test_raw_gemini_request_without_url_decodes_with_the_model_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = tmp_path / "request.json"
    raw.write_bytes(GEMINI_BODY)
    code, out, err = decode(capsys, "--protocol", "gemini", "--kind", "request", str(raw))
    assert code == 0
    assert out["unknown"] == ["model", "stream"]
    assert (out["request"]["model"], out["request"]["stream"]) == ("UNKNOWN", False)
    assert out["request"]["messages"] == [{"role": "user", "content": [{"kind": "text", "text": "hi"}]}]
    assert err == (
        "conformance decode: gemini keeps the model and whether it streams in the URL: decoded with model UNKNOWN, "
        "not streamed (pass --url to give the URL)\n"
    )


def test_raw_gemini_request_with_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = tmp_path / "request.json"
    raw.write_bytes(GEMINI_BODY)
    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    code, out, err = decode(capsys, "--protocol", "gemini", "--kind", "request", "--url", url, str(raw))
    assert (code, err) == (0, "")
    assert set(out) == {"request"}
    assert (out["request"]["model"], out["request"]["stream"]) == ("gemini-2.5-flash", True)
    assert out["request"]["provider_fields"] == {"gemini": {"json_array_stream": True}}  # no alt=sse in the URL
    code, out, _ = decode(capsys, "--protocol", "gemini", "--kind", "request", "--url", f"{url}?alt=sse", str(raw))
    assert code == 0 and out["request"]["provider_fields"] == {}


def test_raw_request_of_a_protocol_without_frontend_facts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A protocol that declares no frontend yet is asked where its encoder puts the model (the path, here)."""
    raw = tmp_path / "converse.json"
    raw.write_bytes(BEDROCK_BODY)
    code, out, err = decode(capsys, "--protocol", "bedrock", "--kind", "request", str(raw))
    assert (code, out["unknown"], out["request"]["model"]) == (0, ["model", "stream"], "UNKNOWN")
    assert "bedrock keeps the model and whether it streams in the URL" in err
    url = "/model/us.amazon.nova-micro-v1%3A0/converse-stream"
    code, out, err = decode(capsys, "--protocol", "bedrock", "--kind", "request", "--url", url, str(raw))
    assert (code, err) == (0, "")
    assert (out["request"]["model"], out["request"]["stream"], out["request"]["max_tokens"]) == (
        "us.amazon.nova-micro-v1:0",
        True,
        16,
    )


def test_raw_request_with_the_model_in_the_body_needs_no_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = tmp_path / "chat.json"
    raw.write_bytes(b'{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true}')
    code, out, err = decode(capsys, "--protocol", "openai", "--kind", "request", str(raw))
    assert (code, err, set(out)) == (0, "", {"request"})
    assert (out["request"]["model"], out["request"]["stream"]) == ("gpt-4o-mini", True)


def test_url_is_for_raw_requests_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = tmp_path / "response.json"
    raw.write_bytes(b"{}")
    code, _, err = decode(capsys, "--protocol", "gemini", "--kind", "response", "--url", "/v1beta/models/m:x", str(raw))
    assert (code, err) == (2, "conformance decode: --url: only a request is decoded with its URL (--kind request)\n")
    path = CASSETTES / "gemini" / "text-basic.stream.yaml"
    code, _, err = decode(capsys, "--protocol", "gemini", "--kind", "request", "--url", "/x", str(path))
    assert code == 2 and "--url is for a raw body; a cassette records each request's URL" in err


def test_unknown_protocol_suggests_the_nearest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = decode(capsys, "--protocol", "opnai", "--kind", "request", str(tmp_path / "x"))
    assert code == 2
    assert err.startswith("conformance decode: --protocol: unknown protocol 'opnai' (did you mean 'openai'?); known: ")


# -- every capture form `harness.capture` reads ------------------------------------------------------------------

FORMS = [
    # (form, protocol folder, file, protocol, kind, what the decoded output must hold)
    ("vcrpy gzip (!!binary)", "anthropic", "stream-thinking-gzip.yaml", "anthropic", "stream", ("end_turn", 133)),
    ("pydantic-ai parsed_body", "anthropic", "error-400-invalid-request.yaml", "anthropic", "response", 400),
    ("go-vcr v2", "openai_compat", "groq-stream-text-x-groq-usage.yaml", "groq", "stream", ("Olá!", 4)),
    ("httprr chunked", "ollama", "api-chat-stream-local.httprr", "ollama", "stream", ("1, 2, 3, 4, 5\n", 22)),
]


@pytest.mark.corpus
@pytest.mark.parametrize(("form", "folder", "name", "protocol", "kind", "expected"), FORMS, ids=[f[0] for f in FORMS])
def test_every_capture_form_decodes(
    capsys: pytest.CaptureFixture[str], form: str, folder: str, name: str, protocol: str, kind: str, expected: Any
) -> None:
    path = corpus_dir(folder) / name
    code, out, err = decode(capsys, "--protocol", protocol, "--kind", kind, str(path), "--interaction", "0")
    assert (code, err) == (0, ""), form
    if "error" in out:
        assert (out["error"]["status"], out["error"]["kind"]) == (expected, "invalid_request")
        return
    response = out["response"]
    text = "".join(p.get("text", "") for p in response["content"] if p["kind"] == "text")
    if isinstance(expected[0], str) and not expected[0].endswith("turn"):
        assert text.endswith(expected[0])
    else:
        assert response["stop_reason"]["kind"] == expected[0] and text
    assert response["usage"]["output_tokens"] == expected[1]


@pytest.mark.corpus
def test_a_body_stored_decoded_that_keeps_content_encoding_gzip_decodes_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Quirk (issue 25): some recorders store the body decoded and keep `Content-Encoding: gzip`; the decode used
    # to abort. Now it decodes, and says on stderr what it took on trust.
    path = gzip_labelled_capture(tmp_path)
    code, out, err = decode(capsys, "--protocol", "anthropic", "--kind", "stream", str(path), "--interaction", "0")
    assert code == 0
    assert out["response"]["content"] == [{"kind": "text", "text": "4200 + 42 = 4242"}]
    assert out["response"]["stop_reason"]["kind"] == "end_turn"
    assert err == (
        f"conformance decode: note: {path}: interaction 0: the body says Content-Encoding gzip but it has no gzip "
        "header: taken as stored (already decoded by the recorder)\n"
    )


def gzip_labelled_capture(tmp_path: Path) -> Path:
    """The corpus's real Anthropic stream as a recorder that keeps `Content-Encoding: gzip` on the decoded body
    would store it."""
    item = load_interactions(corpus_dir("anthropic") / "stream-text.yaml")[0]
    path = tmp_path / "labelled.yaml"
    interaction = {
        "request": {"method": "POST", "uri": item.url, "body": item.request.body.decode()},
        "response": {
            "status": {"code": 200},
            "headers": {"Content-Type": ["text/event-stream"], "Content-Encoding": ["gzip"]},
            "body": {"string": item.response.body.decode()},
        },
    }
    path.write_text(yaml.safe_dump({"version": 1, "interactions": [interaction]}), encoding="utf-8")
    return path
