"""The gate never passes on a harness failure, and a client crash is not one.

- a missing or unreadable cassette, an exception in the harness's own code: `harness_error`, exit code 2, and no
  known-failures entry can hold it;
- the SDK raising something that is not its API error on the bytes the proxy sent: a response-side proxy bug that
  says the client crashed and names the event it choked on, with the raw wire kept on both sides;
- a request-side verdict names the response side's failures too;
- the SDK's per-request timeout is an option.
"""

from __future__ import annotations

import dataclasses
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness import ir
from harness.drivers import openai_sdk
from harness.proxy import TranslateHooks
from harness.runner import execute
from harness.runner.engine import CaseRunner, Engine
from harness.runner.known import KnownFileError, load_known
from harness.runner.names import MatrixNameError
from harness.runner.plan import MatrixOptions
from harness.scenarios import load_scenarios
from harness.trace import Run
from harness.trace.model import CaseResult, RunTrace, Verdict
from tests.conftest import REPO


def options(tmp_path: Path, **kw: object) -> MatrixOptions:
    base = MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        reports=tmp_path / "reports",
        frontends=["openai"],
        backends=["openai"],
        only=["text-basic"],
        known=tmp_path / "known.toml",
        run_id="t",
    )
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def run(opts: MatrixOptions) -> tuple[int, list[CaseResult]]:
    engine = Engine(opts)
    finished = engine.run()
    return finished.exit_code, engine.results


def by_id(results: list[CaseResult]) -> dict[str, CaseResult]:
    return {r.case_id: r for r in results}


def test_a_missing_cassette_is_a_harness_error_and_exit_2(tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    shutil.copytree(REPO / "cassettes" / "openai", cassettes / "openai")
    (cassettes / "openai" / "text-basic.stream.yaml").unlink()
    code, results = run(options(tmp_path, cassettes=cassettes))
    assert code == 2
    case = by_id(results)["text-basic[openai->openai,stream]"]
    assert case.verdict is Verdict.HARNESS_ERROR
    assert (
        "missing cassette" in case.reason and "conformance record --backend openai --scenario text-basic" in case.reason
    )
    assert by_id(results)["text-basic[openai->openai,nonstream]"].verdict is Verdict.PASS


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("interactions: [unclosed\n", "line 2, column 1"),
        ("interactions: []\n", "holds no interaction"),
        ("", "ValueError"),
    ],
)
def test_an_unreadable_cassette_is_a_harness_error_naming_it(tmp_path: Path, content: str, why: str) -> None:
    cassettes = tmp_path / "cassettes"
    shutil.copytree(REPO / "cassettes" / "openai", cassettes / "openai")
    broken = cassettes / "openai" / "text-basic.nonstream.yaml"
    broken.write_text(content, encoding="utf-8")
    code, results = run(options(tmp_path, cassettes=cassettes, streams=(False,)))
    assert code == 2
    (case,) = results
    assert case.verdict is Verdict.HARNESS_ERROR
    assert f"unreadable cassette {broken}" in case.reason and "conformance record --backend openai" in case.reason
    assert why in case.reason or (why == "ValueError" and "not a cassette" in case.reason)


def test_a_crash_in_the_harness_own_code_is_a_harness_error_naming_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(response: object) -> ir.Response:
        raise TypeError("driver mapping broke")

    monkeypatch.setattr(openai_sdk, "response_to_ir", broken)
    code, results = run(options(tmp_path, streams=(False,)))
    assert code == 2
    (case,) = results
    assert case.verdict is Verdict.HARNESS_ERROR
    assert "harness bug: TypeError: driver mapping broke" in case.reason
    assert "harness/drivers/openai_sdk.py" in case.reason


def test_a_crash_after_the_run_is_a_harness_error_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> list[object]:
        raise KeyError("checks broke")

    monkeypatch.setattr(execute, "_checks", broken)
    code, results = run(options(tmp_path, streams=(False,)))
    assert code == 2 and results[0].verdict is Verdict.HARNESS_ERROR
    assert "harness bug: KeyError" in results[0].reason and "harness/runner/execute.py" in results[0].reason


# LiteLLM's Gemini frontend (A6): a mid-stream error in OpenAI's shape with a *string* code; google-genai compares
# it with an int and raises TypeError: not its API error, a crash on the proxy's bytes.
STRING_CODE_ERROR = (
    b'data: {"error": {"code": "500", "message": "litellm.MidStreamFallbackError", "status": null}}\r\n\r\n'
)


def test_a_client_crash_on_the_proxy_output_is_a_proxy_bug_naming_the_event(tmp_path: Path) -> None:
    hooks = TranslateHooks(on_frontend_end=lambda: STRING_CODE_ERROR)
    opts = options(tmp_path, hooks=hooks, frontends=["gemini"], streams=(True,))
    code, results = run(opts)
    assert code == 1
    (case,) = results
    assert case.verdict is Verdict.PROXY_BUG_RESPONSE
    assert case.reason.startswith("the gemini SDK crashed on the proxy's output: TypeError: ")
    assert "'<=' not supported" in case.reason and "litellm.MidStreamFallbackError" in case.reason
    translated = case.runs["translated"]
    assert translated.status == "failed" and translated.sdk.crash and translated.sdk.exception == "TypeError"
    # The raw wire is kept on both sides, so the reader can tell who was at fault.
    assert "litellm.MidStreamFallbackError" in translated.wire.frontend and translated.wire.upstream
    crash = next(c for c in translated.checks if c.name == "client_crash")
    assert "event" in str(crash.actual)


def test_a_request_side_verdict_names_the_response_side_failures_too(tmp_path: Path) -> None:
    def corrupt(event: ir.StreamEvent) -> tuple[ir.StreamEvent, ...]:
        if isinstance(event, ir.TextDelta):
            return (event.model_copy(update={"text": event.text.upper()}),)
        return (event,)

    hooks = TranslateHooks(
        on_upstream_request=lambda r: r.model_copy(update={"max_tokens": 7}), on_upstream_event=corrupt
    )
    code, results = run(options(tmp_path, hooks=hooks, streams=(True,), frontends=["anthropic"]))
    assert code == 1
    (case,) = results
    assert case.verdict is Verdict.PROXY_BUG_REQUEST
    assert "request.max_tokens" in case.reason
    assert "the response side fails too" in case.reason and "text_equals" in case.reason
    assert case.request_divergences and case.response_divergences


def test_a_harness_error_cannot_be_a_known_failure(tmp_path: Path) -> None:
    known = tmp_path / "known.toml"
    entry = 'id = "text-basic[openai->openai,stream]"\nverdict = "harness_error"\nreason = "flaky"\n'
    known.write_text(f"[[case]]\n{entry}", encoding="utf-8")
    with pytest.raises(KnownFileError, match="verdict: 'harness_error' is not allowed; allowed: proxy_bug_request"):
        load_known(known)


def test_a_known_proxy_bug_that_became_a_harness_error_is_neither_known_nor_fixed(tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    shutil.copytree(REPO / "cassettes" / "openai", cassettes / "openai")
    (cassettes / "openai" / "text-basic.stream.yaml").unlink()
    known = tmp_path / "known.toml"
    case_id = "text-basic[openai->openai,stream]"
    known.write_text(f'[[case]]\nid = "{case_id}"\nverdict = "proxy_bug_response"\nreason = "r"\n', encoding="utf-8")
    finished = Engine(options(tmp_path, cassettes=cassettes, known=known)).run()
    assert finished.exit_code == 2 and finished.harness_errors == [case_id] and finished.fixed == []


def test_a_frontend_without_an_sdk_driver_cannot_be_planned(tmp_path: Path) -> None:
    with pytest.raises(MatrixNameError, match="frontend 'groq': a backend-only profile"):
        Engine(options(tmp_path, frontends=["groq"]))


def test_the_sdk_timeout_is_an_option(tmp_path: Path) -> None:
    runner = Engine(options(tmp_path, timeout=7.5))
    cases = runner.case_runner()
    try:
        client = cases.env.client("k", "openai")
        assert client.timeout.read == 7.5 and client.timeout.connect == 7.5
    finally:
        cases.close()


class _Mute(BaseHTTPRequestHandler):
    """Answers the preflight's GET, then hangs on every POST (longer than the run's --timeout) or drops it."""

    hang = True

    def do_GET(self) -> None:
        self.send_response(404)
        self.end_headers()

    def do_POST(self) -> None:
        if self.hang:
            time.sleep(3)
        self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(("hang", "words"), [(True, "timeout"), (False, "connection")])
def test_a_sut_that_stops_answering_is_a_harness_error_with_the_sdk_text(
    tmp_path: Path, hang: bool, words: str
) -> None:
    handler = type("Handler", (_Mute,), {"hang": hang})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        opts = options(tmp_path, sut=url, replay_port=0, timeout=1.0, streams=(False,))
        code, results = run(opts)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert code == 2
    (case,) = results
    assert case.verdict is Verdict.HARNESS_ERROR
    assert f"no answer from {url} ({words}: " in case.reason
    if hang:
        assert "timed out" in case.reason.lower()


def test_events_no_client_can_build_a_message_from_are_a_client_crash_not_a_harness_bug(tmp_path: Path) -> None:
    from harness.faults.catalog import by_name

    # A content_block_delta for a block never started: the driver cannot build a message (neither can the
    # Anthropic SDK's own accumulator); the proxy's output is at fault, and the reason shows the very event.
    fault = by_name("delta-without-block-start")
    code, results = run(options(tmp_path, hooks=fault.hooks, frontends=["anthropic"], streams=(True,)))
    assert code == 1
    (case,) = results
    assert case.verdict is Verdict.PROXY_BUG_RESPONSE
    assert case.reason.startswith("the anthropic SDK crashed on the proxy's output: ImpossibleStream: ")
    assert '"type":"content_block_delta","index":0' in case.reason


def test_a_cassette_its_own_sdk_crashes_on_is_a_harness_error_naming_it(tmp_path: Path) -> None:
    # Issue 22: bytes that reach the backend's own SDK exactly as the cassette stores them and crash it are the
    # recording's fault, not the proxy's (runner/crash.py: recording_at_fault).
    import yaml

    cassettes = tmp_path / "cassettes"
    shutil.copytree(REPO / "cassettes", cassettes)
    path = cassettes / "gemini" / "text-basic.stream.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    response = doc["interactions"][0]["response"]
    body = response["body"]["string"] + STRING_CODE_ERROR.decode()
    response["body"] = {"string": body}
    response["headers"]["content-length"] = [str(len(body.encode()))]
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    opts = options(tmp_path, cassettes=cassettes, frontends=["openai"], backends=["gemini"], streams=(True,))
    code, results = run(opts)
    assert code == 2
    (case,) = results
    assert case.verdict is Verdict.HARNESS_ERROR
    assert "the recording is unreadable by its own SDK" in case.reason
    assert "cassette gemini/text-basic.stream.yaml" in case.reason and "TypeError" in case.reason


def test_a_gzip_stored_cassette_is_served_decoded_and_judged(tmp_path: Path) -> None:
    # Issue 22: the replay dropped `Content-Encoding: gzip` but served the compressed bytes, which the backend's
    # own SDK could not read (a false verdict). It now serves the body decoded, cut at its events.
    import base64
    import gzip

    import yaml

    cassettes = tmp_path / "cassettes"
    shutil.copytree(REPO / "cassettes", cassettes)
    path = cassettes / "gemini" / "text-basic.stream.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    response = doc["interactions"][0]["response"]
    body = gzip.compress(response["body"]["string"].encode())
    response["body"] = {"base64": base64.b64encode(body).decode()}
    response["headers"]["content-encoding"] = ["gzip"]
    response["headers"]["content-length"] = [str(len(body))]
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    opts = options(tmp_path, cassettes=cassettes, frontends=["openai"], backends=["gemini"], streams=(True,))
    code, results = run(opts)
    assert (code, [r.verdict for r in results]) == (0, [Verdict.PASS])


class _RefusesStreams(_Mute):
    """A gateway that forwards a non-streamed call to the replay server and refuses a streamed one itself after
    sending its headers: HTTP 200, then the connection closes with no byte of body (MLflow AI Gateway refusing
    temperature with top_p for Anthropic)."""

    replay = ""

    def do_POST(self) -> None:
        import json
        import urllib.request

        body = self.rfile.read(int(self.headers["content-length"]))
        if json.loads(body).get("stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self.close_connection = True
            return
        upstream = f"{self.replay}/openai/_s/text-basic/v1/chat/completions"
        request = urllib.request.Request(upstream, body, {"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            data = answer.read()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_an_empty_200_while_other_calls_get_through_is_the_proxy_refusing_not_another_server(tmp_path: Path) -> None:
    """Quirk: a 2xx with no body and nothing at the replay server was read as another server answering in the
    replay server's place (a harness error); the gateway had refused the request itself, after its headers."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        replay_port = probe.getsockname()[1]
    handler = type("Handler", (_RefusesStreams,), {"replay": f"http://127.0.0.1:{replay_port}"})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        opts = options(tmp_path, sut=f"http://127.0.0.1:{server.server_address[1]}", replay_port=replay_port, jobs=1)
        _, results = run(opts)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    stream = by_id(results)["text-basic[openai->openai,stream]"]
    assert stream.verdict is Verdict.PROXY_BUG_REQUEST
    assert stream.reason.startswith("the proxy answered this request itself, though other requests to openai got")
    assert "HTTP 200 (), and nothing reached" in stream.reason
    assert by_id(results)["text-basic[openai->openai,nonstream]"].verdict is not Verdict.HARNESS_ERROR


def test_a_recording_the_replayer_holds_is_not_looked_for_again(tmp_path: Path) -> None:
    """Once a run has loaded a recording (`Replayer.loaded`), a later run of it is served from memory: its file is
    neither looked for again nor needed, and its trace is the one a runner that finds the file makes."""
    cassettes = tmp_path / "cassettes"
    shutil.copytree(REPO / "cassettes" / "openai", cassettes / "openai")
    opts = options(tmp_path, cassettes=cassettes, steady=True)
    scenarios = load_scenarios(REPO / "scenarios")
    first = Run("baseline_backend", "openai", "openai", "text-basic", True)
    later = Run("translated", "openai", "openai", "text-basic", True)
    expected = CaseRunner(opts, scenarios, ["openai"])
    runner = CaseRunner(opts, scenarios, ["openai"])
    try:
        expected.run_here({first: "c", later: "c"}, None)
        runner.run_here({first: "c"}, None)
        (cassettes / "openai" / "text-basic.stream.yaml").unlink()
        runner.run_here({later: "c"}, None)
        traces = [t for t in (runner.traces[later], expected.traces[later]) if isinstance(t, RunTrace)]
        assert len(traces) == 2 and traces[0].status == "ok"
        assert traces[0].model_dump(exclude={"timings"}) == traces[1].model_dump(exclude={"timings"})
        missing = CaseRunner(opts, scenarios, ["openai"])._one(later, "c")  # a runner that never loaded it
        assert missing.status == "error" and missing.error is not None and "missing cassette" in missing.error
    finally:
        for each in (expected, runner):
            each.close()
