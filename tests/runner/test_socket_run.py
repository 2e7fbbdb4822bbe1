"""Cases over the Responses frontend's WebSocket mode (`Case.transport == "ws"`), end to end through the built-in
proxy: planned beside the HTTP cases without touching their ids, judged on the frames the proxy sent (kept with
their boundaries in the trace), a fault in those frames caught, a refused upgrade never a pass."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness import ir
from harness.drivers.base import SocketRefused
from harness.faults.catalog import portable_hooks
from harness.rig import Session
from harness.runner.engine import Engine
from harness.runner.execute import Unsupported, _socket_call
from harness.runner.plan import MatrixOptions, plan
from harness.runner.socket_run import as_sse
from harness.scenarios.loader import load_scenarios
from harness.trace import Run
from harness.trace.model import CaseResult
from tests.conftest import REPO


def options(tmp_path: Path, **kw: object) -> MatrixOptions:
    base = MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        reports=tmp_path / "reports",
        frontends=["responses"],
        backends=["anthropic"],
        only=["text-basic"],
        transports=("ws",),
        known=tmp_path / "known.toml",
        run_id="t",
        keep_traces="all",
    )
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def run(opts: MatrixOptions) -> tuple[int, list[CaseResult]]:
    engine = Engine(opts)
    return engine.run().exit_code, engine.results


def test_ws_cases_are_added_beside_the_http_ones_with_their_ids_unchanged(tmp_path: Path) -> None:
    both = plan(options(tmp_path, frontends=["responses", "openai"], transports=("http", "ws")))
    http = plan(options(tmp_path, frontends=["responses", "openai"], transports=("http",)))
    ids = [c.case_id for c in both.cases]
    assert [c.case_id for c in http.cases] == [i for i in ids if not i.endswith(",ws]")]
    # only the frontend with a WebSocket mode, only streamed
    assert [i for i in ids if i.endswith(",ws]")] == ["text-basic[responses->anthropic,stream,ws]"]
    ws = next(c for c in both.cases if c.transport == "ws")
    runs = {run.role: run for run in both.runs if run.scenario == "text-basic"}
    assert ws.runs("anthropic")["baseline_backend"].transport == "http"  # the backend's baseline is shared
    assert {r.transport for r in runs.values()} >= {"http"}


def test_a_ws_case_through_the_built_in_proxy_passes_on_its_frames(tmp_path: Path) -> None:
    code, results = run(options(tmp_path))
    assert code == 0
    [result] = results
    assert result.case_id == "text-basic[responses->anthropic,stream,ws]" and result.transport == "ws"
    assert result.verdict == "pass", result.reason
    translated = result.runs["translated"]
    assert translated.transport == "ws"
    wire = translated.wire
    # The frames are the frontend wire: one chunk per frame, each one `data:` block, nothing added.
    blocks = [b for b in wire.frontend.split("\n\n") if b]
    assert wire.frontend_chunks == len(blocks) == len(wire.frontend_offsets) > 3
    events = [json.loads(b.removeprefix("data: ")) for b in blocks]
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert "event:" not in wire.frontend
    judged = {c.name for c in translated.checks}
    assert {"frontend_wire", "answer.spec"} <= judged
    assert all(c.passed for c in translated.checks)
    assert translated.frontend_request is not None and translated.upstream_request is not None


def test_frames_missing_their_sequence_numbers_are_caught(tmp_path: Path) -> None:
    code, results = run(options(tmp_path, hooks=portable_hooks("responses-sequence-number-missing")))
    [result] = results
    assert code == 1 and result.verdict.startswith("proxy_bug"), result.reason
    failed = [c for c in result.runs["translated"].checks if not c.passed]
    assert any(c.name == "frontend_wire" and "sequence_number" in json.dumps(c.actual) for c in failed), failed


def test_a_turn_whose_response_completed_is_dropped_is_caught_not_hung(tmp_path: Path) -> None:
    # The proxy closes the connection when the turn's stream ends without its terminal event: the client sees the
    # stream end, as over HTTP (and never waits for an event that does not come).
    code, results = run(options(tmp_path, hooks=portable_hooks("responses-completed-missing"), timeout=5.0))
    [result] = results
    assert code == 1 and result.verdict.startswith("proxy_bug"), result.reason
    translated = result.runs["translated"]
    last = (translated.sdk.events or [])[-1]
    assert isinstance(last, ir.ErrorEvent) and last.error.kind == "malformed_stream"
    assert "response.completed" in last.error.message
    assert translated.timings.total_ms < 5000


def test_a_frame_is_one_data_block_and_a_line_break_in_it_stays_one_event() -> None:
    assert as_sse(b'{"a":1}') == b'data: {"a":1}\n\n'
    assert as_sse(b"x\ny") == b"data: x\ndata: y\n\n"


class _Refusing:
    """A driver whose upgrade is answered HTTP 403."""

    name = "responses"
    capabilities = socket_capabilities = frozenset()

    def run_socket(self, request: object, **kw: object) -> None:
        raise SocketRefused(403, b"forbidden")


def test_a_system_under_test_refusing_the_upgrade_is_unsupported_and_the_built_in_proxy_is_an_error() -> None:
    scenario = next(s for s in load_scenarios(REPO / "scenarios") if s.id == "text-basic")
    ws = Run("translated", "responses", "anthropic", "text-basic", True, "ws")
    request = scenario.request_for(ws.route, stream=True)
    external = Session("http://127.0.0.1:9", None, replay_url="http://127.0.0.1:8")
    with pytest.raises(Unsupported, match="does not serve WebSocket mode: the WebSocket upgrade was answered HTTP 403"):
        _socket_call(_Refusing(), ws, request, external, 1.0)  # type: ignore[arg-type]
    outcome = _socket_call(_Refusing(), ws, request, Session("http://127.0.0.1:9", None), 1.0)  # type: ignore[arg-type]
    assert outcome.refused is not None and "HTTP 403" in outcome.refused


def test_a_refused_turn_over_websocket_is_judged_like_the_http_error(tmp_path: Path) -> None:
    """An upstream 429 over WebSocket mode: the proxy's `error` event (the SDK's `ResponseWsError`: `status`,
    nested `error`, the Retry-After in `error.headers`) is judged as the HTTP run's error is (kind, status,
    exception, Retry-After, the published schema of the event), no longer declared unsupported."""
    code, results = run(options(tmp_path, only=["error-rate-limit-429"]))
    [result] = results
    assert code == 0 and result.verdict == "pass", result.reason
    translated = result.runs["translated"]
    judged = {c.name for c in translated.checks}
    assert {"error.kind", "error.status", "error.retry_after", "answer.spec"} <= judged
    assert all(c.passed for c in translated.checks)
    assert translated.sdk.error is not None and translated.sdk.error.retry_after == 7.0
    assert not translated.deviations, translated.deviations  # no HTTP-stream rule misreads the frame


def test_a_retry_after_dropped_over_websocket_is_caught(tmp_path: Path) -> None:
    code, results = run(options(tmp_path, only=["error-rate-limit-429"], hooks=portable_hooks("retry-after-dropped")))
    [result] = results
    assert code == 1 and result.verdict.startswith("proxy_bug"), result.reason
    failed = {c.name for c in result.runs["translated"].checks if not c.passed}
    assert "error.retry_after" in failed, failed
