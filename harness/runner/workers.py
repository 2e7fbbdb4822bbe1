"""Worker processes: `-j N` runs the plan's units in N processes, each with one environment built once.

Threads cannot do this: the SDK calls, the proxy and the diff are Python code, and one interpreter lock runs one
of them at a time. Each worker is a process started from a warm fork server (the SDKs already imported), that
builds its `CaseRunner` once and then runs one unit at a time, as the parent deals them out (heaviest first).
A unit comes back as its judged cases, which the parent puts in plan order: the results are those of a
serial run, whatever the number of workers or the order units finish in.

Every wait is bounded. A worker that dies (a crash, a kill) or does nothing for `stall_timeout` seconds (a hang:
every run and every judged case moves its `Link`'s counters) is stopped and replaced; the run it was on gets an
error trace naming the case and what happened, and the rest of its unit runs again on the replacement. A worker
that cannot even start fails the whole run (`WorkerError`): a harness error, never a pass.
"""

from __future__ import annotations

import contextlib
import dataclasses
import pickle
import select
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from harness.runner import gc_pace, interrupts
from harness.runner.forkserver import context, stop, warm_up
from harness.runner.plan import MatrixOptions, runs_of
from harness.runner.run_events import UnitWork
from harness.scenarios.model import Scenario
from harness.trace import Case, CaseResult, Run

STALL_TIMEOUT = 300.0
"""Seconds a busy worker may go without finishing a run before it is taken for hung (a run's own waits are 60 s)."""
START_TIMEOUT = 120.0
"""Seconds a new worker may take to say it is ready (imports and environment)."""
STOP_TIMEOUT = 10.0
"""Seconds a worker may take to stop once told to, before it is killed."""
POLL_SECONDS = 1.0
"""How often the parent looks at the clock while it waits for workers."""


class WorkerError(RuntimeError):
    """A worker could not start, or the harness itself failed inside one (its traceback is the message)."""


@dataclass(frozen=True)
class Task:
    """One unit of work: runs to run, cases to judge from them."""

    number: int
    """Position of the unit in the plan (results are put back in this order)."""
    runs: tuple[tuple[Run, str], ...]
    """The runs, in order, each with the id of the first case that needs it."""
    cases: tuple[tuple[Case, str | None], ...] = ()
    """The cases to judge, each with its missing capability (None: it ran)."""
    failed: Mapping[Run, str] = field(default_factory=dict)
    """Runs not to run again: why each could not complete (a worker died or hung on it)."""
    keep_traces: bool = False
    """Send the run traces back (for callers that judge themselves), not only the cases."""

    @property
    def weight(self) -> int:
        """How much work it is."""
        return len(self.runs) + 1


@dataclass
class Done:
    """What a task came to."""

    number: int
    """The task's number."""
    traces: list[tuple[Run, str, str]] = field(default_factory=list)
    """(run, "trace" or "unexpressed", trace text or reason), when the task asked for them."""
    cpu_s: float = 0.0
    """CPU seconds the task took in the process that ran it."""
    parts: dict[str, str] = field(default_factory=dict)
    """What each writer's unit work made of the task's cases, by the writer's key (`run_events.UnitDone`)."""
    results: list[CaseResult] = field(default_factory=list)
    """The judged cases, in the task's order. A worker sends them as they are (pickled): the parent does not parse
    again the traces the worker wrote (`--validate-traces` checks each one against the JSON Schema there)."""


RUNS, CASES = 0, 1
"""The two counters of a `Link`: runs finished and cases judged in the worker's current task."""


@dataclass
class Link:
    """A worker's ties to the parent: the pipe for its messages, and two counters in memory the two share.

    The counters say how far the worker is in its task: the parent reads them on each wake to know a busy worker
    is moving (a stall is a task whose counters stand still) and, when a worker is lost, which run it was on. A
    message per run and per case did the same at ~30,000 messages a full matrix, each waking the parent while
    the workers had the cores. Run labels go as messages only for a progress display that shows them."""

    conn: Connection
    counts: Any
    """`RawArray("q", 2)`: `RUNS`, `CASES`. The worker adds; the parent zeroes them before it sends a task."""
    labels: bool = False
    """Send ("run", case id) after each run too (the parent has an `on_progress`)."""

    def report(self, kind: str, case_id: str) -> None:
        """A run finished ("run") or a case was judged ("case"), `case_id` naming it."""
        self.counts[RUNS if kind == "run" else CASES] += 1
        if self.labels and kind == "run":
            self.conn.send(("run", case_id))


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker needs to build its CaseRunner (sent once, when it starts)."""

    options: MatrixOptions
    scenarios: tuple[Scenario, ...]
    backends: tuple[str, ...]
    unit_work: Mapping[str, UnitWork] = field(default_factory=dict)
    """The writers' work on each task's judged cases, by writer key."""


def portable(options: MatrixOptions) -> MatrixOptions:
    """The options as a worker gets them: without the parent's callback. Translate hooks go
    along and must pickle (module-level functions do, lambdas do not)."""
    options = dataclasses.replace(options, on_progress=None)
    try:
        pickle.dumps(options.hooks)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise ValueError(f"translate hooks cannot go to worker processes ({exc}): run with -j 1") from None
    return options


@dataclass
class _Worker:
    process: Any
    conn: Connection
    counts: Any
    ready: bool = False
    task: Task | None = None
    seen: tuple[int, int] = (0, 0)
    """The counters as the parent last read them."""
    heard: float = field(default_factory=time.monotonic)
    """When the worker last said something or its counters last moved."""

    def moved(self) -> bool:
        """Whether the counters moved since the parent last looked (and remember them)."""
        now = (self.counts[RUNS], self.counts[CASES])
        if now == self.seen:
            return False
        self.seen = now
        return True


class WorkerPool:
    """Up to `jobs` worker processes running tasks; `run` returns every task's result in task order.

    A worker (`worker(link, config)`) says ("ready", None) on `link.conn` once it can work, then for each task it
    receives reports each run and each judged case on `link` (`Link.report`) and sends ("done", Done) at the end,
    or ("error", traceback) when the harness fails outside a run; it stops on None. Use it in a `with` block (or
    call `close`): `run` leaves its last workers winding down.
    """

    def __init__(
        self,
        worker: Callable[[Link, WorkerConfig], None],
        config: WorkerConfig,
        jobs: int,
        *,
        on_progress: Callable[[str], None] | None = None,
        on_done: Callable[[Done], None] | None = None,
        stall_timeout: float = STALL_TIMEOUT,
    ) -> None:
        self.on_done = on_done
        """Told of each task's result as it arrives (the parent works on it while the workers go on)."""
        self.worker = worker
        """A worker's life (a module-level function, so that it pickles: `engine.worker_main`)."""
        self.config = config
        self.jobs = jobs
        self.on_progress = on_progress
        self.stall_timeout = stall_timeout
        self._ctx = context()
        self._workers: list[_Worker] = []
        self._retired: list[_Worker] = []
        """Workers told to stop, not yet waited for (`close`)."""
        self.cpu_s = 0.0
        """CPU seconds the workers spent on tasks (not counting their start)."""

    def _start(self) -> _Worker:
        parent, child = self._ctx.Pipe()
        counts = self._ctx.RawArray("q", 2)
        link = Link(child, counts, labels=self.on_progress is not None)
        process = self._ctx.Process(target=self.worker, args=(link, self.config), name="conformance-worker")
        process.daemon = True
        with _interrupts_held(self._ctx), _start_bounded(self._ctx, START_TIMEOUT):
            process.start()
        child.close()
        worker = _Worker(process, parent, counts)
        self._workers.append(worker)
        return worker

    def run(self, tasks: Sequence[Task]) -> list[Done]:
        """Run every task; the results in task order.

        A worker is told to stop as soon as no task is left for it, so that it winds down (its environment's
        servers, its process) while the others finish theirs, and the last ones while the caller writes its
        report: `close` (or leaving the `with` block) waits for them. A failure closes the pool at once."""
        pending = deque(sorted(tasks, key=lambda t: (-t.weight, t.number)))
        results: dict[int, Done] = {}
        with gc_pace.keeping():
            try:
                for _ in range(min(self.jobs, len(tasks))):
                    self._start()
                while len(results) < len(tasks):
                    for worker in list(self._workers):
                        if not worker.ready or worker.task is not None:
                            continue
                        if not pending:
                            self._retire(worker)
                            continue
                        worker.task, worker.heard = pending.popleft(), time.monotonic()
                        worker.counts[RUNS] = worker.counts[CASES] = 0  # it waits for the task: it adds nothing now
                        worker.seen = (0, 0)
                        worker.conn.send(worker.task)
                    self._wait(pending, results)
            except BaseException:
                self.close()
                raise
        for worker in list(self._workers):
            self._retire(worker)
        return [results[t.number] for t in sorted(tasks, key=lambda t: t.number)]

    def _retire(self, worker: _Worker) -> None:
        """Tell an idle worker to stop, and stop watching it (`close` waits for it)."""
        self._workers.remove(worker)
        self._retired.append(worker)
        with contextlib.suppress(OSError):  # already gone (BrokenPipeError is an OSError): nothing was lost
            worker.conn.send(None)

    def _wait(self, pending: deque[Task], results: dict[int, Done]) -> None:
        interrupts.raise_pending()
        ready = wait([w.conn for w in self._workers] + [w.process.sentinel for w in self._workers], POLL_SECONDS)
        now = time.monotonic()
        for worker in list(self._workers):
            if worker.conn in ready:
                with contextlib.suppress(EOFError, OSError):  # it died: its sentinel says so below
                    self._receive(worker, gc_pace.received(worker.conn.recv), results)
                    while _readable(worker.conn):
                        self._receive(worker, gc_pace.received(worker.conn.recv), results)
            if worker.moved():
                worker.heard = now
            if worker.process.sentinel in ready:  # it exited (a dead worker's sentinel stays ready)
                worker.process.join(STOP_TIMEOUT)
                self._lost(worker, pending, f"worker process exited with code {worker.process.exitcode}")
            elif not worker.ready and now - worker.heard > START_TIMEOUT:
                self._lost(worker, pending, f"worker process not ready within {START_TIMEOUT:.0f} s")
            elif worker.task is not None and now - worker.heard > self.stall_timeout:
                self._lost(
                    worker, pending, f"worker process stopped answering ({self.stall_timeout:.0f} s without a result)"
                )

    def _receive(self, worker: _Worker, message: tuple[str, Any], results: dict[int, Done]) -> None:
        kind, value = message
        worker.heard = time.monotonic()
        if kind == "ready":
            worker.ready = True
        elif kind == "run":
            if self.on_progress is not None:
                self.on_progress(value)
        elif kind == "done":
            results[value.number] = value
            self.cpu_s += value.cpu_s
            worker.task = None
            if self.on_done is not None:
                self.on_done(value)
        elif kind == "error":
            raise WorkerError(f"the harness failed in a worker process:\n{value}")

    def _lost(self, worker: _Worker, pending: deque[Task], what: str) -> None:
        """Stop a worker that died or hung; its task goes back with the run it was on marked failed."""
        self._workers.remove(worker)
        if worker.process.is_alive():
            worker.process.kill()  # a process this pool started, by its handle
            worker.process.join(STOP_TIMEOUT)
        worker.conn.close()
        if not worker.ready:
            raise WorkerError(f"{what} before it was ready")
        task = worker.task
        if task is not None:
            pending.appendleft(_without_culprit(task, worker.counts[RUNS], worker.counts[CASES], what))
        self._start()

    def close(self) -> None:
        """Tell every worker to stop; wait for them, killing those that do not stop within STOP_TIMEOUT."""
        for worker in list(self._workers):
            self._retire(worker)
        deadline = time.monotonic() + STOP_TIMEOUT
        for worker in self._retired:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.kill()  # a process this pool started, by its handle
                worker.process.join(STOP_TIMEOUT)
            worker.conn.close()
        self._retired = []

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def _interrupts_held(ctx: Any) -> Iterator[None]:
    """SIGINT and SIGTERM held back (not lost) while a worker is being started by the fork server, then delivered.

    Starting one waits for the fork server to fork it (seconds, while the server still imports the SDKs), then
    writes it what to run: interrupted in between, the parent left, and the new process, reading what it was
    sent, died in a traceback of the stdlib's ("pickle data was truncated") under the parent's one line. The
    server is started first, so that it does not inherit the held signals."""
    if ctx.get_start_method() != "forkserver" or threading.current_thread() is not threading.main_thread():
        yield
        return
    warm_up(ctx)
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


@contextlib.contextmanager
def _start_bounded(ctx: Any, seconds: float) -> Iterator[None]:
    """`process.start()` with its wait on the fork server bounded: `WorkerError` after `seconds`, the server stopped.

    Starting a worker writes it what to run and reads its pid back from the fork server, and the stdlib waits for
    both without a timeout: a fork server hung in its preload (an import that never returns) hung the run, and
    under `_interrupts_held` not even Ctrl-C ended it. A SIGALRM timer ends the wait instead (main thread only,
    where signals are handled; the timer and handler that were there are put back). Only the fork server is
    waited on here: a worker that forks but never says it is ready is `START_TIMEOUT`'s other use, in `_wait`."""
    if ctx.get_start_method() != "forkserver" or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(_signum: int, _frame: Any) -> None:
        raise _ForkServerHung

    previous = signal.signal(signal.SIGALRM, expired)
    outer = signal.setitimer(signal.ITIMER_REAL, seconds)
    began = time.monotonic()
    try:
        yield
    except _ForkServerHung:
        stop()
        raise WorkerError(
            f"the worker fork server did not start a worker within {seconds:.0f} s (are its imports hung?)"
        ) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer[0]:  # someone else's timer was running: it goes on with what was left of it
            signal.setitimer(signal.ITIMER_REAL, max(outer[0] - (time.monotonic() - began), 0.001), outer[1])


class _ForkServerHung(Exception):
    """The SIGALRM of `_start_bounded` (a private type, so that nothing else catches it by accident)."""


def _readable(conn: Connection) -> bool:
    """Whether `conn` has bytes to read now (one `select` call: `Connection.poll` builds a selector each time, and
    the parent asks once per message of the workers)."""
    if sys.platform == "win32":  # select takes only sockets there
        return conn.poll()
    return bool(select.select([conn], [], [], 0)[0])


def _without_culprit(task: Task, runs_done: int, cases_done: int, what: str) -> Task:
    """The task again, with the run a worker was on when it was lost marked failed (runs finish in task order,
    then cases are judged in task order)."""
    todo = [(run, case_id) for run, case_id in task.runs if run not in task.failed]
    if runs_done < len(todo):
        run, case_id = todo[runs_done]
        reason = f"{what} while running {run.key} (case {case_id})"
    else:  # lost while judging a case: its translated run takes the blame, so the case is judged on an error
        case = task.cases[min(cases_done, len(task.cases) - 1)][0]
        run = runs_of(case)["translated"]
        reason = f"{what} while judging case {case.case_id}"
    if run in task.failed:
        raise WorkerError(f"{reason}, again after its run was marked failed")
    return dataclasses.replace(task, failed={**task.failed, run: reason})
