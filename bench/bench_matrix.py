"""Full-matrix replay wall time against the SDK floor, measured in the same run, as a ratio (the compass: <= 1.5x).

- harness: `Runner(RunOptions(jobs=1 | 2, write_traces=False)).run()` over the committed cassettes: every
  distinct run through the in-process proxy, checks, request- and response-side diffs, triage.
- SDK floor: exactly the SDK calls the runner makes (`Runner.planned_runs()`: one per (role, client, backend,
  scenario, stream)), each through the same driver call, answered by `httpx2.MockTransport` (`httpx` for
  ollama) with the recorded bytes of the client's own protocol for that scenario and mode
  (`cassettes/<client>/<scenario>.<mode>.yaml`, served by `Replayer.reply` once, before timing, and then
  replayed as plain bytes with their recorded chunk boundaries): no proxy, no harness around the call. The
  models-list scenario has no recording (the proxy answers it from its config): its floor serves the listing
  the proxy gave, captured once before timing.

Then one harness run (-j 1) under cProfile, the event-loop thread (the proxy) profiled too: top cumulative and
tottime entries, and the time per run by where it goes.

Environment: `BENCH_MATRIX_SCENARIOS` (comma list, or `all`; default a representative subset),
`BENCH_MATRIX_FRONTENDS` / `BENCH_MATRIX_BACKENDS` (comma lists; default all), `BENCH_MATRIX_ROUNDS` (timed
rounds, best kept; default 1), `BENCH_MATRIX_PROFILE=0` skips the profile.
"""

from __future__ import annotations

import cProfile
import dataclasses
import os
import pstats
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import httpx2

from bench._timing import Timing, interleaved_best
from harness import drivers, ir
from harness.drivers.base import SdkResult
from harness.plumbing import Environment, environment
from harness.plumbing.bridge import LoopThread
from harness.protocols import HttpRequest, registry
from harness.record import Replayer
from harness.runner.engine import Runner
from harness.runner.plan import RunOptions
from harness.scenarios.model import Scenario

SCENARIOS_ENV = "BENCH_MATRIX_SCENARIOS"
FRONTENDS_ENV = "BENCH_MATRIX_FRONTENDS"
BACKENDS_ENV = "BENCH_MATRIX_BACKENDS"
ROUNDS_ENV = "BENCH_MATRIX_ROUNDS"
PROFILE_ENV = "BENCH_MATRIX_PROFILE"

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
FLOOR_BASE = "http://floor.local"
PROFILE_TOP = 25


def _names(env: str) -> list[str] | None:
    text = os.environ.get(env, "").strip()
    return [n.strip() for n in text.split(",") if n.strip()] or None


def options_from_env(cassettes: Path = Path("cassettes"), scenarios: Path = Path("scenarios")) -> RunOptions:
    """The matrix to measure: the environment's selection, or the default subset; no traces written."""
    only = _names(SCENARIOS_ENV)
    if only is None:
        only = list(DEFAULT_SCENARIOS)
    elif only == ["all"]:
        only = None
    return RunOptions(
        scenarios=scenarios,
        cassettes=cassettes,
        frontends=_names(FRONTENDS_ENV),
        backends=_names(BACKENDS_ENV),
        only=only,
        write_traces=False,
    )


# --- the harness --------------------------------------------------------------------------------------------


def harness_run(options: RunOptions, jobs: int) -> dict[str, int]:
    """One full runner pass (environment, runs, judging) at `jobs`; the verdict counts."""
    return dict(Runner(dataclasses.replace(options, jobs=jobs, results=[])).run().counts)


# --- the SDK floor ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """A recorded answer: status, headers, body chunks as recorded."""

    status: int
    headers: Mapping[str, str]
    chunks: tuple[bytes, ...]


class _Chunks(httpx2.SyncByteStream, httpx.SyncByteStream):
    """A response body handed over chunk by chunk, as a socket would."""

    def __init__(self, chunks: tuple[bytes, ...]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


def _httpx(protocol: str) -> bool:
    return registry.sdk(protocol).http_client == "httpx"


def mock_client(protocol: str, answer: Callable[[HttpRequest], Reply]) -> Any:
    """An HTTP client whose transport answers in-process (`httpx` for the ollama SDK, else `httpx2`)."""

    def handler(request: httpx2.Request | httpx.Request) -> Any:
        http = HttpRequest(
            method=request.method,
            path=request.url.path,
            query=dict(request.url.params.multi_items()),
            headers={k.lower(): v for k, v in request.headers.items()},
            body=request.read(),
        )
        reply = answer(http)
        module: Any = httpx if _httpx(protocol) else httpx2
        return module.Response(reply.status, headers=dict(reply.headers), stream=_Chunks(reply.chunks))

    if _httpx(protocol):
        return httpx.Client(transport=httpx.MockTransport(handler), timeout=60.0)
    return httpx2.Client(transport=httpx2.MockTransport(handler), timeout=60.0)


def call(client: str, scenario: Scenario, request: ir.Request | None, stream: bool, http: Any) -> SdkResult:
    """The driver call a run makes (a listing, or the scenario's request), against `FLOOR_BASE`."""
    driver = drivers.get(client)
    with http:
        if request is None:
            return driver.list_models(base_url=FLOOR_BASE, http_client=http)
        return driver.run(request, stream=stream, base_url=FLOOR_BASE, http_client=http)


@dataclass(frozen=True)
class FloorCall:
    """One SDK call of the floor: who calls, with what, and the recorded answer it gets."""

    client: str
    scenario: Scenario
    request: ir.Request | None
    stream: bool
    reply: Reply


@dataclass
class Floor:
    """The SDK calls of a matrix with their recorded answers, captured before timing."""

    calls: list[FloorCall]

    def run_one(self, item: FloorCall) -> SdkResult:
        """One SDK call answered with its recorded bytes."""
        reply = item.reply
        http = mock_client(item.client, lambda _request: reply)
        return call(item.client, item.scenario, item.request, item.stream, http)

    def run(self, jobs: int) -> int:
        """Every call, `jobs` at a time (a thread pool, as the runner uses); the number of calls answered."""
        if jobs <= 1:
            results = [self.run_one(item) for item in self.calls]
        else:
            with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="floor") as pool:
                results = list(pool.map(self.run_one, self.calls))
        return len([r for r in results if answered(r)])


def answered(result: SdkResult) -> bool:
    """The SDK call came back with something: a response, events, an error or a model list."""
    return any(part is not None for part in (result.response, result.events, result.error, result.models))


def _recorded_reply(replayer: Replayer, client: str, scenario: Scenario, stream: bool) -> Reply:
    """The client protocol's own recording of the scenario, found by `Replayer.reply` from the SDK's request."""
    got: list[Reply] = []

    def answer(request: HttpRequest) -> Reply:
        wire = replayer.reply(client, request)
        got.append(Reply(wire.status, wire.headers, tuple(wire.chunks)))
        return got[-1]

    # The scenario id as the model: the replayer resolves the scenario by name, as it does behind the proxy.
    call(client, scenario, scenario.request_for(scenario.id, stream=stream), stream, mock_client(client, answer))
    if len(got) != 1:
        raise SystemExit(f"floor: {client} {scenario.id} made {len(got)} requests, expected one")
    return got[0]


def _proxy_listing(runner: Runner, client: str, scenario: Scenario) -> Reply:
    """The model listing the proxy answers the client with (no backend recording exists for it)."""
    got: list[Reply] = []

    def keep(response: Any) -> None:
        response.read()
        got.append(Reply(response.status_code, dict(response.headers), (response.content,)))

    env = Environment(runner.scenarios, runner.plan.run_backends, runner.options.cassettes)
    try:
        http = env.client("floor-listing", client)
        http.event_hooks = {"request": [], "response": [keep]}
        call(client, scenario, None, False, http)
    finally:
        env.close()
    if len(got) != 1:
        raise SystemExit(f"floor: {client} listing made {len(got)} requests, expected one")
    return got[0]


def prepare_floor(runner: Runner) -> Floor:
    """The floor's calls for every planned run of `runner`, with each answer fetched once (not timed)."""
    by_id = {s.id: s for s in runner.scenarios}
    replayer = Replayer(runner.options.cassettes, runner.scenarios)
    replies: dict[tuple[str, str, bool], Reply] = {}
    calls = []
    for run in runner.planned_runs():
        scenario = by_id[run.scenario]
        listing = scenario.kind == "models_list"
        answer_key = (run.client, run.scenario, run.stream)
        if answer_key not in replies:
            if listing:
                replies[answer_key] = _proxy_listing(runner, run.client, scenario)
            else:
                replies[answer_key] = _recorded_reply(replayer, run.client, scenario, run.stream)
        # The same request the runner's driver call sends, routed model name included.
        request = None if listing else scenario.request_for(run.route, stream=run.stream)
        calls.append(FloorCall(run.client, scenario, request, run.stream, replies[answer_key]))
    return Floor(calls)


# --- timing -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    """The timed figures of one matrix."""

    runs: int
    cases: int
    timings: dict[str, Timing]
    process_cpu_ns: dict[str, int]
    """Least CPU time of the whole process (every thread: pool workers and the proxy's loop) per contender."""
    counts: dict[str, int]
    """The harness's verdict counts (equal at -j1 and -j2)."""

    def ratio(self, jobs: int, *, cpu: bool = False) -> float:
        """Harness time over floor time at `jobs` (wall clock, or CPU time of the whole process)."""
        harness, floor = f"harness -j{jobs}", f"floor -j{jobs}"
        if cpu:
            return self.process_cpu_ns[harness] / max(self.process_cpu_ns[floor], 1)
        return self.timings[harness].best_ns / max(self.timings[floor].best_ns, 1)


def _with_process_cpu(name: str, fn: Callable[[], int], cpu: dict[str, int]) -> Callable[[], int]:
    # `interleaved_best` keeps the calling thread's CPU time, which misses the pool and loop threads.
    def run() -> int:
        start = time.process_time_ns()
        result = fn()
        cpu[name] = min(cpu.get(name, 2**63), time.process_time_ns() - start)
        return result

    return run


def measure(options: RunOptions, rounds: int) -> Measured:
    """Time the harness and the floor, serial and two at a time, in interleaved rounds."""
    runner = Runner(options)
    floor = prepare_floor(runner)
    if not floor.calls:
        raise SystemExit(f"nothing to measure: the selection has no runs ({options.only or 'all'})")
    counts: dict[str, dict[str, int]] = {}

    def harness(jobs: int) -> Callable[[], int]:
        def run() -> int:
            counts[f"-j{jobs}"] = harness_run(options, jobs)
            return sum(counts[f"-j{jobs}"].values())

        return run

    contenders = {
        "harness -j1": harness(1),
        "floor -j1": lambda: floor.run(1),
        "harness -j2": harness(2),
        "floor -j2": lambda: floor.run(2),
    }
    cpu: dict[str, int] = {}
    timings = interleaved_best({k: _with_process_cpu(k, fn, cpu) for k, fn in contenders.items()}, rounds=rounds)
    if counts["-j1"] != counts["-j2"]:
        raise SystemExit(f"harness: -j1 and -j2 verdicts differ: {counts['-j1']} != {counts['-j2']}")
    if timings["floor -j1"].result != len(floor.calls) or timings["floor -j2"].result != len(floor.calls):
        raise SystemExit("floor: some SDK calls returned nothing")
    return Measured(len(floor.calls), len(runner.cases), timings, cpu, counts["-j1"])


def print_timings(measured: Measured) -> None:
    """The wall and CPU times of each contender and the harness/floor ratios."""
    verdicts = ", ".join(f"{k} {v}" for k, v in measured.counts.items() if v)
    print(f"{measured.cases} cases ({verdicts}), {measured.runs} distinct SDK runs")
    print(f"{'contender':<12} {'wall s':>8} {'ms/run':>7} {'cpu s':>7}")
    for name, timing in measured.timings.items():
        ms_per_run = timing.best_ns / 1e6 / measured.runs
        print(f"{name:<12} {timing.seconds:>8.2f} {ms_per_run:>7.2f} {measured.process_cpu_ns[name] / 1e9:>7.2f}")
    for jobs in (1, 2):
        wall, cpu = measured.ratio(jobs), measured.ratio(jobs, cpu=True)
        print(f"harness/floor -j{jobs}: {wall:.2f}x wall, {cpu:.2f}x process CPU (compass <= 1.5x)")


# --- profile ------------------------------------------------------------------------------------------------


class _ProfiledLoop(LoopThread):
    """The runner's event-loop thread (where the in-process proxy runs) with a profiler of its own."""

    profiles: list[cProfile.Profile] = []

    def __init__(self) -> None:
        super().__init__()
        profile = cProfile.Profile()
        self.profiles.append(profile)
        self._profile = profile
        # Callbacks run in order on the loop's own thread: the profiler hooks that thread, not the caller's.
        self.loop.call_soon_threadsafe(profile.enable)

    def close(self) -> None:
        """Unhook the profiler (on the loop thread), then stop."""
        self.loop.call_soon_threadsafe(self._profile.disable)
        super().close()


# Where time goes, by the file (or built-in) a function's own time is spent in; first match wins.
BUCKETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("TLS contexts (SDK client construction)", ("load_verify_locations", "set_default_verify_paths")),
    ("waiting on the loop thread", ("method 'acquire' of '_thread.lock'", "method 'get' of '_queue.SimpleQueue'")),
    ("loop idle (waiting for a request or chunk)", ("method 'poll' of 'select.epoll'",)),
    ("harness/diff (losses, normalize, compare)", ("harness/diff/",)),
    ("deepdiff", ("deepdiff/", "orderly_set/")),
    ("harness/proxy", ("harness/proxy/",)),
    ("harness/protocols (codecs)", ("harness/protocols/",)),
    ("harness/wire + stream", ("harness/wire/", "harness/stream/")),
    ("harness/runner + bridge", ("harness/runner/",)),
    ("harness/drivers", ("harness/drivers/",)),
    ("YAML (scenarios, cassettes), vcrpy, replay", ("harness/record/", "vcr/", "yaml/", "_yaml")),
    ("harness other (scenarios, trace, ir)", ("harness/",)),
    ("pydantic", ("pydantic", "validate_python", "to_python", "SchemaSerializer", "SchemaValidator")),
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


def profile_run(options: RunOptions) -> tuple[pstats.Stats, pstats.Stats, int, float]:
    """One -j1 harness run under cProfile: (main-thread stats, loop-thread stats, runs, wall seconds)."""
    runs = len(Runner(options).planned_runs())
    main = cProfile.Profile()
    _ProfiledLoop.profiles = []
    with mock.patch.object(environment, "LoopThread", _ProfiledLoop):
        started = time.perf_counter()
        main.enable()
        harness_run(options, 1)
        main.disable()
        wall = time.perf_counter() - started
    loop = pstats.Stats(*_ProfiledLoop.profiles) if _ProfiledLoop.profiles else pstats.Stats(cProfile.Profile())
    return pstats.Stats(main), loop, runs, wall


def print_profile(main: pstats.Stats, loop: pstats.Stats, runs: int, wall: float) -> None:
    """Top entries of both threads and the per-run time by bucket."""
    print(f"\nprofile of one harness -j1 run: {wall:.2f} s wall under cProfile, {runs} runs")
    for title, stats in (("main thread (SDK drivers, judging)", main), ("loop thread (in-process proxy)", loop)):
        print(f"\n-- {title}: own time per run by bucket (ms)")
        for name, seconds in buckets(stats).items():
            if seconds * 1000 / runs >= 0.05:
                print(f"{name:<44} {seconds * 1000 / runs:>7.2f}")
        stats.sort_stats("cumulative").print_stats(PROFILE_TOP)
        stats.sort_stats("tottime").print_stats(PROFILE_TOP)


def main() -> None:
    """Measure the selected matrix against its floor, then profile one harness run."""
    options = options_from_env()
    rounds = int(os.environ.get(ROUNDS_ENV, "1"))
    for name in drivers.names():
        drivers.get(name)  # import every SDK before timing: import time is neither the harness's nor the floor's
    print(f"scenarios: {', '.join(options.only) if options.only else 'all'}; rounds: {rounds}")
    measured = measure(options, rounds)
    print_timings(measured)
    if os.environ.get(PROFILE_ENV, "1") != "0":
        print_profile(*profile_run(options))


if __name__ == "__main__":
    main()
