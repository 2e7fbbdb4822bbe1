"""A `--sut` run's time to first token and stream timeline, measured at the client (issue 23, item 7): a real run
against `conformance serve` (the built-in proxy over HTTP on 127.0.0.1, ephemeral ports) leaves them in the trace
as the built-in proxy's runs do, and the report draws them."""

from __future__ import annotations

import asyncio

import pytest

from harness.cli import main
from harness.protocols import registry
from harness.report.html import first_tokens
from harness.report.model import Collector
from harness.report.timeline import first_token_ms, timeline
from harness.rig import PLANTED_KEY_ENV
from harness.rig.sut_timing import SendTimes, clock, first_content, sends
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions
from harness.trace.model import CaseResult
from tests.conftest import REPO
from tests.faults.test_sut import PLANTED, _free_port, serve
from tests.report.factory import sample_events

SCENARIOS = ["text-basic", "tool-call-single"]


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> list[CaseResult]:
    tmp = tmp_path_factory.mktemp("sut")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(PLANTED_KEY_ENV, PLANTED)
        replay_port, sut_port = _free_port(), _free_port()
        config = tmp / "sut.toml"
        args = ["sut-config", "--scenarios", str(REPO / "scenarios"), "--replay-url", f"http://127.0.0.1:{replay_port}"]
        assert main([*args, "--scenario", ",".join(SCENARIOS), "--backend", "openai,anthropic", "-o", str(config)]) == 0
        with serve(config, sut_port) as url:
            options = MatrixOptions(
                scenarios=REPO / "scenarios",
                cassettes=REPO / "cassettes",
                reports=tmp / "reports",
                frontends=["openai", "anthropic"],
                backends=["openai", "anthropic"],
                only=SCENARIOS,
                known=tmp / "known.toml",
                run_id="sut-timing",
                sut=url,
                replay_port=replay_port,
                keep_traces="all",
            )
            engine = Engine(options)
            engine.run()
    return engine.results


def test_a_sut_stream_has_a_time_to_first_token_and_a_timeline_entry_per_event(gated: list[CaseResult]) -> None:
    streamed = [r for r in gated if r.stream]
    assert len(streamed) == 2 * 2 * 2 and {r.verdict for r in gated} == {"pass"}
    for result in streamed:
        run = result.runs["translated"]
        assert run.timings.first_token_ms is not None and run.timings.first_token_ms > 0, result.case_id
        assert run.timings.first_byte_ms is not None and 0 < run.timings.first_byte_ms <= run.timings.first_token_ms
        assert run.timings.first_token_ms <= run.timings.total_ms
        drawn = timeline(run)
        assert drawn is not None, result.case_id
        events = run.upstream_events or []
        assert len(drawn["events"]) == len(events) > 2
        assert [kind for kind, _, _ in drawn["events"]] == [e.kind for e in events]
        # Each event was sent by the replay server before the client got it, and every one reached the client.
        for kind, upstream, client in drawn["events"]:
            assert upstream is not None and client is not None and 0 < upstream <= client, (result.case_id, kind)
        assert len(run.wire.frontend_times_ms) == run.wire.frontend_chunks
        assert run.wire.frontend_times_ms == sorted(run.wire.frontend_times_ms)
        assert first_token_ms(run) == run.timings.first_token_ms


def test_a_sut_answer_has_its_first_byte_and_no_timeline(gated: list[CaseResult]) -> None:
    for result in (r for r in gated if not r.stream):
        run = result.runs["translated"]
        assert run.timings.first_byte_ms is not None and run.timings.first_byte_ms > 0
        assert timeline(run) is None and run.timings.first_token_ms is None
        assert first_token_ms(run) == run.timings.first_byte_ms  # as the built-in proxy's answers


def test_the_report_draws_the_sut_runs_time_to_first_token(gated: list[CaseResult]) -> None:
    collector = Collector()
    reports = [collector.handle(event) for event in sample_events(gated)]
    report = reports[-1]
    assert report is not None
    cells = {(f, b): (mine, streamed) for f, b, mine, _, streamed in first_tokens(report)}
    assert set(cells) == {(f, b) for f in ("openai", "anthropic") for b in ("openai", "anthropic")}
    assert all(mine is not None and mine > 0 and streamed == len(SCENARIOS) for mine, streamed in cells.values())


def test_first_content_is_the_chunk_that_completes_answer_text() -> None:
    codec = registry.get("openai")
    head = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":'
    role, text = head + b'{"role":"assistant"}}]}\n\n', head + b'{"content":"Hi"}}]}\n\n'
    assert first_content(codec.stream_decoder(), [role, text[:20], text[20:], b"data: [DONE]\n\n"]) == 2
    assert first_content(codec.stream_decoder(), [role, b"data: [DONE]\n\n"]) is None


def test_clock_counts_the_events_sent_before_each_client_chunk_and_drops_partial_replay_times() -> None:
    got = clock(8.0, [8.25, 8.5, 9.0], [8.125, 8.375], 2, [0, 0, 1], 1)
    assert got.upstream == (0.125, 0.375) and got.client == (0.25, 0.5, 1.0)
    assert got.client_events == (2, 3, 3) and got.event_chunks == (0, 0, 1)
    assert (got.first_byte, got.first_token, got.upstream_first_byte) == (0.25, 0.5, 0.125)
    partial = clock(8.0, [8.25], [8.125], 2, [0, 1], 0)  # one replay chunk untimed: no upstream side at all
    assert partial.upstream == () and partial.event_chunks == () and partial.first_token == 0.25


def test_send_times_records_each_body_chunk_for_the_code_making_the_answer() -> None:
    seen: list[list[float]] = []

    async def app(scope: dict[str, object], receive: object, send: object) -> None:
        times = sends()
        seen.append(times)
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        for body in (b"a", b"", b"b"):
            await send({"type": "http.response.body", "body": body, "more_body": True})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"", "more_body": False})  # type: ignore[operator]

    async def send(message: object) -> None:
        return None

    asyncio.run(SendTimes(app)({"type": "http"}, None, send))  # type: ignore[arg-type]
    assert len(seen[0]) == 2 and seen[0][0] <= seen[0][1]
    assert sends() == []  # outside an answer
