"""The engine: run every planned run once (baselines shared between cases), judge each case, feed the writers.

Runs go through a thread pool (`jobs`); results are judged and emitted in the plan's deterministic order, so a
parallel run reports exactly what a serial one does.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from harness.diff import judge, unsupported
from harness.plumbing import Environment, SetupError
from harness.record import CassetteError
from harness.runner import crash
from harness.runner.execute import RunResult, Unexpressed, Unsupported, error_trace, run_once
from harness.runner.known import Known, load_known
from harness.runner.plan import Plan, RunOptions, case_gap, plan, runs_of
from harness.runner.run_events import CaseFinished, RunFinished, RunStarted, Writer, gate_code
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
        self._setup_error: SetupError | None = None
        # Worker threads ask for the environment at once on the first runs: build it exactly once (two would
        # each start servers, and an external proxy's fixed replay port can only be bound once).
        self._env_lock = threading.Lock()

    @property
    def env(self) -> Environment:
        """The proxy wired to the replayed backends, built on first use. Raises SetupError (every time, without
        trying again) when it cannot be built: a replay port that cannot be bound, a system under test that does
        not answer."""
        with self._env_lock:
            if self._setup_error is not None:
                raise self._setup_error
            if self._env is None:
                try:
                    self._env = self._build()
                except SetupError as exc:
                    self._setup_error = exc
                    raise
        return self._env

    def _build(self) -> Environment:
        return Environment(
            self.scenarios,
            self.backends,
            self.options.cassettes,
            socket=self.options.socket,
            rechunk=self.options.rechunk,
            hooks=self.options.hooks,
            sut=self.options.sut,
            replay_host=self.options.replay_host,
            replay_port=self.options.replay_port,
            timeout=self.options.timeout,
        )

    def gap(self, case: Case) -> str | None:
        """Which party lacks a capability the case's scenario requires, in words; None when it can run."""
        return case_gap(self._by_id[case.scenario], case)

    def _one(self, run: Run, case_id: str) -> RunTrace:
        scenario = self._by_id[run.scenario]
        path = run.cassette(self.options.cassettes)
        if scenario.kind != "models_list" and not path.is_file():
            record = f"conformance record --backend {run.backend} --scenario {run.scenario}"
            return error_trace(run, case_id, f"missing cassette: {path} (run `{record}`)")
        try:
            if scenario.kind != "models_list":
                self.env.replayer.check(run.backend, run.scenario, run.stream)
            return run_once(self.env, run, scenario, case_id)
        except Unsupported:
            raise
        except (SetupError, CassetteError) as exc:
            return error_trace(run, case_id, str(exc))
        except Exception as exc:  # the run boundary: any crash becomes an error trace, never lost
            where = crash.where(exc)
            return error_trace(
                run, case_id, f"harness bug: {type(exc).__name__}: {exc}" + (f" (at {where})" if where else "")
            )

    def run_all(self, wanted: Mapping[Run, str]) -> None:
        """Run every wanted run (run -> id of the first case that needs it) not run yet, `jobs` at a time."""

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
            self.traces.update({run: work(run) for run in todo})
            return
        with ThreadPoolExecutor(max_workers=self.options.jobs, thread_name_prefix="case") as pool:
            self.traces.update(zip(todo, pool.map(work, todo), strict=True))

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
        traces: dict[str, RunTrace] = {role: t for role, t in runs.items() if isinstance(t, RunTrace)}
        return judge(case, traces, backend_reached=self.backend_reached(case.backend))

    def backend_reached(self, backend: str) -> bool:
        """Whether any translated run to `backend` so far reached it (through an external proxy: the replay server
        received its request). The whole matrix is run before any case is judged, so `conformance run` asks this
        of every run; the pytest plugin, case by case, of the runs so far."""
        return any(
            isinstance(t, RunTrace)
            and t.role == "translated"
            and t.upstream == backend
            and t.upstream_status is not None
            for t in self.traces.values()
        )

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
        """Run the matrix, emit events to the writers, and return the gate's summary. Raises SetupError before
        anything runs when the environment cannot be built (a replay port that cannot be bound, a system under
        test that does not answer)."""
        started = time.perf_counter()
        known = load_known(self.options.known)
        runner = self.case_runner()
        try:
            runner.env  # noqa: B018 -- fail in seconds, before the first case and before any report is started
            self._emit(
                RunStarted(
                    self.run_id,
                    [c.case_id for c in self.plan.cases],
                    list(self.plan.frontends),
                    list(self.plan.backends),
                    [s.id for s in self.plan.scenarios],
                    sut=self.options.sut or "built-in proxy",
                )
            )
            runner.run_all(self.plan.runs)
        finally:
            runner.close()
        results = [runner.judge(case, self.plan.gaps[case]) for case in self.plan.cases]
        return self._finish(results, known, started)

    def _finish(self, results: list[CaseResult], known: dict[str, Known], started: float) -> RunFinished:
        counts: dict[str, int] = {}
        new_bugs, fixed, errors, deviating = [], [], [], []
        for result in results:
            entry = known.get(result.case_id)
            if entry is not None:
                result = result.model_copy(update={"known": entry.reason})
            counts[result.verdict] = counts.get(result.verdict, 0) + 1
            is_bug = result.verdict.is_proxy_bug
            if is_bug and not (entry and entry.verdict == result.verdict):
                new_bugs.append(result.case_id)
            if result.verdict.is_harness_error:
                errors.append(result.case_id)
            elif entry is not None and not is_bug:
                fixed.append(result.case_id)
            if result.deviations:
                deviating.append(result.case_id)
            if self.options.write_traces:
                write_case(result, self.folder / "cases")
            self.options.results.append(result)
            self._emit(CaseFinished(result))
        finished = RunFinished(
            self.run_id,
            time.perf_counter() - started,
            counts,
            new_bugs,
            fixed,
            gate_code(new_bugs, errors, deviating, strict=self.options.strict),
            harness_errors=errors,
            deviating=deviating,
            strict=self.options.strict,
        )
        self._emit(finished)
        return finished
