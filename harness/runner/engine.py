"""The engine: run every planned run once (baselines shared between cases), judge each case, feed the writers.

The plan is cut into units that share nothing (`runner.units`: one per scenario and streaming mode). `-j 1` runs
them here, one after the other; `-j N` deals them to N worker processes (`runner.workers`), each writing its
units' traces and sending back the judged cases (pickled, not parsed again: a model's trace text parses back to an
equal model, `tests/trace/test_schema_agreement.py`, and `--validate-traces` checks each text where it is written).
Cases are emitted in the plan's order, so a parallel run reports byte for byte what a serial one does
(`tests/runner/test_workers.py`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import os
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from harness.diff import Compared, judge, unsupported
from harness.drivers.base import DUMMY_API_KEY
from harness.protocols import common
from harness.record import CassetteError
from harness.record.scrub import without_userinfo
from harness.rig import Environment, SetupError
from harness.rig.sut_client import SutClient
from harness.runner import crash, gc_pace, interrupts
from harness.runner.contradiction import checked
from harness.runner.execute import RunResult, Unexpressed, Unsupported, error_trace, run_once
from harness.runner.folder import clear_previous, content_hash, write_plan
from harness.runner.forkserver import warm_up
from harness.runner.known import Known, grown, load_known, matches
from harness.runner.plan import MatrixOptions, Plan, case_gap, plan, runs_of
from harness.runner.run_events import (
    CaseFinished,
    CaseJudged,
    MatrixFinished,
    MatrixStarted,
    RunnerEvent,
    Shard,
    UnitDone,
    UnitWork,
    UnitWriter,
    Writer,
    gate_code,
    judged_count,
)
from harness.runner.units import Unit, shard, units
from harness.runner.workers import Done, Link, Task, WorkerConfig, WorkerPool, portable
from harness.scenarios.model import Scenario
from harness.trace import Case, CaseResult, Run, RunTrace, case_text, parse_case
from harness.trace.bound import LARGE_CHARS
from harness.trace.pack import pack_line, trace_file, write_pack
from harness.trace.slim import SlimRuns, needs_triage, slim
from harness.trace.writer import write_case_text

STEADY_CLOCK = common.SOURCE_DATE_EPOCH
"""The reproducible-builds variable an encoder reads for the time it writes into a reply (`created`,
`created_at`): a steady run sets it (to `STEADY_TIME` unless set already) in each process that runs cases."""
STEADY_TIME = "1767225600"
"""2026-01-01T00:00:00Z: a real time, so a steady reply breaks no rule that a placeholder 0 would."""

Report = Callable[[str, str], None]
"""Told ("run", case id) after each run and ("case", case id) after each judged case."""


class CaseRunner:
    """Runs cases against one shared environment, each distinct run once: baselines are shared between cases.

    `Engine.run` feeds it the whole matrix at once; the pytest plugin asks for one case at a time. The
    environment is built on first use and serves every later case until `close`.
    """

    def __init__(self, options: MatrixOptions, scenarios: Sequence[Scenario], backends: Sequence[str]) -> None:
        self.options = options
        self.scenarios = list(scenarios)
        self.backends = list(backends)
        """Every backend a run may talk to (the matrix's backends and the frontends' own, for baselines)."""
        self.traces: dict[Run, RunResult] = {}
        """Finished runs (or why a run could not be expressed) by run."""
        self._by_id = {s.id: s for s in self.scenarios}
        self._env: Environment | None = None
        self._setup_error: SetupError | None = None
        self._reached: set[str] = set()
        """Backends a translated run reached, among the runs already forgotten (`execute` drops its runs)."""
        self._known: dict[str, Known] | None = None
        self.unit_work: Mapping[str, UnitWork] = {}
        """The writers' work on each task's judged cases (`execute` puts what it makes in `Done.parts`)."""
        self._set_clock = options.steady and STEADY_CLOCK not in os.environ
        if self._set_clock:
            os.environ[STEADY_CLOCK] = STEADY_TIME

    @property
    def sut_client(self) -> SutClient:
        """The options' client key and headers for an external proxy, knowing the key the SDK drivers send."""
        return dataclasses.replace(self.options.sut_client or SutClient(), placeholder_key=DUMMY_API_KEY)

    @property
    def env(self) -> Environment:
        """The proxy wired to the replayed backends, built on first use. Raises SetupError (every time, without
        trying again) when it cannot be built: a replay port that cannot be bound, a system under test that does
        not answer."""
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
            pace=self.options.pace,
            hooks=self.options.hooks,
            sut=self.options.sut,
            replay_host=self.options.replay_host,
            replay_port=self.options.replay_port,
            timeout=self.options.timeout,
            sut_client=self.sut_client,
            models=self.options.upstream_models,
        )

    def gap(self, case: Case) -> str | None:
        """Which party lacks a capability the case's scenario requires, in words; None when it can run."""
        return case_gap(self._by_id[case.scenario], case, builtin=self.options.sut is None)

    def _one(self, run: Run, case_id: str) -> RunTrace:
        scenario = self._by_id[run.scenario]
        unread = scenario.kind != "models_list" and not self._loaded(run)
        if unread:
            path = run.cassette(self.options.cassettes)
            if not path.is_file():
                record = f"conformance record --backend {run.backend} --scenario {run.scenario}"
                return error_trace(run, case_id, f"missing cassette: {path} (run `{record}`)")
        try:
            if unread:
                self.env.replayer.check(run.backend, run.scenario, run.stream)
            trace = run_once(self.env, run, scenario, case_id)
        except Unsupported:
            raise
        except (SetupError, CassetteError) as exc:
            return error_trace(run, case_id, str(exc))
        except Exception as exc:  # the run boundary: any crash becomes an error trace, never lost
            crash.reraise_interrupt(exc)
            where = crash.where(exc)
            return error_trace(
                run, case_id, f"harness bug: {type(exc).__name__}: {exc}" + (f" (at {where})" if where else "")
            )
        return trace.steady() if self.options.steady else trace

    def _loaded(self, run: Run) -> bool:
        """Whether the environment is built and its replayer holds the run's recording already (`Replayer.loaded`):
        an earlier run found its file, so this one neither looks for it again nor works out its path."""
        return self._env is not None and self._env.replayer.loaded(run.backend, run.scenario, run.stream)

    def run_here(self, wanted: Mapping[Run, str], report: Report | None) -> None:
        """Run in this process every wanted run (run -> id of the first case that needs it) not run yet."""
        for run, case_id in wanted.items():
            interrupts.raise_pending()
            if run in self.traces:
                continue
            try:
                self.traces[run] = self._one(run, case_id)
            except Unsupported as exc:
                self.traces[run] = Unexpressed(str(exc))
            if report is not None:
                report("run", case_id)

    def run_all(self, wanted: Mapping[Run, str]) -> None:
        """Run every wanted run (run -> id of the first case that needs it) not run yet: here, or with `jobs` above
        one in that many worker processes (one unit of runs per scenario and streaming mode each)."""
        todo = {run: case_id for run, case_id in wanted.items() if run not in self.traces}
        by_unit: dict[tuple[str, bool], list[tuple[Run, str]]] = {}
        for run, case_id in todo.items():
            by_unit.setdefault((run.scenario, run.stream), []).append((run, case_id))
        progress = self.options.on_progress
        if self.options.jobs <= 1 or len(by_unit) <= 1:
            self.run_here(todo, (lambda _kind, case_id: progress(case_id)) if progress else None)
            return
        tasks = [Task(i, tuple(runs), keep_traces=True) for i, runs in enumerate(by_unit.values())]
        config = WorkerConfig(portable(self.options), tuple(self.scenarios), tuple(self.backends))
        with WorkerPool(worker_main, config, self.options.jobs, on_progress=progress) as pool:
            for done in pool.run(tasks):
                for run, kind, text in done.traces:
                    self.traces[run] = RunTrace.model_validate_json(text) if kind == "trace" else Unexpressed(text)

    def execute(self, task: Task, report: Report | None = None) -> Done:
        """Run a task here: its runs (those marked failed get an error trace instead), then judge, check and (with
        `write_traces`) write its cases. Its runs are forgotten afterwards: no other task needs them."""
        started = time.process_time()
        first = dict(task.runs)
        for run, reason in task.failed.items():
            self.traces[run] = error_trace(run, first.get(run, ""), reason)
        self.run_here(first, report)
        done = Done(task.number)
        packs: dict[str, list[str]] = {}
        slimmed: SlimRuns = {}
        kept: dict[str, Compared] = {}  # the views each verdict compared, for the writers' unit work
        for case, gap in task.cases:
            result = self._known_note(self.judge(case, gap, kept))
            whole = needs_triage(result)
            if self.options.keep_traces != "all" and not whole:
                result = slim(result, slimmed)  # a clean pass keeps its verdict, checks and timings, not its wire
            text = case_text(result) if whole else pack_line(result)
            if self.options.validate_traces:
                parse_case(text, case.case_id, full_check=True)
            if len(text) > LARGE_CHARS:  # a huge answer's trace is cut (`bound`): the case is what was written
                result = parse_case(text, case.case_id)
            if whole and self.options.write_traces:
                write_case_text(case.case_id, text, self.cases_folder)
            elif not whole:
                packs.setdefault(trace_file(result), []).append(text)
            done.results.append(result)
            if case.case_id in kept and kept[case.case_id].of(result) is None:
                del kept[case.case_id]  # slimmed or read back: its views are not of its runs now (nor kept in memory)
            if report is not None:
                report("case", case.case_id)
        if self.options.write_traces:
            for name, lines in packs.items():
                write_pack(self.cases_folder, name, lines)
        if task.cases:
            done.parts = {key: work(done.results, kept) for key, work in self.unit_work.items()}
        if task.keep_traces:
            for run, _ in task.runs:
                outcome = self.traces[run]
                done.traces.append(
                    (run, "trace", outcome.model_dump_json())
                    if isinstance(outcome, RunTrace)
                    else (run, "unexpressed", outcome.reason)
                )
        for run in first:
            reached = _reached(self.traces.pop(run, None))
            if reached is not None:
                self._reached.add(reached)
        done.cpu_s = time.process_time() - started
        return done

    @property
    def cases_folder(self) -> Path:
        """Where case traces are written: `<reports>/<run id>/cases`."""
        if self.options.run_id is None:
            raise ValueError("writing case traces needs a run id")
        return self.options.reports / self.options.run_id / "cases"

    def _known_note(self, result: CaseResult) -> CaseResult:
        if self._known is None:
            self._known = load_known(self.options.known)
        entry = self._known.get(result.case_id)
        # Known only while the entry still holds this bug: same verdict, no part of its signature beyond the entry's
        # (a harness error or another verdict is never known; a second bug on the case is new).
        if entry is None or not result.verdict.is_proxy_bug:
            return result
        if not matches(entry, result):
            extra = grown(entry, result) if entry.verdict == result.verdict else []
            if not extra:
                return result
            more = f" (+{len(extra) - 3} more)" if len(extra) > 3 else ""
            why = f"{result.reason} [new beyond its known-failures entry: {', '.join(extra[:3])}{more}]"
            return result.model_copy(update={"reason": why})
        return result.model_copy(update={"known": entry.reason})

    def run_case(self, case: Case) -> CaseResult:
        """Run what one case still needs (its baselines may be cached) and judge it."""
        gap = self.gap(case)
        if gap is None:
            self.run_all({run: case.case_id for run in runs_of(case).values()})
        return self.judge(case, gap)

    def judge(self, case: Case, gap: str | None, keep: dict[str, Compared] | None = None) -> CaseResult:
        """The verdict of one case from its cached runs (`gap`: the missing capability, if any; `keep`: where the
        views its response side compared are put, by case id)."""
        if gap is not None:
            return unsupported(case, gap)
        runs = {role: self.traces[run] for role, run in runs_of(case).items()}
        for result in runs.values():
            if isinstance(result, Unexpressed):
                return unsupported(case, result.reason)
        traces: dict[str, RunTrace] = {role: t for role, t in runs.items() if isinstance(t, RunTrace)}
        # A baseline failing its own scenario on a reference recording: a scenario error (exit 2), not a backend issue.
        reached = self.backend_reached(case.backend)
        return checked(judge(case, traces, backend_reached=reached, keep=keep), self.options.cassettes)

    def backend_reached(self, backend: str) -> bool:
        """Whether any translated run to `backend` so far reached it (through an external proxy: the replay server
        received its request). The whole matrix is run before any case is judged, so `conformance run` asks this
        of every run; the pytest plugin, case by case, of the runs so far."""
        return backend in self._reached or any(_reached(t) == backend for t in self.traces.values())

    def close(self) -> None:
        """Stop the environment, if it was built (and unset the steady clock, if this runner set it)."""
        if self._env is not None:
            self._env.close()
            self._env = None
        if self._set_clock:
            os.environ.pop(STEADY_CLOCK, None)
            self._set_clock = False


def _reached(outcome: RunResult | None) -> str | None:
    """The backend a translated run reached (the replay server received its request), else None."""
    if isinstance(outcome, RunTrace) and outcome.role == "translated" and outcome.upstream_status is not None:
        return outcome.upstream
    return None


class NothingToJudge(ValueError):
    """The plan holds no case: a gate that judged nothing must not pass (the message names the cause)."""


def worker_main(link: Link, config: WorkerConfig) -> None:
    """A worker's life: build the runner once, then run each task it is sent until told to stop."""
    runner = CaseRunner(config.options, config.scenarios, config.backends)
    runner.unit_work = config.unit_work
    try:
        link.conn.send(("ready", None))
        with gc_pace.paced():
            _serve(link, runner)
    except (EOFError, BrokenPipeError):  # the parent is gone: nothing left to do
        return
    finally:
        runner.close()


def _serve(link: Link, runner: CaseRunner) -> None:
    """Run each task the parent sends until told to stop (None) or the harness fails outside a run."""
    conn = link.conn
    while True:
        task = conn.recv()
        if task is None:
            return
        try:
            done = runner.execute(task, link.report)
        except Exception:  # the harness failed outside a run's boundary: the parent raises it as WorkerError
            conn.send(("error", traceback.format_exc()))
            return
        conn.send(("done", done))


class Engine:
    """Runs the matrix: each case's three runs, judged, handed to the writers (one run of a case is a `Run`)."""

    def __init__(self, options: MatrixOptions, writers: Sequence[Writer] = ()) -> None:
        self.options = options
        self.writers = list(writers)
        self.run_id = options.run_id or dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.folder = options.reports / self.run_id
        if options.jobs > 1 and options.sut is None:
            warm_up()  # the workers' fork server imports the SDKs while this process plans
        self.plan: Plan = plan(options)
        every = units(self.plan)
        self.units: list[Unit] = shard(every, *options.shard) if options.shard else every
        """The units this run runs: the whole plan's, or its shard's."""
        self.results: list[CaseResult] = []
        """Each judged case, in the order they were judged (filled by `run`)."""
        self.worker_cpu_s = 0.0
        """CPU seconds worker processes spent on this run's units (0 when it ran in this process)."""
        mine = {case for unit in self.units for case in unit.cases}
        self._cases = [case for case in self.plan.cases if case in mine]

    @property
    def scenarios(self) -> list[Scenario]:
        """The matrix's scenarios."""
        return list(self.plan.scenarios)

    @property
    def cases(self) -> list[Case]:
        """The cases this run judges (the shard's, with `shard`), in plan order."""
        return list(self._cases)

    def planned_runs(self) -> list[Run]:
        """Every distinct run this run makes (baselines shared between cases), in case order."""
        mine = {run for unit in self.units for run, _ in unit.runs}
        return [run for run in self.plan.runs if run in mine]

    def case_runner(self) -> CaseRunner:
        """A CaseRunner for this matrix, to run its cases one at a time (the pytest plugin's way)."""
        return CaseRunner(self.options, self.scenarios, self.plan.run_backends)

    @property
    def jobs(self) -> int:
        """Worker processes this run uses: `jobs`, at most one per unit; one with an external proxy, whose replay
        server listens on one port that a single process can bind."""
        return 1 if self.options.sut is not None else max(1, min(self.options.jobs, len(self.units)))

    def _results(
        self, runner: CaseRunner | None, started: MatrixStarted, closing: contextlib.ExitStack
    ) -> list[CaseResult]:
        """Every case's result, in plan order: run here by `runner` (`jobs` 1) or by the worker processes (entered
        on `closing`: they wind down while the report is written)."""
        tasks = [
            Task(number, unit.runs, tuple((case, self.plan.gaps[case]) for case in unit.cases))
            for number, unit in enumerate(self.units)
        ]
        progress = self.options.on_progress
        if runner is not None:
            report: Report | None = (
                (lambda kind, case_id: progress(case_id) if kind == "run" else None) if progress else None
            )
            if self.options.sut is not None:  # judge only once every run is in: did the proxy reach each backend?
                for task in tasks:
                    runner.run_here(dict(task.runs), report)
            checked = {}
            runner.unit_work = self._unit_work(started)
            for task in tasks:
                done = runner.execute(task, report)
                for result in done.results:
                    checked[result.case_id] = result
                    self._emit(CaseJudged(result))
                self._unit_done(task, done)
        else:
            options = dataclasses.replace(self.options, run_id=self.run_id)
            config = WorkerConfig(
                portable(options), tuple(self.scenarios), tuple(self.plan.run_backends), self._unit_work(started)
            )
            checked = {}
            by_number = {task.number: task for task in tasks}

            def parse(done: Done) -> None:  # as each unit arrives, while the workers go on with the others
                for result in done.results:
                    checked[result.case_id] = result
                    self._emit(CaseJudged(result))
                self._unit_done(by_number[done.number], done)

            timeout = self.options.stall_timeout
            pool = closing.enter_context(
                WorkerPool(worker_main, config, self.jobs, on_progress=progress, on_done=parse, stall_timeout=timeout)
            )
            pool.run(tasks)
            self.worker_cpu_s = pool.cpu_s
        return [checked[case.case_id] for case in self.cases]

    def _unit_work(self, started: MatrixStarted) -> dict[str, UnitWork]:
        """The unit work of the writers that have some, by key."""
        return dict(w.unit_work(started) for w in self.writers if isinstance(w, UnitWriter))

    def _unit_done(self, task: Task, done: Done) -> None:
        if done.parts and task.cases:
            case = task.cases[0][0]
            self._emit(UnitDone(case.scenario, case.stream, done.parts))

    def _emit(self, event: RunnerEvent) -> None:
        for writer in self.writers:
            writer.handle(event)

    def run(self) -> MatrixFinished:
        """Run the matrix, emit events to the writers, and return the gate's summary. Raises SetupError before
        anything runs when the environment cannot be built (a replay port that cannot be bound, a system under
        test that does not answer)."""
        with gc_pace.paced():
            return self._run()

    def _run(self) -> MatrixFinished:
        started = time.perf_counter()
        if not self.cases:
            raise NothingToJudge(self._why_no_case())
        known = load_known(self.options.known)
        options = dataclasses.replace(self.options, run_id=self.run_id)
        runner = CaseRunner(options, self.scenarios, self.plan.run_backends) if self.jobs <= 1 else None
        with contextlib.ExitStack() as closing:  # the workers are waited for once the report is written
            if runner is not None:
                closing.callback(runner.close)
                runner.env  # noqa: B018 -- fail in seconds, before the first case and before any report is started
            if self.options.write_traces:
                clear_previous(self.folder)
                hashes = {s.id: content_hash(s) for s in self.plan.scenarios}
                write_plan(self.folder, self.run_id, [c.case_id for c in self.cases], self.options.rerun, hashes)
            beginning = MatrixStarted(
                self.run_id,
                [c.case_id for c in self.cases],
                list(self.plan.frontends),
                list(self.plan.backends),
                [s.id for s in self.plan.scenarios],
                sut=without_userinfo(self.options.sut) if self.options.sut else "built-in proxy",
                shard=Shard(*self.options.shard, len(self.plan.cases)) if self.options.shard else None,
                descriptions={s.id: s.description for s in self.plan.scenarios},
                rerun=list(self.options.rerun),
            )
            self._emit(beginning)
            results = self._results(runner, beginning, closing)
            return self._finish(results, known, started)

    def _why_no_case(self) -> str:
        """Why the plan holds no case, in words the user can act on: no recordings, or filters that match nothing."""
        options = self.options
        if options.backends is None and not self.plan.backends:
            folder = options.cassettes
            state = "does not exist" if not folder.exists() else "holds no backend's recordings (cassettes/<backend>/)"
            return f"nothing to judge: --cassettes {folder} {state}; no backend to run against"
        filters = [
            f"{flag} {','.join(value)}"
            for flag, value in (
                ("--frontend", options.frontends),
                ("--backend", options.backends),
                ("--scenario", options.only),
            )
            if value is not None
        ]
        modes = {(True, False): "", (True,): "--streaming stream", (False,): "--streaming nonstream"}
        mode = modes.get(tuple(options.streams), "")
        if mode:
            filters.append(mode)
        if options.shard:
            filters.append(f"--shard {options.shard[0]}/{options.shard[1]}")
        return f"nothing to judge: no case matches {' '.join(filters) or 'the matrix'}"

    def _finish(self, results: list[CaseResult], known: dict[str, Known], started: float) -> MatrixFinished:
        counts: dict[str, int] = {}
        new_bugs, fixed, errors, deviating = [], [], [], []
        for result in results:
            entry = known.get(result.case_id)
            counts[result.verdict] = counts.get(result.verdict, 0) + 1
            is_bug = result.verdict.is_proxy_bug
            if is_bug and not (entry and matches(entry, result)):
                new_bugs.append(result.case_id)
            if result.verdict.is_harness_error:
                errors.append(result.case_id)
            elif entry is not None and not is_bug:
                fixed.append(result.case_id)
            if result.deviations:
                deviating.append(result.case_id)
            self.results.append(result)
            self._emit(CaseFinished(result))
        judged = judged_count([r.verdict for r in results])
        finished = MatrixFinished(
            self.run_id,
            0.0 if self.options.steady else time.perf_counter() - started,
            counts,
            new_bugs,
            fixed,
            gate_code(new_bugs, errors, deviating, strict=self.options.strict, judged=judged),
            harness_errors=errors,
            deviating=deviating,
            strict=self.options.strict,
        )
        self._emit(finished)
        return finished
