"""Tiny runs of each benchmark's main path, and the nox/tox wiring that runs them, so they cannot rot unnoticed.

No timing assertions: figures from a one-round run on a shared machine mean nothing; the rows and their
shape do.
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import bench.__main__ as bench_main
from bench import _floor, _proxy_floor, _timing, bench_codecs, bench_diff, bench_eventstream, bench_matrix, bench_sse
from harness import ir
from harness.diff import compare
from harness.protocols import registry
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions
from harness.stream import accumulate, validate
from harness.trace import Run
from harness.trace.model import RunTrace

REPO = Path(__file__).resolve().parents[2]


def table_rows(output: str) -> dict[str, list[str]]:
    """Rows of the bench_codecs table by protocol name (the lines after the header)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("protocol "))
    return {line.split()[0]: line.split()[1:] for line in lines[start + 1 :] if line.strip()}


# --- bench/_timing.py -------------------------------------------------------------------------------------


def test_interleaved_best_runs_every_contender_once_per_round_in_turn() -> None:
    calls: list[str] = []

    def contender(name: str, result: int) -> Callable[[], int]:
        def run() -> int:
            calls.append(name)
            return result

        return run

    runs = {"a": contender("a", 3), "b": contender("b", 5)}
    timings = _timing.interleaved_best(runs, rounds=2, warmup=1)
    assert calls == ["a", "b"] * 3
    assert {name: t.result for name, t in timings.items()} == {"a": 3, "b": 5}
    assert all(0 < t.best_ns < 10**9 and t.cpu_ns >= 0 for t in timings.values())


def test_timing_per_item_in_microseconds() -> None:
    timing = _timing.Timing(best_ns=4_000_000, cpu_ns=2_000_000, result=0)
    assert timing.seconds == 0.004
    assert timing.per(1000) == 4.0
    assert timing.per(1000, cpu=True) == 2.0


def test_interleaved_best_rejects_zero_rounds() -> None:
    with pytest.raises(ValueError, match="rounds must be at least 1"):
        _timing.interleaved_best({"a": lambda: 0}, rounds=0)


# --- bench/bench_codecs.py ------------------------------------------------------------------------------


def test_build_content_is_a_valid_stream_with_the_asked_sizes() -> None:
    content = bench_codecs.build_content(bench_codecs.QUICK)
    kinds = [event.kind for event in content.events]
    assert validate(content.events) == []
    assert kinds.count("text_delta") == 40
    assert kinds.count("tool_call_delta") == 8
    assert len(content.events) == 54
    text = "".join(e.text for e in content.events if isinstance(e, ir.TextDelta))
    arguments = "".join(e.arguments for e in content.events if isinstance(e, ir.ToolCallDelta))
    assert text == content.text
    assert json.loads(arguments) == content.arguments
    assert content.arguments["location"] == "Zürich, CH"
    done = content.events[-1]
    assert isinstance(done, ir.Done) and done.usage == bench_codecs.USAGE


def test_check_decode_names_the_protocol_when_a_decode_loses_text() -> None:
    content = bench_codecs.build_content(bench_codecs.QUICK)
    codec = registry.get("openai")
    events = bench_codecs.decoded_events(codec, bench_codecs.encode_pieces(codec, content.events))
    bench_codecs.check_decode("openai", events, content)  # the real decode passes
    first = next(e for e in events if isinstance(e, ir.TextDelta))
    dropped = [e for e in events if e is not first]
    with pytest.raises(SystemExit, match="openai: decoded stream differs from the source: text differs"):
        bench_codecs.check_decode("openai", dropped, content)


def test_bench_codecs_quick_run_prints_a_row_per_registered_protocol(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(bench_codecs.QUICK_ENV, "1")
    monkeypatch.setenv(bench_codecs.CLOCK_ENV, "cpu")
    bench_codecs.main()
    output = capsys.readouterr().out
    rows = table_rows(output)
    assert list(rows) == ["openai-sdk", *registry.names()]
    assert "clock: thread CPU time" in output
    assert "54 IR events (40 text deltas, 8 argument fragments)" in output
    reference = rows["openai-sdk"]
    assert reference[-3:] == ["1.00", "1.00", "-"]
    # The SDK parses the openai codec's own body: same bytes, one ChatCompletionChunk per `data: {...}` event.
    assert reference[2] == rows["openai"][2]
    assert int(reference[1]) > 40
    for name in registry.names():
        frames, events, size, *figures = rows[name]
        assert int(frames) > 40 and int(events) >= 47 and int(size) > 4000
        assert all(float(value) >= 0 for value in figures)


def test_bench_codecs_runs_through_python_dash_m_bench_as_nox_and_tox_do() -> None:
    env = {**os.environ, bench_codecs.QUICK_ENV: "1"}
    done = subprocess.run(
        [sys.executable, "-m", "bench", "bench_codecs"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("== bench_codecs\n")
    assert list(table_rows(done.stdout)) == ["openai-sdk", *registry.names()]


# --- bench/bench_sse.py ---------------------------------------------------------------------------------


def test_bench_sse_small_run_prints_three_streams_with_equal_event_counts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench_sse, "TARGET_BYTES", 20_000)
    monkeypatch.setattr(bench_sse, "ROUNDS", 1)
    bench_sse.main()  # exits with SystemExit if the two parsers disagree on the event count
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["stream", "MB"]
    names = [line[:30].strip() for line in lines[1:]]
    assert names == ["anthropic (LF, event+data)", "openai (LF, data only)", "gemini-style (CRLF)"]
    assert all(line.endswith("x") for line in lines[1:])


# --- bench/bench_eventstream.py -------------------------------------------------------------------------


def test_bench_eventstream_small_run_prints_one_row_with_equal_message_counts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench_eventstream, "TARGET_BYTES", 20_000)
    monkeypatch.setattr(bench_eventstream, "ROUNDS", 1)
    bench_eventstream.main()  # exits with SystemExit if the two parsers disagree on the message count
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["stream", "MB", "messages"]
    assert row.startswith("bedrock converse-stream") and row.endswith("x") and int(row.split()[3]) > 50


# --- python -m bench, noxfile.py, tox.ini ---------------------------------------------------------------


def test_python_dash_m_bench_without_names_runs_every_bench_module(monkeypatch: pytest.MonkeyPatch) -> None:
    imported: list[str] = []

    def import_module(name: str) -> SimpleNamespace:
        imported.append(name)
        return SimpleNamespace(main=lambda: None)

    monkeypatch.setattr(bench_main, "importlib", SimpleNamespace(import_module=import_module))
    assert bench_main.main([]) == 0
    expected = sorted(f"bench.{path.stem}" for path in (REPO / "bench").glob("bench_*.py"))
    assert imported == expected
    assert {"bench.bench_codecs", "bench.bench_sse"} <= set(imported)


def test_nox_has_a_bench_session_running_python_dash_m_bench_and_lints_bench() -> None:
    tree = ast.parse((REPO / "noxfile.py").read_text())
    sessions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "bench" in sessions
    assert any(ast.unparse(d).startswith("nox.session") for d in sessions["bench"].decorator_list)
    run_calls = [ast.unparse(n) for n in ast.walk(sessions["bench"]) if isinstance(n, ast.Call)]
    assert "session.run('python', '-m', 'bench', *session.posargs)" in run_calls
    lint_calls = [ast.unparse(n) for n in ast.walk(sessions["lint"]) if isinstance(n, ast.Call)]
    assert any(call.startswith("session.run('ruff', 'check'") and "'bench'" in call for call in lint_calls)


def test_tox_has_a_bench_env_running_python_dash_m_bench_and_lints_bench() -> None:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(REPO / "tox.ini")
    assert tox["testenv:bench"]["commands"].strip() == "python -m bench {posargs}"
    assert " bench " in f" {tox['testenv:lint']['commands'].strip()} "


# --- bench/bench_diff.py --------------------------------------------------------------------------------


def test_bench_diff_pair_differs_in_one_changed_delta_and_one_missing_event() -> None:
    pair = bench_diff.build_pair(400)
    assert len(pair.left) == 400 and len(pair.right) == 399
    assert validate(pair.left) == [] and validate(pair.right) == []
    changed = pair.right[pair.changed - 1]  # one place earlier: the missing event came before it
    assert isinstance(changed, ir.TextDelta) and changed.text == "CHANGED "
    original = pair.left[pair.changed]
    assert isinstance(original, ir.TextDelta) and original.text == "word270 "
    assert isinstance(pair.left[pair.missing], ir.ThinkingDelta)
    assert pair.right[pair.missing] == pair.left[pair.missing + 1]
    # Everything between the two differences is the same event in both traces, one place apart.
    assert pair.left[pair.missing + 1 : pair.changed] == pair.right[pair.missing : pair.changed - 1]
    arguments = "".join(e.arguments for e in pair.left if isinstance(e, ir.ToolCallDelta))
    assert json.loads(arguments) == {"items": list(range(40))}


def test_bench_diff_compare_reports_the_changed_text_and_the_missing_thinking_only() -> None:
    pair = bench_diff.build_pair(400)
    found = compare(bench_diff.view(pair.left), bench_diff.view(pair.right))
    # Deltas are coalesced per block, so each difference shows in its block's joined text, in events and response.
    assert [d.path for d in found] == [
        "events[2].text",
        "events[5].text",
        "response.content[0].text",
        "response.content[1].text",
    ]
    assert "step 20. " in found[0].left and "step 20. " not in found[0].right
    assert found[1].right.endswith(" word269 CHANGED " + " ".join(f"word{i}" for i in range(271, 310)) + " ")
    bench_diff.check(found, pair)  # passes
    with pytest.raises(SystemExit, match="expected the changed text"):
        bench_diff.check(found[:1], pair)


def test_bench_diff_small_run_prints_every_contender_against_the_reference(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(bench_diff.EVENTS_ENV, "300")
    monkeypatch.setenv(bench_diff.ROUNDS_ENV, "1")
    bench_diff.main()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "traces: 300 and 299 events; 4 divergences, first: events[2].text"
    rows = {line.split()[0]: line.split()[-3:] for line in lines[2:]}
    assert list(rows) == ["reference", "normalize", "compare", "pipeline", "deepdiff"]
    assert rows["reference"][-1] == "1.0"
    assert all(float(ms) > 0 and float(ratio) > 0 for ms, _rate, ratio in rows.values())
    # The pipeline contender judges the same two streams as run traces: it finds the changed text too.
    found = bench_diff.judged(*bench_diff.traces(bench_diff.build_pair(300)))
    assert found >= 2


# --- bench/bench_matrix.py ------------------------------------------------------------------------------


def test_bench_matrix_selection_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for env in (bench_matrix.SCENARIOS_ENV, bench_matrix.FRONTENDS_ENV, bench_matrix.BACKENDS_ENV):
        monkeypatch.delenv(env, raising=False)
    default = bench_matrix.options_from_env()
    assert default.only == list(bench_matrix.DEFAULT_SCENARIOS)
    assert default.frontends is None and default.backends is None and default.write_traces is False
    monkeypatch.setenv(bench_matrix.SCENARIOS_ENV, "all")
    monkeypatch.setenv(bench_matrix.FRONTENDS_ENV, " openai, gemini ")
    monkeypatch.setenv(bench_matrix.BACKENDS_ENV, "groq")
    chosen = bench_matrix.options_from_env()
    assert chosen.only is None and chosen.frontends == ["openai", "gemini"] and chosen.backends == ["groq"]
    scenario_ids = {path.stem for path in (REPO / "scenarios").glob("*.yaml")}
    assert set(bench_matrix.DEFAULT_SCENARIOS) <= scenario_ids


def _matrix(frontends: list[str], backends: list[str], only: list[str], **more: Any) -> MatrixOptions:
    """A small matrix of the committed scenarios and cassettes, no traces written."""
    return MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        frontends=frontends,
        backends=backends,
        only=only,
        write_traces=False,
        **more,
    )


def test_bench_matrix_floor_makes_the_runner_calls_against_the_client_recordings() -> None:
    options = _matrix(["openai"], ["anthropic"], ["text-basic", "models-list"])
    runner = Engine(options)
    floor = _floor.prepare_floor(runner)
    keys = runner.planned_runs()
    assert len(floor.calls) == len(keys) == 9  # text-basic x 2 modes x 3 runs, models-list x 3 runs
    for key, item in zip(keys, floor.calls, strict=True):
        assert (item.client, item.scenario.id, item.stream) == (key.client, key.scenario, key.stream)
        if key.scenario == "models-list":
            assert item.request is None
        else:
            mode = "translate" if key.role == "translated" else "passthrough"
            assert item.request is not None and item.request.model == f"{key.scenario}--{key.backend}--{mode}"
    # Every call is answered from cassettes/<client>/...: the translated openai->anthropic run gets openai bytes.
    translated = floor.calls[keys.index(Run("translated", "openai", "anthropic", "text-basic", True))]
    assert b"chat.completion.chunk" in b"".join(translated.reply.chunks)
    result = floor.run_one(translated)
    assert result.error is None and result.events is not None
    listing = floor.run_one(floor.calls[keys.index(Run("baseline_frontend", "openai", "openai", "models-list", False))])
    assert listing.models is not None and {"conformance-model", "conformance-model-mini"} <= set(listing.models)
    assert floor.run() == 9


def test_bench_matrix_floor_sees_what_the_sdk_sees_through_the_pass_through_proxy() -> None:
    options = _matrix(["anthropic"], ["anthropic"], ["tool-call-parallel"], streams=(True,))
    runner = Engine(options)
    floor = _floor.prepare_floor(runner)
    key = Run("baseline_frontend", "anthropic", "anthropic", "tool-call-parallel", True)
    direct = floor.run_one(floor.calls[runner.planned_runs().index(key)])
    cases = runner.case_runner()
    try:
        cases.run_case(runner.cases[0])
    finally:
        cases.close()
    proxied = cases.traces[key]
    assert isinstance(proxied, RunTrace) and direct.events is not None
    assert proxied.sdk.events == direct.events
    calls = accumulate(direct.events).response.content
    assert [c.name for c in calls if isinstance(c, ir.ToolCallPart)] == ["get_weather", "get_weather"]


def test_bench_matrix_proxy_floor_makes_the_floors_calls_through_the_built_in_proxy() -> None:
    """The SDK-and-proxy floor answers every call of the floor, and a translated run reads what the harness's run
    reads: the proxy's translation of the backend's recording, not the client's own recording."""
    options = _matrix(["openai"], ["anthropic"], ["tool-call-parallel", "models-list"])
    runner = Engine(options)
    floor = _floor.prepare_floor(runner)
    proxied = _proxy_floor.prepare_proxy_floor(runner, floor)
    try:
        assert [c.run for c in proxied.calls] == runner.planned_runs()
        key = Run("translated", "openai", "anthropic", "tool-call-parallel", True)
        through = proxied.run_one(proxied.calls[runner.planned_runs().index(key)])
        assert proxied.run() == len(floor.calls) == 9
    finally:
        proxied.close()
    cases = runner.case_runner()
    try:
        cases.run_case(next(c for c in runner.cases if c.stream and c.scenario == "tool-call-parallel"))
    finally:
        cases.close()
    harnessed = cases.traces[key]
    assert isinstance(harnessed, RunTrace) and through.events is not None
    assert through.events == harnessed.sdk.events
    calls = accumulate(through.events).response.content
    assert [c.name for c in calls if isinstance(c, ir.ToolCallPart)] == ["get_weather", "get_weather"]


def test_bench_matrix_buckets_name_where_time_goes() -> None:
    assert bench_matrix.bucket_of("~", "<method 'load_verify_locations' of '_ssl._SSLContext' objects>") == (
        "TLS contexts (SDK client construction)"
    )
    assert bench_matrix.bucket_of("/work/main/harness/diff/losses.py", "_strip").startswith("harness/diff")
    assert bench_matrix.bucket_of("/x/site-packages/deepdiff/diff.py", "_diff") == "deepdiff"
    assert bench_matrix.bucket_of("/x/site-packages/openai/_models.py", "construct") == "openai SDK"
    assert bench_matrix.bucket_of("/x/lib/python3.11/textwrap.py", "wrap") == "other (stdlib, builtins)"


def test_bench_matrix_tiny_run_prints_the_floor_ratio_and_a_profile(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv(bench_matrix.SCENARIOS_ENV, "text-basic")
    monkeypatch.setenv(bench_matrix.FRONTENDS_ENV, "openai")
    monkeypatch.setenv(bench_matrix.BACKENDS_ENV, "openai")
    monkeypatch.setenv(bench_matrix.ROUNDS_ENV, "1")
    monkeypatch.setenv(bench_matrix.PARTS_ENV, "subset,profile")
    monkeypatch.setattr(bench_matrix, "PROFILE_TOP", 3)
    bench_matrix.main()
    output = capsys.readouterr().out
    lines = output.splitlines()
    assert lines[2] == "default subset: 2 cases (pass 2), 6 distinct SDK runs"  # three runs per case, by role
    assert [line.split()[:2] for line in lines[4:7]] == [["harness", "-j1"], ["floor", "-j1"], ["sdk+proxy", "-j1"]]
    assert lines[7].startswith("harness/floor -j1: ")
    assert lines[8].startswith("sdk+proxy/floor -j1: ") and lines[9].startswith("harness/(sdk+proxy) -j1: ")
    assert "profile of one harness -j1 run:" in output and "-- own time per run by bucket (ms)" in output
    assert "harness/proxy" in output and "harness/diff" in output


def test_bench_matrix_main_job_runs_the_cli_at_each_worker_count(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)
    selection = ["--scenario", "text-basic", "--frontend", "openai", "--backend", "openai,anthropic"]
    job = bench_matrix.measure_main_job([2], 1, selection)
    assert list(job.walls) == [1, 2] and all(wall > 0 for wall in job.walls.values())
    assert {"index.html", "junit.xml", "summary.json", "plan.json", "cases/"} == set(job.report_files)
    assert job.report_bytes == sum(job.report_files.values()) > 0
    bench_matrix.print_main_job(job)
    output = capsys.readouterr().out
    assert "-j 1" in output and "-j 2" in output and "report size:" in output


def test_bench_matrix_refuses_an_unknown_part(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(bench_matrix.PARTS_ENV, "subset,bogus")
    with pytest.raises(SystemExit, match="bogus"):
        bench_matrix.main()


def test_bench_matrix_transports_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(bench_matrix.TRANSPORTS_ENV, raising=False)
    assert bench_matrix.options_from_env().transports == ("http",)
    monkeypatch.setenv(bench_matrix.TRANSPORTS_ENV, "ws, http")
    assert bench_matrix.options_from_env().transports == ("http", "ws")  # the main job's transports
    monkeypatch.setenv(bench_matrix.TRANSPORTS_ENV, "websocket")
    with pytest.raises(SystemExit, match="choose from http, ws"):
        bench_matrix.options_from_env()


def test_bench_matrix_websocket_floor_makes_the_runner_turns_and_sees_what_the_sdk_sees() -> None:
    options = _matrix(
        ["responses"],
        ["responses", "anthropic"],
        ["tool-call-parallel", "truncated-stream"],
        streams=(True,),
        transports=("ws",),
    )
    runner = Engine(options)
    floor = _floor.prepare_floor(runner)
    keys = runner.planned_runs()
    try:
        sockets = [(k, c) for k, c in zip(keys, floor.calls, strict=True) if k.transport == "ws"]
        assert sockets and all(c.frames is not None for _, c in sockets)
        assert all(c.frames is None for k, c in zip(keys, floor.calls, strict=True) if k.transport == "http")
        truncated = next(c for k, c in sockets if k.scenario == "truncated-stream")
        assert truncated.frames is not None and truncated.frames.cut  # closed as the proxy closes a cut stream
        key = Run("baseline_frontend", "responses", "responses", "tool-call-parallel", True, "ws")
        direct = floor.run_one(floor.calls[keys.index(key)])
        assert floor.sockets is not None  # the turn went over a real socket
        cases = runner.case_runner()
        case = next(c for c in runner.cases if c.scenario == "tool-call-parallel" and c.backend == "responses")
        try:
            cases.run_case(case)
        finally:
            cases.close()
        proxied = cases.traces[key]
        assert isinstance(proxied, RunTrace) and direct.events is not None
        assert proxied.sdk.events == direct.events
        assert floor.run() == len(floor.calls)
    finally:
        floor.close()
    assert floor.sockets is None
