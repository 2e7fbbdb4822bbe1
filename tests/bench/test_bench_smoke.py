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

import pytest

import bench.__main__ as bench_main
from bench import _timing, bench_codecs, bench_sse
from harness import ir
from harness.protocols import registry
from harness.stream import validate

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
