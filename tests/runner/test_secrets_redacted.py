"""No secret reaches anything a run writes (issue 22): a `--sut` that leaks a real-looking key, echoes a
`--sut-header` value and a URL with a password is flagged (a proxy bug), and none of those values, nor the
password of the `--sut` URL itself, is in any trace, summary, JUnit, HTML file or on the terminal."""

from __future__ import annotations

import json
import re
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.checks import LEAK
from harness.record.scrub import mask, redact_text, without_userinfo
from harness.runner.execute import without_secrets
from harness.trace import read_trace_bytes
from harness.trace.model import RunTrace, Wire
from tests.cli.test_gate_failures import _sut_config, conformance
from tests.faults.test_sut import _free_port, serve
from tests.record.test_secrets import KEYS

KEY = "sk-proj-" + "Zq7" * 12
"""A real-looking key that is not the planted one (the system under test's own, say)."""
HEADER_VALUE = "team-token-5f1c9e2a7b"
"""A `--sut-header` value the system under test echoes back."""
ECHOED_PASSWORD = "db-hunter2-pw"
URL_PASSWORD = "sut-url-pw-7781"
SECRETS = (KEY, HEADER_VALUE, ECHOED_PASSWORD, URL_PASSWORD)
CONTENT = re.compile(rb'"content":\s*"')


@contextmanager
def leaking(upstream: str) -> Iterator[int]:
    """A system under test in front of `upstream` that writes secrets into every JSON answer's text."""

    class Leak(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0)) or None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            request = urllib.request.Request(upstream + self.path, body, headers, method=self.command)
            try:
                with urllib.request.urlopen(request, timeout=30) as answer:
                    status, kind, data = answer.status, answer.headers.get("content-type", ""), answer.read()
            except urllib.error.HTTPError as exc:
                status, kind, data = exc.code, exc.headers.get("content-type", ""), exc.read()
            echoed = self.headers.get("x-team-token", "")
            leak = f"key {KEY} header {echoed} db http://bob:{ECHOED_PASSWORD}@db.internal/x ".encode()
            data = CONTENT.sub(lambda m: m.group(0) + leak, data, count=1)
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _forward

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Leak)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        thread.join(10)
        server.server_close()


def test_redact_text_masks_keys_values_and_url_passwords_keeping_lengths() -> None:
    text = f"a {KEY} b {HEADER_VALUE} c http://bob:{ECHOED_PASSWORD}@h/x short=openai"
    clean = redact_text(text, [HEADER_VALUE, "openai"])
    assert len(clean) == len(text)  # the wire offsets of a trace still hold
    assert not any(s in clean for s in SECRETS)
    assert mask(KEY) in clean and "short=openai" in clean  # a short routing word is no secret
    assert without_userinfo(f"http://alice:{URL_PASSWORD}@127.0.0.1:9/v1") == "http://127.0.0.1:9/v1"


def test_a_leaking_sut_is_flagged_and_nothing_written_holds_a_secret(tmp_path: Path) -> None:
    replay = _free_port()
    with serve(_sut_config(tmp_path, replay), _free_port()) as url, leaking(url) as port:
        result = conformance(
            "--sut", f"http://alice:{URL_PASSWORD}@127.0.0.1:{port}", "--replay-port", str(replay),
            "--sut-header", f"x-team-token={HEADER_VALUE}", "--reports", str(tmp_path / "reports"), "--run-id", "r",
            "--scenario", "text-basic", "--frontend", "openai", "--backend", "openai", "--streaming", "nonstream",
        )  # fmt: skip
    assert result.returncode == 1, (result.stdout, result.stderr)
    folder = tmp_path / "reports" / "r"
    summary = (folder / "summary.json").read_text(encoding="utf-8")
    assert "the proxy leaked its upstream key" in summary and f'"sut": "http://127.0.0.1:{port}"' in summary
    trace = read_trace_bytes(next((folder / "cases").glob("*.json.gz"))).decode("utf-8")
    assert mask(KEY) in trace and mask(HEADER_VALUE) in trace  # masked where they were, not dropped
    written = [p for p in (tmp_path / "reports").rglob("*") if p.is_file()]
    assert any(p.suffix == ".html" for p in written) and any(p.parent.name == "cases" for p in written)
    for path in written:
        data = path.read_bytes()
        assert not [s for s in SECRETS if s.encode() in data], path
    assert not [s for s in SECRETS if s in result.stdout + result.stderr]


PLANTED = "PLANTED-TEST-KEY-t0p"


def _trace(frontend: str, error: str | None) -> RunTrace:
    return RunTrace(
        case_id="c",
        role="translated",
        scenario="s",
        client="openai",
        upstream="anthropic",
        mode="translate",
        stream=False,
        wire=Wire(frontend=frontend),
        error=error,
    )


@settings(max_examples=60, deadline=None)
@given(
    (KEYS | st.just(PLANTED)).filter(lambda key: json.dumps(key) == f'"{key}"'),
    st.text(max_size=30),
    st.text(max_size=30),
    st.booleans(),
)
def test_a_key_planted_anywhere_in_a_trace_is_flagged_and_masked(key: str, before: str, after: str, wire: bool) -> None:
    """`without_secrets` (one scan of the whole trace's JSON, `find_secrets` with its gates) finds a key of every
    shape, or the planted one, wherever in a trace it is, fails the run with `secret_leak`, and the trace it gives
    holds the key nowhere. (A key JSON escapes, `Bearer\\t...` or `Bearer\\x85...`, is
    not one the scan of the JSON text, or of each part's `json.dumps`, knows.)"""
    text = f"{before} {key} {after}"
    trace = _trace(text, None) if wire else _trace("", text)
    clean = without_secrets(trace, PLANTED)
    assert clean.status == "failed" and clean.checks[-1].name == LEAK and not clean.checks[-1].passed
    assert key not in clean.model_dump_json()
