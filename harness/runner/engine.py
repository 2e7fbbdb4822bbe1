"""The engine: run every planned run once (baselines shared between cases), judge each case, feed the writers.

Runs go through a thread pool (`jobs`); results are judged and emitted in the plan's deterministic order, so a
parallel run reports exactly what a serial one does.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from harness.diff import judge, unsupported
from harness.plumbing import Environment
from harness.runner.execute import RunResult, Unexpressed, Unsupported, error_trace, run_once
from harness.runner.known import Known, load_known
from harness.runner.plan import Plan, RunOptions, capabilities, missing_capabilities, plan, runs_of
from harness.runner.run_events import CaseFinished, RunFinished, RunStarted, Writer
from harness.scenarios.model import Scenario
from harness.trace import Case, CaseResult, Run, RunTrace
from harness.trace.writer import write_case


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
        self.traces: dict[Run, RunResult] = {}
        """Finished runs (or why a run could not be expressed) by run."""
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

    def _one(self, run: Run, case_id: str) -> RunTrace:
        scenario = self._by_id[run.scenario]
        path = run.cassette(self.options.cassettes)
        if scenario.kind != "models_list" and not path.is_file():
            record = f"conformance record --backend {run.backend} --scenario {run.scenario}"
            return error_trace(run, case_id, f"missing cassette: {path} (run `{record}`)")
        try:
            return run_once(self.env, run, scenario, case_id)
        except Unsupported:
            raise
        except Exception as exc:  # the run boundary: any crash becomes an error trace, never lost
            return error_trace(run, case_id, f"{type(exc).__name__}: {exc}")

    def run_all(self, wanted: Mapping[Run, str], on_done: Callable[[Run], None] | None = None) -> None:
        """Run every wanted run (run -> id of the first case that needs it) not run yet, `jobs` at a time;
        `on_done` hears of each finished run in the calling thread, in the order of `wanted`."""

        def work(run: Run) -> RunResult:
            try:
                trace = self._one(run, wanted[run])
            except Unsupported as exc:
                return Unexpressed(str(exc))
            if self.options.on_progress:
                self.options.on_progress(wanted[run])
            return trace

        todo = [run for run in wanted if run not in self.traces]
        if self.options.jobs <= 1 or len(todo) <= 1:
            done: Iterable[RunResult] = map(work, todo)
            self._collect(todo, done, on_done)
            return
        with ThreadPoolExecutor(max_workers=self.options.jobs, thread_name_prefix="case") as pool:
            self._collect(todo, pool.map(work, todo), on_done)

    def _collect(self, todo: list[Run], done: Iterable[RunResult], on_done: Callable[[Run], None] | None) -> None:
        for run, result in zip(todo, done, strict=True):
            self.traces[run] = result
            if on_done is not None:
                on_done(run)

    def run_case(self, case: Case) -> CaseResult:
        """Run what one case still needs (its baselines may be cached) and judge it."""
        gap = self.gap(case)
        if gap is None:
            self.run_all({run: case.case_id for run in runs_of(case).values()})
        return self.judge(case, gap)

    def judge(self, case: Case, gap: str | None) -> CaseResult:
        """The verdict of one case from its cached runs (`gap`: the missing capability, if any)."""
        if gap is not None:
            return unsupported(case, gap)
        runs = {role: self.traces[run] for role, run in runs_of(case).items()}
        for result in runs.values():
            if isinstance(result, Unexpressed):
                return unsupported(case, result.reason)
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
        self.plan: Plan = plan(options)

    @property
    def scenarios(self) -> list[Scenario]:
        """The matrix's scenarios."""
        return list(self.plan.scenarios)

    @property
    def cases(self) -> list[Case]:
        """The matrix's cases, in order."""
        return list(self.plan.cases)

    def planned_runs(self) -> list[Run]:
        """Every distinct run the matrix needs (baselines shared between cases), in case order."""
        return list(self.plan.runs)

    def case_runner(self) -> CaseRunner:
        """A CaseRunner for this matrix, to run its cases one at a time (the pytest plugin's way)."""
        return CaseRunner(self.options, self.scenarios, self.plan.run_backends)

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
                [c.case_id for c in self.plan.cases],
                list(self.plan.frontends),
                list(self.plan.backends),
                [s.id for s in self.plan.scenarios],
                sut=self.options.sut or "built-in proxy",
                descriptions={s.id: s.description for s in self.plan.scenarios},
                rerun=list(self.options.rerun),
            )
        )
        tally = _Tally(known)
        # Each case is judged and emitted as soon as its runs are done (in plan order: runs are planned in the
        # order cases first need them), so writers such as the progress lines see the run advance.
        pending = deque(self.plan.cases)

        def judge_ready(_run: Run | None = None) -> None:
            while pending and all(r in runner.traces for r in self._runs_needed(pending[0])):
                case = pending.popleft()
                self._finish_case(tally.note(runner.judge(case, self.plan.gaps[case])))

        runner = self.case_runner()
        try:
            judge_ready()
            runner.run_all(self.plan.runs, on_done=judge_ready)
        finally:
            runner.close()
        judge_ready()
        finished = tally.finished(self.run_id, time.perf_counter() - started)
        self._emit(finished)
        return finished

    def _runs_needed(self, case: Case) -> list[Run]:
        return [] if self.plan.gaps[case] is not None else list(runs_of(case).values())

    def _finish_case(self, result: CaseResult) -> None:
        if self.options.write_traces:
            write_case(result, self.folder / "cases")
        self.options.results.append(result)
        self._emit(CaseFinished(result))


class _Tally:
    """The gate's bookkeeping over judged cases: known-failure notes, counts, new bugs and fixed cases."""

    def __init__(self, known: dict[str, Known]) -> None:
        self.known = known
        self.counts: dict[str, int] = {}
        self.new_bugs: list[str] = []
        self.fixed: list[str] = []

    def note(self, result: CaseResult) -> CaseResult:
        """Count one case; returns it with its known-failures reason when it is listed."""
        entry = self.known.get(result.case_id)
        if entry is not None:
            result = result.model_copy(update={"known": entry.reason})
        self.counts[result.verdict] = self.counts.get(result.verdict, 0) + 1
        is_bug = result.verdict.is_proxy_bug
        if is_bug and not (entry and entry.verdict == result.verdict):
            self.new_bugs.append(result.case_id)
        if entry is not None and not is_bug:
            self.fixed.append(result.case_id)
        return result

    def finished(self, run_id: str, duration_s: float) -> RunFinished:
        """The RunFinished event of the tallied run."""
        return RunFinished(run_id, duration_s, self.counts, self.new_bugs, self.fixed, 1 if self.new_bugs else 0)
