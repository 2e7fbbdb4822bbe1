"""Faults of an external system under test are proxy bugs with the bytes kept, not harness errors (issue 22).

A real HTTP server on 127.0.0.1 plays the system under test: it forwards each request to the replay server (the
run's upstream, from a `--sut-header`), reads the answer in full, and then misbehaves towards the client.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest

from harness.rig.sut_client import SutClient, SutHeader
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions
from harness.trace.model import CaseResult, Verdict
from tests.conftest import REPO

UPSTREAM = "x-test-upstream"
STOP = threading.Event()


class _Faulty(BaseHTTPRequestHandler):
    """Forwards a POST to the replay server, then answers the client as `mode` says."""

    mode = "faithful"
    answered = 0
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    def _forward(self) -> httpx2.Response:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        url = self.headers[UPSTREAM] + self.path
        if self.mode == "unknown-field":  # a field the OpenAI API answers 400 to, added on the way upstream
            body = body.replace(b"{", b'{"surprise_field": 1, ', 1)
        headers = {"content-type": "application/json", "authorization": self.headers.get("authorization", "")}
        with httpx2.Client(timeout=10) as client:
            return client.post(url, content=body, headers=headers)

    def _send(self, status: int, content_type: str, body: bytes, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body) if length is None else length))
        self.end_headers()

    def do_POST(self) -> None:
        upstream = self._forward()
        type(self).answered += 1
        content_type = upstream.headers.get("content-type", "application/json")
        body = upstream.content
        self.close_connection = True
        if self.mode == "html":
            page = b"<html><body>Bad gateway, but 200</body></html>"
            self._send(200, "text/html", page)
            self.wfile.write(page)
        elif self.mode == "text-plain":  # the right bytes under the wrong media type
            self._send(upstream.status_code, "text/plain", body)
            self.wfile.write(body)
        elif self.mode == "cut":  # half the answer, then the connection closes
            self._send(200, content_type, body)
            self.wfile.write(body[: len(body) // 2])
        elif self.mode == "trickle":  # one byte at a time, each gap well within --timeout
            self._send(200, content_type, body)
            for byte in _bytes(body):
                self.wfile.write(byte)
                self.wfile.flush()
                time.sleep(0.2)
        else:
            self._send(upstream.status_code, content_type, body)
            self.wfile.write(body)
            if self.mode == "dies":  # answers one run in full, then the process is gone
                threading.Thread(target=self.server.shutdown, daemon=True).start()

    def log_message(self, *args: object) -> None:
        pass


def _bytes(body: bytes) -> Iterator[bytes]:
    for i in range(len(body)):
        if STOP.is_set():
            return
        yield body[i : i + 1]


def _run(tmp_path: Path, mode: str, streams: tuple[bool, ...], timeout: float = 5.0) -> tuple[int, list[CaseResult]]:
    handler = type("Handler", (_Faulty,), {"mode": mode, "answered": 0})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    STOP.clear()
    options = MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        reports=tmp_path / "reports",
        frontends=["openai"],
        backends=["openai"],
        only=["text-basic"],
        known=tmp_path / "known.toml",
        run_id="t",
        sut=f"http://127.0.0.1:{server.server_address[1]}",
        replay_port=0,
        sut_client=SutClient(headers=(SutHeader(UPSTREAM, "{upstream}"),)),
        timeout=timeout,
        streams=streams,
    )
    try:
        engine = Engine(options)
        code = engine.run().exit_code
    finally:
        STOP.set()
        server.shutdown()
        server.server_close()
        thread.join(10)
    return code, engine.results


def test_a_faithful_sut_passes(tmp_path: Path) -> None:
    code, results = _run(tmp_path, "faithful", (True, False))
    assert code == 0, [(r.case_id, r.verdict, r.reason) for r in results]
    assert {r.verdict for r in results} == {Verdict.PASS}


@pytest.mark.parametrize("stream", [True, False])
def test_a_200_html_answer_is_a_proxy_bug_with_the_bytes_kept(tmp_path: Path, stream: bool) -> None:
    code, results = _run(tmp_path, "html", (stream,))
    (case,) = results
    assert code == 1, case.reason
    assert case.verdict is Verdict.PROXY_BUG_RESPONSE, case.reason
    assert "harness" not in case.reason
    assert "Bad gateway, but 200" in case.runs["translated"].wire.frontend  # the bytes are kept


@pytest.mark.parametrize("stream", [True, False])
def test_a_cut_answer_is_a_proxy_bug(tmp_path: Path, stream: bool) -> None:
    code, results = _run(tmp_path, "cut", (stream,))
    (case,) = results
    assert code == 1, case.reason
    assert case.verdict is Verdict.PROXY_BUG_RESPONSE, case.reason
    assert "harness" not in case.reason


def test_a_sut_that_trickles_its_answer_meets_the_runs_deadline_and_is_a_response_bug(tmp_path: Path) -> None:
    # --timeout 1 bounds each gap between bytes (0.2 s here); the run's deadline (4 x --timeout) ends it.
    started = time.monotonic()
    code, results = _run(tmp_path, "trickle", (True,), timeout=1.0)
    elapsed = time.monotonic() - started
    (case,) = results
    assert code == 1, case.reason
    assert case.verdict is Verdict.PROXY_BUG_RESPONSE, case.reason
    assert elapsed < 30
    translated = case.runs["translated"]
    assert translated.upstream_status == 200 and translated.wire.frontend  # what did arrive is kept


def test_a_sut_that_dies_mid_run_is_a_proxy_bug_not_a_harness_error(tmp_path: Path) -> None:
    code, results = _run(tmp_path, "dies", (True, False), timeout=1.0)
    verdicts = sorted((r.verdict.value, r.reason[:200]) for r in results)
    assert code == 1, verdicts
    assert [v for v, _ in verdicts].count(Verdict.PASS.value) == 1, verdicts
    assert Verdict.HARNESS_ERROR.value not in [v for v, _ in verdicts], verdicts


def test_a_field_the_backend_rejects_sent_upstream_by_a_sut_is_a_request_bug(tmp_path: Path) -> None:
    # The replay server keeps the raw request it got, so the raw-field checks judge an external proxy too.
    code, results = _run(tmp_path, "unknown-field", (False,))
    (case,) = results
    assert code == 1, case.reason
    assert case.verdict is Verdict.PROXY_BUG_REQUEST, case.reason
    failed = {c.name: c.actual for c in case.runs["translated"].checks if not c.passed}
    assert failed["upstream.unknown_fields"] == ["surprise_field"]


def test_the_answers_media_type_from_a_sut_is_judged(tmp_path: Path) -> None:
    code, results = _run(tmp_path, "text-plain", (False,))
    (case,) = results
    assert code == 1, case.reason
    failed = {c.name: c.actual for c in case.runs["translated"].checks if not c.passed}
    assert failed["answer.content_type"] == "text/plain"
