"""Worker processes and shards: `-j N` writes byte for byte the reports a serial run writes; a worker that
crashes or hangs costs the run it was on (an error naming the case), never a hang or a pass; a sharded run's
shards cover the matrix once and join into the unsharded run's report."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.proxy import TranslateHooks
from harness.report import report_writers
from harness.runner import workers
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions, runs_of
from harness.runner.units import parse_shard, shard, units
from harness.trace import CaseResult, read_trace_bytes
from tests.conftest import REPO
from tests.runner import hooks

BROKEN = TranslateHooks(on_upstream_event=hooks.drop_second_block)
"""A broken adapter, so that the reports hold proxy bugs with divergences, not only passes."""


def options(reports: Path, **kw: object) -> MatrixOptions:
    base = MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        reports=reports,
        frontends=["openai", "anthropic", "ollama"],
        backends=["openai", "anthropic", "gemini"],
        only=["text-basic", "tool-call-parallel", "error-rate-limit-429"],
        known=reports / "known.toml",
        run_id="run",
        steady=True,
        hooks=BROKEN,
        keep_traces="all",  # these tests compare whole traces
    )
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def write_run(opts: MatrixOptions) -> Path:
    runner = Engine(opts)
    runner.writers = report_writers(runner.folder)
    runner.run()
    return runner.folder


def files(folder: Path) -> dict[str, bytes]:
    """Every file of a report folder by relative path, case traces uncompressed (their names keep `.gz`)."""
    return {str(p.relative_to(folder)): read_trace_bytes(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def traces(files: dict[str, bytes]) -> dict[str, CaseResult]:
    """The case traces among a report folder's files, by case id (a pack holds one per line)."""
    texts = [
        text
        for name, data in files.items()
        if name.startswith("cases/")
        for text in (data.splitlines() if name.endswith(".pack.jsonl.gz") else [data])
    ]
    return {case.case_id: case for case in map(CaseResult.model_validate_json, texts)}


def test_parallel_reports_are_byte_identical_to_serial_ones(tmp_path: Path) -> None:
    # The same folder for both: the page names its own folder in the commands it offers (`conformance diff`).
    serial = files(write_run(options(tmp_path, jobs=1)))
    shutil.rmtree(tmp_path / "run")
    parallel = files(write_run(options(tmp_path, jobs=2)))
    assert serial.keys() == parallel.keys()
    assert {"index.html", "junit.xml", "summary.json"} < serial.keys()
    assert len(traces(serial)) == 3 * 3 * 3 * 2
    assert [name for name in serial if serial[name] != parallel[name]] == []
    assert b"proxy_bug_response" in serial["summary.json"]  # the broken adapter is caught, the same way twice


def test_the_page_made_in_workers_is_the_page_a_rerender_makes(tmp_path: Path) -> None:
    """Each unit's part of `index.html` is made in the worker that judged it; a re-render from the traces on disk
    (slim passes read back from their packs) makes the same page, byte for byte."""
    folder = write_run(options(tmp_path, jobs=2, keep_traces="failing"))
    made = (folder / "index.html").read_bytes()
    (folder / "index.html").unlink()
    assert main(["report", "--run", str(folder), "--quiet"]) == 0
    assert (folder / "index.html").read_bytes() == made


def test_steady_runs_leave_out_only_what_differs_between_runs(tmp_path: Path) -> None:
    """Without `steady`, timings and trace ids differ between two runs on the same bytes; they are all that does."""
    one, two = (files(write_run(options(tmp_path / name, steady=False, only=["text-basic"], jobs=1))) for name in "ab")
    assert one.keys() == two.keys() and one != two
    steady = files(write_run(options(tmp_path / "steady", only=["text-basic"], jobs=1)))
    case = traces(steady)["text-basic[ollama->openai,stream]"]
    translated = case.runs["translated"]
    assert translated.trace_id is None and translated.timings.total_ms == 0 and case.duration_ms == 0
    # The Ollama encoder's `created_at` is written from SOURCE_DATE_EPOCH (the steady time), not the clock.
    assert "2026-01-01T00:00:00.000000Z" in translated.wire.frontend
    openai = traces(steady)["text-basic[openai->anthropic,stream]"]
    assert openai.runs["translated"].wire.frontend.count('"created":1767225600') >= 2  # each chunk, the same


def _struck(results: list[CaseResult]) -> list[CaseResult]:
    return [r for r in results if r.scenario == hooks.STRUCK]


def test_a_worker_that_crashes_costs_the_run_it_was_on_named(tmp_path: Path) -> None:
    crash = TranslateHooks(on_upstream_request=hooks.crash)
    serial = options(tmp_path / "serial", jobs=1, hooks=BROKEN)
    parallel = options(tmp_path / "parallel", jobs=2, hooks=crash, backends=["openai"], frontends=["openai"])
    crashed = Engine(parallel)
    crashed.run()
    struck = _struck(crashed.results)
    assert [r.case_id for r in struck] == [
        "tool-call-parallel[openai->openai,stream]",
        "tool-call-parallel[openai->openai,nonstream]",
    ]
    for result in struck:
        translated = result.runs["translated"]
        assert translated.status == "error"
        assert translated.error is not None and "worker process exited with code 3" in translated.error
        assert result.case_id in translated.error
        assert result.verdict != "pass"
    # Everything else is what a run without the crash gives.
    engine = Engine(dataclasses.replace(serial, backends=["openai"], frontends=["openai"], hooks=None))
    engine.run()
    clean = {r.case_id: r for r in engine.results}
    for result in crashed.results:
        if result.scenario != hooks.STRUCK:
            assert result == clean[result.case_id]


def test_a_worker_that_hangs_is_stopped_and_the_case_named(tmp_path: Path) -> None:
    hang = TranslateHooks(on_upstream_request=hooks.hang)
    opts = options(tmp_path, jobs=2, hooks=hang, frontends=["openai"], backends=["openai"], streams=(False,))
    engine = Engine(dataclasses.replace(opts, stall_timeout=20.0))
    engine.run()
    (struck,) = _struck(engine.results)
    error = struck.runs["translated"].error
    assert error is not None and "stopped answering" in error and struck.case_id in error
    assert struck.verdict != "pass"
    assert {r.verdict for r in engine.results if r is not struck} <= {"pass", "unsupported"}


def _python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`code` run by a fresh interpreter from the repository (bounded), which must exit 0."""
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
    return done


def test_a_fork_server_hung_in_its_imports_fails_the_start_within_the_bound(tmp_path: Path) -> None:
    """The stdlib waits for the fork server to fork a worker without a timeout; a server whose preload never
    returns made `process.start()` wait forever (with Ctrl-C held back). Now the start ends in `WorkerError` after
    `START_TIMEOUT` and the hung server is killed; a timer the caller had running goes on afterwards."""
    (tmp_path / "hung_preload.py").write_text("import time\ntime.sleep(600)\n")
    code = (
        "import multiprocessing, os, signal, sys, time\n"
        "from multiprocessing import forkserver\n"
        "from harness.runner import workers\n"
        "ctx = multiprocessing.get_context('forkserver')\n"
        "ctx.set_forkserver_preload(['hung_preload'])\n"
        "workers.context = lambda: ctx\n"
        "workers.START_TIMEOUT = 2.0\n"
        "signal.signal(signal.SIGALRM, lambda *_: print('outer timer', flush=True))\n"
        "signal.setitimer(signal.ITIMER_REAL, 30.0)\n"
        "began = time.monotonic()\n"
        "try:\n"
        "    workers.WorkerPool(print, None, 1).run([workers.Task(0, ())])\n"
        "except workers.WorkerError as exc:\n"
        "    print(round(time.monotonic() - began), exc, flush=True)\n"
        "print('server', forkserver._forkserver._forkserver_pid, flush=True)\n"
        "print('outer left', round(signal.getitimer(signal.ITIMER_REAL)[0]), flush=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}  # the 3.11 fork server ignores the parent's sys.path
    done = _python(code, env)
    lines = done.stdout.splitlines()
    assert lines[0] == "2 the worker fork server did not start a worker within 2 s (are its imports hung?)", lines
    assert lines[1] == "server None"  # killed and reaped: no hung process is left behind
    assert lines[2] in {"outer left 27", "outer left 28"}, lines


def test_a_worker_starts_with_the_preloaded_sdks_out_of_the_collectors_reach() -> None:
    """The fork server freezes what its preload made (`gc.freeze`): a worker's full collections do not traverse the
    SDKs' ~300,000 long-lived objects again (nor copy their pages from the server's), and the process that started
    the server froze nothing of its own."""
    code = (
        "import gc\n"
        "from harness.runner.forkserver import context\n"
        "with context().Pool(1) as pool:\n"
        "    print(pool.apply(gc.get_freeze_count), gc.get_freeze_count(), flush=True)\n"
    )
    done = _python(code)
    in_worker, here = map(int, done.stdout.split())
    assert in_worker > 100_000, done.stdout
    assert here == 0


def test_conformance_run_starts_the_fork_server_first_and_stops_it_on_a_usage_error() -> None:
    """`conformance run` with workers starts their fork server before its own imports (they overlap its preload);
    a usage error found afterwards stops the server it started, instead of leaving it importing the SDKs."""
    code = (
        "from multiprocessing import forkserver\n"
        "from harness.runner import forkserver as fs\n"
        "from harness.cli import main\n"
        "started = []\n"
        "warm_up = fs.warm_up\n"
        "fs.warm_up = lambda *a: started.append(warm_up(*a)) or started[-1]\n"
        "code = main(['run', '-j', '2', '--known', 'no-such-known.yaml'])\n"
        "print(code, started, getattr(forkserver._forkserver, '_forkserver_pid', None), flush=True)\n"
    )
    done = _python(code)
    assert done.stdout.splitlines()[-1] == "2 [True] None", done.stdout
    assert "--known no-such-known.yaml: no such file" in done.stderr


def test_workers_name_each_run_to_a_progress_callback_and_count_it_without_one(tmp_path: Path) -> None:
    """Workers count their runs and cases in memory shared with the parent (`workers.Link`); the run labels travel
    as messages only when the parent shows them: the selftest's spinner gets one per run, in the workers' order."""
    seen: list[str] = []
    opts = options(tmp_path, jobs=2, hooks=None, frontends=["openai", "anthropic"], backends=["openai"])
    engine = Engine(dataclasses.replace(opts, on_progress=seen.append))
    engine.run()
    case_ids = {r.case_id for r in engine.results}
    assert len(seen) == len(engine.planned_runs()) > 0
    assert set(seen) <= case_ids
    quiet = Engine(dataclasses.replace(opts, reports=tmp_path / "quiet"))
    quiet.run()
    assert [r.verdict for r in quiet.results] == [r.verdict for r in engine.results]


def test_a_worker_with_no_task_left_is_told_to_stop_while_the_others_finish(tmp_path: Path) -> None:
    """It winds down (its environment, its process) while the last units run, not after them; `close` waits for it.
    Task 0 (the heavier, dealt first) ends only once the other worker, done with task 1, was told to stop."""
    heavy = workers.Task(0, (("run", "case"),) * 3)
    with workers.WorkerPool(hooks.waits_for_a_stopped_worker, tmp_path, 2) as pool:  # type: ignore[arg-type]
        done = pool.run([heavy, workers.Task(1, ())])
    assert [d.number for d in done] == [0, 1]
    assert done[0].parts == {"another_stopped": "True"}
    assert len(list(tmp_path.glob("stopped-*"))) == 2  # both were told, and `close` waited for both


def test_hooks_that_cannot_reach_a_worker_are_refused(tmp_path: Path) -> None:
    closure = TranslateHooks(on_upstream_request=lambda request: request)
    with pytest.raises(ValueError, match="-j 1"):
        Engine(options(tmp_path, jobs=2, hooks=closure)).run()


def test_shards_deal_every_unit_once_and_keep_baselines_with_their_cases(tmp_path: Path) -> None:
    runner = Engine(options(tmp_path, only=None))
    every = units(runner.plan)
    dealt = [shard(every, k, 4) for k in range(1, 5)]
    assert sorted(u.scenario + str(u.stream) for part in dealt for u in part) == sorted(
        u.scenario + str(u.stream) for u in every
    )
    weights = [sum(u.weight for u in part) for part in dealt]
    assert max(weights) - min(weights) <= max(u.weight for u in every)
    for part in dealt:
        runs = {run for unit in part for run, _ in unit.runs}
        cases = [case for unit in part for case in unit.cases if runner.plan.gaps[case] is None]
        assert {run for case in cases for run in runs_of(case).values()} <= runs
    assert dealt == [shard(units(Engine(options(tmp_path, only=None)).plan), k, 4) for k in range(1, 5)]


def test_parse_shard() -> None:
    assert parse_shard("2/3") == (2, 3)
    for bad in ("0/3", "4/3", "1", "a/b", "1/0"):
        with pytest.raises(ValueError, match="--shard"):
            parse_shard(bad)


@pytest.mark.parametrize("count", [2, 3])
def test_shards_join_into_the_unsharded_report_and_gate(tmp_path: Path, count: int) -> None:
    """The shards (the last one run in worker processes) joined by `report --merge`: the unsharded run's cases,
    reports byte for byte, and gate decision."""
    whole_opts = options(tmp_path / "out", jobs=1, run_id="joined")
    runner = Engine(whole_opts)
    runner.writers = report_writers(runner.folder)
    gate = runner.run().exit_code
    whole = files(runner.folder)
    shutil.rmtree(runner.folder)  # the joined report goes to the same folder: the page names its own folder
    shards = []
    for k in range(1, count + 1):
        jobs = 2 if k == count else 1
        shards.append(write_run(options(tmp_path / "shards", jobs=jobs, run_id=f"s{k}", shard=(k, count))))
    out = tmp_path / "out" / "joined"
    assert main(["report", "--merge", *map(str, shards), "--run", str(out), "--quiet", "--gate"]) == gate == 1
    merged = files(out)
    cases = list(traces(merged).values())
    assert sorted((c.case_id, c.verdict) for c in cases) == sorted((r.case_id, r.verdict) for r in runner.results)
    assert len(cases) == 3 * 3 * 3 * 2
    assert merged == whole


def test_joining_refuses_a_missing_or_doubled_shard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = write_run(options(tmp_path, only=["text-basic"], run_id="s1", shard=(1, 2)))
    out = str(tmp_path / "out")
    assert main(["report", "--merge", str(one), "--run", out, "--quiet"]) == 2
    assert "missing [2]" in capsys.readouterr().err
    assert main(["report", "--merge", str(one), str(one), "--run", out, "--quiet"]) == 2
    assert "given twice [1]" in capsys.readouterr().err
    whole = write_run(options(tmp_path, only=["text-basic"], run_id="whole"))
    assert main(["report", "--merge", str(whole), "--run", out, "--quiet"]) == 2
    assert "not a shard" in capsys.readouterr().err


def test_a_case_cut_by_the_trace_bound_is_reported_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writers get each case as its trace holds it: a huge answer's trace is cut (`trace.bound`), and the case
    the reports are made from is that cut one, in-process as from a worker (which sends its cases unparsed)."""
    from harness.runner import engine as engine_module
    from harness.trace import bound, pack

    for module in (engine_module, bound, pack):
        monkeypatch.setattr(module, "LARGE_CHARS", 2000)
    monkeypatch.setattr(bound, "MAX_STRING", 60)  # the checks' longer expectations, not the case ids
    opts = options(tmp_path, jobs=1, frontends=["openai"], backends=["anthropic"], only=["text-basic"], hooks=None)
    runner = Engine(opts)
    runner.run()
    assert runner.results and all(result.cut for result in runner.results)
    written = traces(files(runner.folder))
    assert {r.case_id: r for r in runner.results} == written
