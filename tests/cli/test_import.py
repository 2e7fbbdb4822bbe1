"""`conformance import` run in-process: a capture's every interaction imported (or the one named), a raw body with
its request, and every input that cannot become a case (unknown format, interaction out of range, truncated
capture or body, missing request) refused with a message naming the file and why, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.runner.plan import default_frontends
from harness.scenarios import load_scenarios
from tests.conftest import corpus_dir


def run(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> tuple[int, str, str]:
    code = main(["import", *args, "--scenarios", str(tmp_path / "s"), "--cassettes", str(tmp_path / "c")])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.corpus
def test_every_interaction_of_a_capture(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    capture = corpus_dir("openai_chat") / "stream-tool-call-then-text.yaml"
    code, out, err = run(capsys, tmp_path, str(capture), "--backends", "anthropic")
    assert (code, err) == (0, "")
    assert "as stream-tool-call-then-text-0 (openai; expectations: openai SDK)" in out
    assert [s.id for s in load_scenarios(tmp_path / "s")] == [
        "stream-tool-call-then-text-0",
        "stream-tool-call-then-text-1",
    ]
    assert sorted(p.relative_to(tmp_path / "c").as_posix() for p in (tmp_path / "c").rglob("*.yaml")) == [
        "anthropic/stream-tool-call-then-text-0.stream.yaml",
        "anthropic/stream-tool-call-then-text-1.stream.yaml",
        "openai/stream-tool-call-then-text-0.stream.yaml",
        "openai/stream-tool-call-then-text-1.stream.yaml",
    ]


@pytest.mark.corpus
def test_one_interaction_with_an_id(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    capture = corpus_dir("openai_chat") / "stream-tool-call-then-text.yaml"
    code, out, _ = run(capsys, tmp_path, str(capture), "--interaction", "1", "--id", "mine", "--backends", "none")
    assert code == 0 and "#1 as mine" in out and "reference  0 backend(s)" in out
    assert [s.id for s in load_scenarios(tmp_path / "s")] == ["mine"]
    code, _, err = run(capsys, tmp_path, str(capture), "--id", "two")
    assert code == 2 and "has 2 interactions: --id names one, so pass --interaction too" in err
    code, _, err = run(capsys, tmp_path, str(capture), "--interaction", "1", "--id", "mine")
    assert code == 2 and "exists: choose another --id, or --force" in err
    code, _, err = run(capsys, tmp_path, str(capture), "--interaction", "5")
    assert code == 2 and "--interaction 5: the capture has 2" in err


def test_a_raw_body_and_its_request(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    body = tmp_path / "answer.json"
    body.write_text(
        '{"model":"llama3.2","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi."},'
        '"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":2}'
    )
    request = tmp_path / "request.json"
    request.write_text('{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"Hello"}]}')
    code, out, err = run(capsys, tmp_path, str(body), "--request", str(request), "--protocol", "ollama")
    assert (code, err) == (0, "") and "as answer (ollama; expectations: ollama SDK)" in out
    # References for the other frontends' own backends: what their baselines replay.
    frontends = default_frontends()
    assert f"reference  {len(frontends) - 1} backend(s)" in out
    assert sorted(p.parent.name for p in (tmp_path / "c").rglob("*.yaml")) == sorted({*frontends, "ollama"})
    (scenario,) = load_scenarios(tmp_path / "s")
    assert scenario.expect.text_equals == "Hi." and scenario.streaming == ["nonstream"]


def test_usage_errors_and_a_truncated_answer(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    body = tmp_path / "answer.json"
    body.write_text("{not json")
    request = tmp_path / "request.json"
    request.write_text('{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}')
    code, _, err = run(capsys, tmp_path, str(body))
    assert code == 2 and "needs --request" in err
    code, _, err = run(capsys, tmp_path, str(body), "--request", str(request), "--protocol", "nope")
    assert code == 2 and "unknown protocol" in err.lower()
    code, _, err = run(capsys, tmp_path, str(body), "--request", str(request), "--protocol", "anthropic")
    assert code == 2 and "the anthropic decoder cannot read the answer" in err
    code, _, err = run(capsys, tmp_path, str(tmp_path / "missing.yaml"))
    assert code == 2 and "cannot read" in err
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").iterdir())


def nothing_written(tmp_path: Path) -> bool:
    return not any(p.is_file() for p in tmp_path.glob("[sc]/**/*"))


def test_an_unknown_format_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    other = tmp_path / "notes.yaml"
    other.write_text("foo: bar\n")
    code, _, err = run(capsys, tmp_path, str(other), "--interaction", "0")
    assert (
        code == 2
        and f"{other} is no capture (vcrpy, go-vcr v2, httprr, a harness cassette); as a raw response body it needs"
        in err
    )
    code, _, err = run(capsys, tmp_path, str(other), "--request", str(other), "--protocol", "anthropic")
    assert code == 2 and "the anthropic decoder cannot read the request" in err
    assert nothing_written(tmp_path)


@pytest.mark.corpus
def test_a_truncated_capture_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cut = tmp_path / "cut.yaml"
    cut.write_bytes((corpus_dir("anthropic") / "stream-text.yaml").read_bytes()[:2000])
    code, _, err = run(capsys, tmp_path, str(cut))
    assert code == 2 and f"{cut}: not a YAML cassette" in err and "unexpected end of stream" in err
    cut_httprr = tmp_path / "cut.httprr"
    cut_httprr.write_bytes((corpus_dir("ollama") / "api-chat-stream-local.httprr").read_bytes()[:1500])
    code, _, err = run(capsys, tmp_path, str(cut_httprr))
    assert code == 2 and "is shorter than its header says" in err
    assert nothing_written(tmp_path)


@pytest.mark.corpus
def test_an_interaction_without_its_request_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    doc = yaml.safe_load((corpus_dir("anthropic") / "nonstream-text.yaml").read_text(encoding="utf-8"))
    del doc["interactions"][0]["request"]
    capture = tmp_path / "no-request.yaml"
    capture.write_text(yaml.safe_dump(doc), encoding="utf-8")
    code, _, err = run(capsys, tmp_path, str(capture))
    assert code == 2 and "interaction 0: KeyError('request'): the interaction has no 'request'" in err
    body = tmp_path / "answer.json"
    body.write_text('{"id":"msg_1"}')
    code, _, err = run(capsys, tmp_path, str(body), "--protocol", "anthropic", "--request", str(tmp_path / "gone"))
    assert code == 2 and "gone: cannot read: No such file or directory" in err
    assert nothing_written(tmp_path)


CUT_STREAM = (
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",'
    '"model":"c","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}'
    '\n\nevent: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text",'
    '"text":""}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":'
    '"text_delta","text":"Hel'
)


def test_a_stream_that_stops_before_its_end_needs_truncated(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    body = tmp_path / "cut.sse"
    body.write_text(CUT_STREAM)
    request = tmp_path / "request.json"
    request.write_text('{"model":"c","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}')
    args = (str(body), "--request", str(request), "--protocol", "anthropic", "--backends", "none")
    code, _, err = run(capsys, tmp_path, *args)
    assert code == 2 and "cut.sse: the recorded stream stops before its end" in err and "--truncated" in err
    assert nothing_written(tmp_path)
    code, out, err = run(capsys, tmp_path, *args, "--truncated")
    assert (code, err) == (0, "") and "as cut (anthropic" in out
    (scenario,) = load_scenarios(tmp_path / "s")
    assert scenario.reply.kind == "ok" and scenario.reply.truncate_after == 3
    assert scenario.expect.error is not None and scenario.expect.error.kind == ["malformed_stream", "server"]


@pytest.mark.corpus
def test_an_imported_case_runs_through_the_built_in_proxy(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # The documented way: import into a folder, then `conformance run` on that folder; the anthropic backend replays
    # the real answer, the other frontends' baselines replay their reference cassettes.
    capture = corpus_dir("anthropic") / "stream-parallel-tool-use.yaml"
    code, out, err = run(
        capsys, tmp_path, str(capture), "--interaction", "0", "--id", "real-tools", "--backends", "openai,gemini"
    )
    assert (code, err) == (0, "") and "reference  2 backend(s)" in out
    reports = tmp_path / "r"
    args = ["--no-packaged", "--scenarios", str(tmp_path / "s"), "--cassettes", str(tmp_path / "c")]
    args += ["--reports", str(reports)]
    args += ["--backend", "anthropic", "--frontend", "anthropic,openai,gemini", "--run-id", "x", "-q"]
    code = main(["run", *args])
    assert code == 0
    summary = json.loads((reports / "x" / "summary.json").read_text(encoding="utf-8"))
    assert (summary["scenarios"], summary["backends"], summary["total"]) == (["real-tools"], ["anthropic"], 3)
    assert summary["counts"]["pass"] == 3


def test_nested_tool_arguments_are_one_line_and_nothing_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 22: tool arguments nested thousands deep ended `conformance import` in a RecursionError traceback.

    arguments = '{"a": ' + "[" * 3000 + "]" * 3000 + "}"
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    answer = {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    request = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "tools": [tool]}
    (tmp_path / "answer.json").write_text(json.dumps(answer))
    (tmp_path / "request.json").write_text(json.dumps(request))
    out = tmp_path / "out"
    code = main(
        [
            "import", str(tmp_path / "answer.json"), "--request", str(tmp_path / "request.json"),
            "--protocol", "openai", "--scenarios", str(out / "s"), "--cassettes", str(out / "c"), "--id", "deep",
        ]
    )  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == [f"conformance import: {tmp_path / 'answer.json'}: the exchange nests too deeply to import "
                   "(JSON thousands of levels deep)"]  # fmt: skip
    assert not list(out.rglob("*.yaml"))


@pytest.mark.corpus
def test_a_body_stored_decoded_that_keeps_content_encoding_gzip_imports_with_a_note(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tests.cli.test_decode import gzip_labelled_capture

    code, out, err = run(capsys, tmp_path, str(gzip_labelled_capture(tmp_path)), "--backends", "none")
    assert (code, err) == (0, "")
    assert "note: the body says Content-Encoding gzip but it has no gzip header: taken as stored" in out
    [scenario] = load_scenarios(tmp_path / "s")
    assert scenario.expect.text_equals == "4200 + 42 = 4242"
    assert "taken as stored (already decoded by the recorder)" in scenario.description
