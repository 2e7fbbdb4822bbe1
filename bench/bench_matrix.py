"""The matrix against the SDK floor, the README's main job at each worker count, and where the time goes.

Figures are ratios from the same run, contenders interleaved round by round, best of the rounds kept:

- `subset` and `all`: harness/floor at -j 1, on the default subset of scenarios and on every scenario.
  - harness: `Engine(MatrixOptions(jobs=1, write_traces=False)).run()` over the committed cassettes: every distinct
    run through the in-process proxy, checks, request- and response-side diffs, triage, each case's trace text
    checked by the trace models.
  - SDK floor (`bench/_floor.py`): exactly the SDK calls the runner makes (`Engine.planned_runs()`: one per
    (role, client, backend, scenario, stream)), each through the same driver call, answered by
    `httpx2.MockTransport` (`httpx` for ollama) with the recorded bytes of the client's own protocol for that
    scenario and mode (`cassettes/<client>/<scenario>.<mode>.yaml`, served by `Replayer.reply` once, before
    timing, and then replayed as plain bytes with their recorded chunk boundaries): no proxy, no harness around
    the call. The models-list scenario has no recording (the proxy answers it from its config): its floor serves
    the listing the proxy gave, captured once before timing. Both sides build the same SDK clients the same way
    (one TLS context per process, `harness.drivers.base.shared_tls_context`). A WebSocket-mode run's floor is the
    same `run_socket` call against a canned WebSocket server on a loopback port serving the same recording as
    frames (`bench/_socket_floor.py`: the SDK's WebSocket mode needs a real socket).
  - SDK and proxy (`bench/_proxy_floor.py`): the floor's calls made through the built-in proxy as the runner
    serves it (in process, each run's own route, the backend's recording replayed upstream, the tap), and nothing
    else of the harness. harness/(SDK + proxy) is what the harness adds around its system under test; (SDK +
    proxy)/floor is what that proxy costs, which the SDK floor leaves out.
- `main`: the README's main command, `conformance run` (traces and reports written) as a subprocess on the whole
  matrix, at -j 1, 2, ... up to the cores available: wall time, the speed-up of each worker count over -j 1,
  and the size of the report folder.
- `profile`: one harness -j 1 run of the subset under cProfile (the proxy runs in the same thread): top
  cumulative and own-time entries, and the time per run by where it goes.

Environment: `BENCH_MATRIX_PARTS` (comma list of the parts above; default all four), `BENCH_MATRIX_SCENARIOS`
(comma list, or `all`; the subset, default a representative one), `BENCH_MATRIX_FRONTENDS` /
`BENCH_MATRIX_BACKENDS` (comma lists; default all), `BENCH_MATRIX_TRANSPORTS` (`http`, `ws`: the main job runs
both; default `http`), `BENCH_MATRIX_ROUNDS` (timed rounds, best kept; default 1),
`BENCH_MATRIX_JOBS` (comma list of worker counts for `main`; default 1 up to the cores).
"""

from __future__ import annotations

import cProfile
import dataclasses
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._floor import prepare_floor
from bench._proxy_floor import prepare_proxy_floor
from bench._timing import Timing, interleaved_best
from harness import drivers
from harness.runner.engine import Engine
from harness.runner.forkserver import default_jobs
from harness.runner.plan import MatrixOptions
from harness.trace import Transport

SCENARIOS_ENV = "BENCH_MATRIX_SCENARIOS"
FRONTENDS_ENV = "BENCH_MATRIX_FRONTENDS"
BACKENDS_ENV = "BENCH_MATRIX_BACKENDS"
TRANSPORTS_ENV = "BENCH_MATRIX_TRANSPORTS"
ROUNDS_ENV = "BENCH_MATRIX_ROUNDS"
PARTS_ENV = "BENCH_MATRIX_PARTS"
JOBS_ENV = "BENCH_MATRIX_JOBS"
PARTS = ("subset", "all", "main", "profile")

# One scenario of each shape the matrix holds: plain text, parallel tool calls, thinking then a tool, a long
# stream, an HTTP error, an error inside a 200 stream. Every frontend and backend runs them, so the subset keeps
# the full matrix's mix of SDKs and codecs at a fifth of its size (a few minutes, profile included).
DEFAULT_SCENARIOS = (
    "text-basic",
    "tool-call-parallel",
    "thinking-then-tool",
    "long-output",
    "error-rate-limit-429",
    "midstream-error",
)
PROFILE_TOP = 25


def _names(env: str) -> list[str] | None:
    text = os.environ.get(env, "").strip()
    return [n.strip() for n in text.split(",") if n.strip()] or None


def options_from_env(cassettes: Path = Path("cassettes"), scenarios: Path = Path("scenarios")) -> MatrixOptions:
    """The matrix to measure: the environment's selection, or the default subset; no traces written."""
    only = _names(SCENARIOS_ENV)
    if only is None:
        only = list(DEFAULT_SCENARIOS)
    elif only == ["all"]:
        only = None
    return MatrixOptions(
        scenarios=scenarios,
        cassettes=cassettes,
        frontends=_names(FRONTENDS_ENV),
        backends=_names(BACKENDS_ENV),
        only=only,
        transports=_transports(),
        write_traces=False,
    )


def _transports() -> tuple[Transport, ...]:
    names = _names(TRANSPORTS_ENV) or ["http"]
    if not set(names) <= {"http", "ws"}:
        raise SystemExit(f"{TRANSPORTS_ENV}: {', '.join(names)}: choose from http, ws")
    return tuple(t for t in ("http", "ws") if t in names)


# --- the harness --------------------------------------------------------------------------------------------


def harness_run(options: MatrixOptions, jobs: int) -> dict[str, int]:
    """One full runner pass (environment, runs, judging) at `jobs`; the verdict counts."""
    return dict(Engine(dataclasses.replace(options, jobs=jobs)).run().counts)


# --- harness/floor -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    """The timed figures of one matrix at -j 1."""

    runs: int
    cases: int
    harness: Timing
    floor: Timing
    proxy: Timing
    """The SDK-and-proxy floor."""
    counts: dict[str, int]
    """The harness's verdict counts."""

    def ratio(self, *, cpu: bool = False, over: str = "floor") -> float:
        """Harness time over the floor's time, or over the SDK-and-proxy floor's (`over="proxy"`) (wall clock, or
        CPU time)."""
        return _ratio(self.harness, self.proxy if over == "proxy" else self.floor, cpu=cpu)


def _ratio(top: Timing, base: Timing, *, cpu: bool = False) -> float:
    """`top`'s time over `base`'s (wall clock, or CPU time)."""
    if cpu:
        return top.cpu_ns / max(base.cpu_ns, 1)
    return top.best_ns / max(base.best_ns, 1)


def measure(options: MatrixOptions, rounds: int) -> Measured:
    """Time the harness and the floor at -j 1, in interleaved rounds."""
    runner = Engine(options)
    floor = prepare_floor(runner)
    if not floor.calls:
        raise SystemExit(f"nothing to measure: the selection has no runs ({options.only or 'all'})")
    proxied = prepare_proxy_floor(runner, floor)
    counts: dict[str, int] = {}

    def harness() -> int:
        counts.update(harness_run(options, 1))
        return sum(counts.values())

    contenders = {"harness -j1": harness, "floor -j1": floor.run, "sdk+proxy -j1": proxied.run}
    try:
        timings = interleaved_best(contenders, rounds=rounds)
    finally:
        floor.close()
        proxied.close()
    for name in ("floor -j1", "sdk+proxy -j1"):
        if timings[name].result != len(floor.calls):
            raise SystemExit(f"{name.split()[0]}: some SDK calls returned nothing")
    return Measured(
        len(floor.calls),
        len(runner.cases),
        timings["harness -j1"],
        timings["floor -j1"],
        timings["sdk+proxy -j1"],
        counts,
    )


def print_timings(title: str, measured: Measured) -> None:
    """The wall and CPU times of both contenders and the harness/floor ratios."""
    verdicts = ", ".join(f"{k} {v}" for k, v in measured.counts.items() if v)
    print(f"\n{title}: {measured.cases} cases ({verdicts}), {measured.runs} distinct SDK runs")
    print(f"{'contender':<14} {'wall s':>8} {'ms/run':>7} {'cpu s':>7}")
    contenders = (("harness -j1", measured.harness), ("floor -j1", measured.floor), ("sdk+proxy -j1", measured.proxy))
    for name, timing in contenders:
        print(f"{name:<14} {timing.seconds:>8.2f} {timing.per(measured.runs) / 1000:>7.2f} {timing.cpu_ns / 1e9:>7.2f}")
    wall, cpu = measured.ratio(), measured.ratio(cpu=True)
    print(f"harness/floor -j1: {wall:.2f}x wall, {cpu:.2f}x CPU (target <= 1.5x, issue 27)")
    proxy = _ratio(measured.proxy, measured.floor)
    around = measured.ratio(over="proxy")
    print(f"sdk+proxy/floor -j1: {proxy:.2f}x wall (the built-in proxy, which the floor leaves out)")
    print(f"harness/(sdk+proxy) -j1: {around:.2f}x wall, {measured.ratio(cpu=True, over='proxy'):.2f}x CPU")


# --- the main job ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MainJob:
    """The README's main command at each worker count."""

    walls: dict[int, float]
    """Best wall time in seconds by worker count."""
    report_bytes: int
    """Size of one run's report folder (index.html, junit.xml, summary.json, cases/)."""
    report_files: dict[str, int]
    """Size of each top-level report file, and of cases/ as a whole."""

    def speedup(self, jobs: int) -> float:
        """Wall time at -j 1 over wall time at `jobs`."""
        return self.walls[1] / self.walls[jobs]


def main_job_command(jobs: int, reports: Path, run_id: str, selection: Sequence[str] = ()) -> list[str]:
    """`conformance run` as the README runs it, with a worker count and a report folder of its own (and, for
    tests only, a smaller `selection` than the whole matrix)."""
    command = [sys.executable, "-m", "harness", "run", "-q", "-j", str(jobs), "--reports", str(reports)]
    return [*command, "--run-id", run_id, *selection]


def folder_sizes(folder: Path) -> dict[str, int]:
    """Bytes of each top-level file of a report folder, and of `cases/` as a whole."""
    out = {p.name: p.stat().st_size for p in sorted(folder.iterdir()) if p.is_file()}
    out["cases/"] = sum(p.stat().st_size for p in (folder / "cases").glob("*.json*"))
    return out


def measure_main_job(worker_counts: list[int], rounds: int, selection: Sequence[str] = ()) -> MainJob:
    """Run the main job at each worker count in interleaved rounds (each run's reports written, then removed)."""
    reports = Path(tempfile.mkdtemp(prefix="bench-matrix-"))
    sizes: dict[str, int] = {}

    def job(jobs: int) -> Callable[[], int]:
        def run() -> int:
            run_id = f"j{jobs}"
            command = main_job_command(jobs, reports, run_id, selection)
            done = subprocess.run(command, check=False, timeout=3600, stdout=subprocess.DEVNULL)
            if done.returncode not in (0, 1):
                raise SystemExit(f"main job -j {jobs} exited {done.returncode}")
            sizes.update(folder_sizes(reports / run_id))
            shutil.rmtree(reports / run_id)
            return done.returncode

        return run

    if 1 not in worker_counts:
        worker_counts = [1, *worker_counts]
    try:
        timings = interleaved_best({f"-j{j}": job(j) for j in worker_counts}, rounds=rounds)
    finally:
        shutil.rmtree(reports, ignore_errors=True)
    walls = {j: timings[f"-j{j}"].seconds for j in worker_counts}
    return MainJob(walls, sum(sizes.values()), sizes)


def print_main_job(job: MainJob) -> None:
    """Wall time per worker count, the speed-up over -j 1 and per added worker, the report's size."""
    print("\nmain job: conformance run (whole matrix, traces and reports written)")
    print(f"{'workers':<8} {'wall s':>8} {'speed-up':>9} {'per added worker':>17}")
    previous = None
    for jobs, wall in job.walls.items():
        added = "" if previous is None else f"{job.walls[previous] / wall:>16.2f}x"
        print(f"-j {jobs:<5} {wall:>8.1f} {job.speedup(jobs):>8.2f}x {added:>17}")
        previous = jobs
    files = ", ".join(f"{name} {size / 1e6:.1f} MB" for name, size in job.report_files.items())
    print(f"report size: {job.report_bytes / 1e6:.1f} MB ({files})")
    print("targets: the main job <= 40 s at the default -j; speed-up >= 1.6x from 1 to 2 workers (issue 27)")


# --- profile ------------------------------------------------------------------------------------------------


# Where time goes, by the file (or built-in) a function's own time is spent in; first match wins.
BUCKETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("TLS contexts (SDK client construction)", ("load_verify_locations", "set_default_verify_paths")),
    ("loop waiting (select)", ("method 'poll' of 'select.epoll'",)),
    ("harness/diff (losses, normalize, compare)", ("harness/diff/",)),
    ("deepdiff", ("deepdiff/", "orderly_set/")),
    ("harness/proxy", ("harness/proxy/",)),
    ("harness/protocols (codecs)", ("harness/protocols/",)),
    ("harness/wire + stream", ("harness/wire/", "harness/stream/")),
    ("harness/runner + rig", ("harness/runner/", "harness/rig/")),
    ("harness/drivers", ("harness/drivers/",)),
    ("YAML (scenarios, cassettes), vcrpy, replay", ("harness/record/", "vcr/", "yaml/", "_yaml")),
    ("harness other (scenarios, trace, ir)", ("harness/",)),
    ("pydantic", ("pydantic", "validate_python", "validate_json", "to_python", "to_json", "SchemaSerializer")),
    ("openai SDK", ("openai/",)),
    ("anthropic SDK", ("anthropic/",)),
    ("google-genai SDK", ("google/",)),
    ("ollama SDK", ("ollama/",)),
    ("httpx / httpx2 / httpcore", ("httpx", "httpcore")),
    ("starlette", ("starlette/",)),
    ("asyncio + threads + sockets", ("asyncio/", "threading.py", "concurrent/", "selectors.py", "_socket")),
    ("copy.deepcopy", ("copy.py",)),
    ("json", ("json/", "_json")),
)


def bucket_of(filename: str, function: str) -> str:
    """The bucket a profiled function's own time belongs to."""
    where = f"{filename}:{function}"
    for name, markers in BUCKETS:
        if any(marker in where for marker in markers):
            return name
    return "other (stdlib, builtins)"


def buckets(stats: pstats.Stats) -> dict[str, float]:
    """Own time (seconds) per bucket, largest first."""
    out: dict[str, float] = {}
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]  # pstats keeps this table undeclared
    for (filename, _line, function), (_cc, _nc, tottime, _ct, _callers) in raw.items():
        name = bucket_of(filename, function)
        out[name] = out.get(name, 0.0) + tottime
    return dict(sorted(out.items(), key=lambda item: -item[1]))


def profile_run(options: MatrixOptions) -> tuple[pstats.Stats, int, float]:
    """One -j 1 harness run under cProfile: (stats, runs, wall seconds). The in-process proxy runs in the calling
    thread (`harness.rig.bridge.InlineLoop`), so one profile sees everything."""
    runs = len(Engine(options).planned_runs())
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    harness_run(options, 1)
    profile.disable()
    return pstats.Stats(profile), runs, time.perf_counter() - started


def print_profile(stats: pstats.Stats, runs: int, wall: float) -> None:
    """Top entries and the per-run time by bucket."""
    print(f"\nprofile of one harness -j1 run: {wall:.2f} s wall under cProfile, {runs} runs")
    print("-- own time per run by bucket (ms)")
    for name, seconds in buckets(stats).items():
        if seconds * 1000 / runs >= 0.05:
            print(f"{name:<44} {seconds * 1000 / runs:>7.2f}")
    stats.sort_stats("cumulative").print_stats(PROFILE_TOP)
    stats.sort_stats("tottime").print_stats(PROFILE_TOP)


def _parts() -> list[str]:
    parts = _names(PARTS_ENV) or list(PARTS)
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise SystemExit(f"{PARTS_ENV}: unknown part(s) {sorted(unknown)}; choose from {', '.join(PARTS)}")
    return parts


def main() -> None:
    """Measure the parts asked for (all by default)."""
    parts = _parts()
    options = options_from_env()
    rounds = int(os.environ.get(ROUNDS_ENV, "1"))
    for name in drivers.names():
        drivers.get(name)  # import every SDK before timing: import time is neither the harness's nor the floor's
    subset = ", ".join(options.only) if options.only else "all"
    print(f"parts: {', '.join(parts)}; subset: {subset}; transports: {', '.join(options.transports)}; rounds: {rounds}")
    if "subset" in parts:
        print_timings("default subset", measure(options, rounds))
    if "all" in parts:
        print_timings("all scenarios", measure(dataclasses.replace(options, only=None), rounds))
    if "main" in parts:
        counts = [int(j) for j in _names(JOBS_ENV) or []] or list(range(1, default_jobs() + 1))
        print_main_job(measure_main_job(counts, rounds))
    if "profile" in parts:
        print_profile(*profile_run(options))


if __name__ == "__main__":
    main()
