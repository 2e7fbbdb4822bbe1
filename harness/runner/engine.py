"""The runner: expand the matrix, run every case's three runs (baselines shared), judge, and feed the writers.

Runs go through a thread pool (`jobs`); results are judged and emitted in the matrix's deterministic order, so
a parallel run reports exactly what a serial one does.
"""

from __future__ import annotations

import datetime as dt
import functools
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from harness import drivers
from harness.diff import Verdict
from harness.protocols import registry
from harness.proxy import TranslateHooks
from harness.record import Rechunk
from harness.record.layout import cassette_path
from harness.runner.environment import Environment
from harness.runner.events import CaseFinished, RunFinished, RunStarted, Writer
from harness.runner.execute import Unsupported, error_trace, run_once
from harness.runner.judge import judge
from harness.runner.known import Known, load_known
from harness.runner.matrix import Case, expand, missing_capabilities
from harness.scenarios.loader import load_scenarios
from harness.scenarios.model import Scenario
from harness.trace.model import CaseResult, RunRole, RunTrace
from harness.trace.writer import write_case

RunKey = tuple[RunRole, str, str, str, bool]  # role, client, backend, scenario, stream


@dataclass
class RunOptions:
    """What to run and how."""

    scenarios: Path = Path("scenarios")
    cassettes: Path = Path("cassettes")
    reports: Path = Path("reports")
    frontends: Sequence[str] | None = None
    backends: Sequence[str] | None = None
    only: Sequence[str] | None = None
    streams: Sequence[bool] = (True, False)
    jobs: int = 1
    socket: bool = False
    rechunk: Rechunk | None = None
    known: Path = Path("conformance-known.toml")
    run_id: str | None = None
    hooks: TranslateHooks | None = None
    sut: str | None = None
    """URL of a proxy in another process for the translated runs (baselines stay on the built-in pass-through)."""
    replay_host: str = "127.0.0.1"
    """Interface of the replay server an external proxy's upstreams point at (`sut` only)."""
    replay_port: int = 8790
    """Port of that replay server (0: any free port, for tests that read it back)."""
    write_traces: bool = True
    on_progress: Callable[[str], None] | None = None
    results: list[CaseResult] = field(default_factory=list)


def default_frontends() -> list[str]:
    """Frontends that have both an SDK driver and a codec."""
    return [name for name in drivers.names() if name in registry.names()]


def default_backends(cassettes: Path) -> list[str]:
    """Backends that have recordings."""
    if not cassettes.is_dir():
        return []
    return sorted(p.name for p in cassettes.iterdir() if p.is_dir() and p.name in registry.names())


def capabilities(case: Case) -> dict[str, frozenset[str]]:
    """What each party of a case can do."""
    backend_client = registry.get(case.backend).family
    return {
        f"{case.frontend} SDK": frozenset(drivers.get(case.frontend).capabilities),
        f"{case.frontend} frontend": frozenset(registry.get(case.frontend).capabilities),
        f"{case.backend} backend": frozenset(registry.get(case.backend).capabilities),
        f"{backend_client} SDK": frozenset(drivers.get(backend_client).capabilities),
    }


def runs_of(case: Case) -> dict[RunRole, RunKey]:
    """The keys of a case's three runs, by role (baselines are shared by every case that needs the same one)."""
    backend_client = registry.get(case.backend).family
    return {
        "baseline_frontend": ("baseline_frontend", case.frontend, case.frontend, case.scenario, case.stream),
        "baseline_backend": ("baseline_backend", backend_client, case.backend, case.scenario, case.stream),
        "translated": ("translated", case.frontend, case.backend, case.scenario, case.stream),
    }


class CaseRunner:
    """Runs cases against one shared environment, each distinct run once: baselines are shared between cases.

    `Runner.run` feeds it the whole matrix at once; the pytest plugin asks for one case at a time. The
    environment is built on first use and serves every later case until `close`.
    """

    def __init__(self, options: RunOptions, scenarios: Sequence[Scenario], backends: Sequence[str]) -> None:
        self.options = options
        self.scenarios = list(scenarios)
        self.backends = list(backends)
        """Every backend a run may talk to (the matrix's backends and the frontends' own, for baselines)."""
        self.traces: dict[RunKey, RunTrace | str] = {}
        """Finished runs (a string: the SDK could not express the request) by run key."""
        self._by_id = {s.id: s for s in self.scenarios}
        self._env: Environment | None = None
        # Worker threads ask for the environment at once on the first runs: build it exactly once (two would
        # each start servers, and an external proxy's fixed replay port can only be bound once).
        self._env_lock = threading.Lock()

    @property
    def env(self) -> Environment:
        """The proxy wired to the replayed backends, built on first use."""
        with self._env_lock:
            if self._env is None:
                self._env = Environment(
                    self.scenarios,
                    self.backends,
                    self.options.cassettes,
                    socket=self.options.socket,
                    rechunk=self.options.rechunk,
                    hooks=self.options.hooks,
                    sut=self.options.sut,
                    replay_host=self.options.replay_host,
                    replay_port=self.options.replay_port,
                )
        return self._env

    def gap(self, case: Case) -> str | None:
        """Which party lacks a capability the case's scenario requires, in words; None when it can run."""
        return missing_capabilities(self._by_id[case.scenario], capabilities(case))

    def _one(self, key: RunKey, case_id: str) -> RunTrace:
        role, client, backend, scenario_id, stream = key
        mode: Literal["passthrough", "translate"] = "translate" if role == "translated" else "passthrough"
        scenario = self._by_id[scenario_id]
        path = cassette_path(self.options.cassettes, backend, scenario_id, stream)
        failed = functools.partial(
            error_trace,
            case_id=case_id,
            role=role,
            scenario=scenario_id,
            client=client,
            backend=backend,
            mode=mode,
            stream=stream,
        )
        if scenario.kind != "models_list" and not path.is_file():
            record = f"conformance record --backend {backend} --scenario {scenario_id}"
            return failed(error=f"missing cassette: {path} (run `{record}`)")
        try:
            return run_once(
                self.env,
                case_id=case_id,
                role=role,
                scenario=scenario,
                client=client,
                backend=backend,
                mode=mode,
                stream=stream,
            )
        except Unsupported:
            raise
        except Exception as exc:  # the run boundary: any crash becomes an error trace, never lost
            return failed(error=f"{type(exc).__name__}: {exc}")

    def run_all(self, wanted: dict[RunKey, str]) -> None:
        """Run every wanted run (key -> id of the first case that needs it) not run yet, `jobs` at a time."""

        def work(key: RunKey) -> RunTrace | str:
            try:
                trace = self._one(key, wanted[key])
            except Unsupported as exc:
                return str(exc)
            if self.options.on_progress:
                self.options.on_progress(wanted[key])
            return trace

        keys = [k for k in wanted if k not in self.traces]
        if self.options.jobs <= 1 or len(keys) <= 1:
            self.traces.update({k: work(k) for k in keys})
            return
        with ThreadPoolExecutor(max_workers=self.options.jobs, thread_name_prefix="case") as pool:
            self.traces.update(zip(keys, pool.map(work, keys), strict=True))

    def run_case(self, case: Case) -> CaseResult:
        """Run what one case still needs (its baselines may be cached) and judge it."""
        gap = self.gap(case)
        if gap is None:
            self.run_all({key: case.case_id for key in runs_of(case).values()})
        return self.judge(case, gap)

    def judge(self, case: Case, gap: str | None) -> CaseResult:
        """The verdict of one case from its cached runs (`gap`: the missing capability, if any)."""
        if gap is not None:
            return judge(case, {}, unsupported=gap)
        runs = {role: self.traces[key] for role, key in runs_of(case).items()}
        unsupported = next((r for r in runs.values() if isinstance(r, str)), None)
        if unsupported is not None:
            return judge(case, {}, unsupported=unsupported)
        return judge(case, {role: t for role, t in runs.items() if isinstance(t, RunTrace)})

    def close(self) -> None:
        """Stop the environment, if it was built."""
        if self._env is not None:
            self._env.close()
            self._env = None


class Runner:
    """One matrix run."""

    def __init__(self, options: RunOptions, writers: Sequence[Writer] = ()) -> None:
        self.options = options
        self.writers = list(writers)
        self.run_id = options.run_id or dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.folder = options.reports / self.run_id
        self.scenarios = load_scenarios(options.scenarios)
        if options.only:
            unknown = set(options.only) - {s.id for s in self.scenarios}
            if unknown:
                raise ValueError(f"unknown scenario(s): {', '.join(sorted(unknown))}")
            self.scenarios = [s for s in self.scenarios if s.id in set(options.only)]
        self.frontends = list(options.frontends or default_frontends())
        self.backends = list(options.backends or default_backends(options.cassettes))
        for name in [*self.frontends, *self.backends]:
            registry.get(name)  # unknown names fail here, before anything runs
        self.cases = expand(self.scenarios, self.frontends, self.backends, streams=options.streams)

    def _plan(self) -> tuple[dict[Case, str | None], dict[RunKey, str]]:
        """Each case's capability gap, and every distinct run the runnable cases need (baselines shared),
        in case order, with the id of the first case that needs it."""
        by_id = {s.id: s for s in self.scenarios}
        gaps = {case: missing_capabilities(by_id[case.scenario], capabilities(case)) for case in self.cases}
        wanted: dict[RunKey, str] = {}
        for case in self.cases:
            if gaps[case] is None:
                for key in runs_of(case).values():
                    wanted.setdefault(key, case.case_id)
        return gaps, wanted

    def planned_runs(self) -> list[RunKey]:
        """Every distinct run the matrix needs (baselines shared between cases), in case order."""
        return list(self._plan()[1])

    def case_runner(self) -> CaseRunner:
        """A CaseRunner for this matrix, to run its cases one at a time (the pytest plugin's way)."""
        return self._case_runner(self._plan()[1])

    def _case_runner(self, wanted: dict[RunKey, str]) -> CaseRunner:
        backends = {key[2] for key in wanted} | set(self.backends)
        return CaseRunner(self.options, self.scenarios, sorted(backends))

    def _emit(self, event: RunStarted | CaseFinished | RunFinished) -> None:
        for writer in self.writers:
            writer.handle(event)

    def run(self) -> RunFinished:
        """Run the matrix, emit events to the writers, and return the gate's summary."""
        started = time.perf_counter()
        known = load_known(self.options.known)
        self._emit(
            RunStarted(
                self.run_id,
                [c.case_id for c in self.cases],
                self.frontends,
                self.backends,
                [s.id for s in self.scenarios],
                sut=self.options.sut or "built-in proxy",
            )
        )
        gaps, wanted = self._plan()
        runner = self._case_runner(wanted)
        try:
            runner.run_all(wanted)
        finally:
            runner.close()
        results = [runner.judge(case, gaps[case]) for case in self.cases]
        return self._finish(results, known, started)

    def _finish(self, results: list[CaseResult], known: dict[str, Known], started: float) -> RunFinished:
        counts: dict[str, int] = {}
        new_bugs, fixed = [], []
        for result in results:
            entry = known.get(result.case_id)
            if entry is not None:
                result = result.model_copy(update={"known": entry.reason})
            counts[result.verdict] = counts.get(result.verdict, 0) + 1
            is_bug = Verdict(result.verdict).is_proxy_bug
            if is_bug and not (entry and entry.verdict == result.verdict):
                new_bugs.append(result.case_id)
            if entry is not None and not is_bug:
                fixed.append(result.case_id)
            if self.options.write_traces:
                write_case(result, self.folder / "cases")
            self.options.results.append(result)
            self._emit(CaseFinished(result))
        finished = RunFinished(
            self.run_id, time.perf_counter() - started, counts, new_bugs, fixed, 1 if new_bugs else 0
        )
        self._emit(finished)
        return finished
