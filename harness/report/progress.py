"""Progress of a run, fed by the runner's events (MatrixStarted, then one CaseFinished per case as it is judged), so
it counts cases, not runs, and works however the engine schedules them.

On a terminal it is a live bar. Without one (a CI log, a pipe) it prints plain lines at a bounded rate: when
another `step` of the cases is done, or `every_s` seconds have passed, but never two lines within `min_gap_s`
seconds; and a last line at the end. Each line fits 80 columns for the usual verdicts:
`[03:10] 2484/8280 cases (30%), eta 07:24: 2300 pass, 2 response bug, 182 unsupported`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from harness.report.model import empty_counts, verdict_info
from harness.runner.run_events import CaseJudged, MatrixFinished, MatrixStarted, RunnerEvent
from harness.trace.model import Verdict


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class ProgressWriter:
    """Shows how many cases are done and how they were judged."""

    def __init__(
        self,
        console: Console,
        *,
        step: float = 0.1,
        every_s: float = 30.0,
        min_gap_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Write to `console` (a bar when it is a terminal, lines otherwise); the rest bounds the line rate."""
        self.console = console
        self.step, self.every_s, self.min_gap_s = step, every_s, min_gap_s
        self.clock = clock
        self.total = 0
        self.done = 0
        self.counts: dict[Verdict, int] = empty_counts()
        self._start = self._last = 0.0
        self._first_at = 0.0
        """When the first case was judged (the pace is measured from there)."""
        self._next_step = step
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def handle(self, event: RunnerEvent) -> None:
        """Count a finished case; start and end with the run."""
        if isinstance(event, MatrixStarted):
            self._started(len(event.case_ids))
        elif isinstance(event, CaseJudged):
            self.done += 1
            if self.done == 1:
                self._first_at = self.clock()
            verdict = event.result.verdict
            self.counts[verdict] = self.counts.get(verdict, 0) + 1
            self._advanced(event.result.case_id)
        elif isinstance(event, MatrixFinished):
            self._finished()

    def line(self) -> str:
        """The progress line for the counts so far."""
        elapsed = self.clock() - self._start
        share = self.done / self.total if self.total else 1.0
        remaining = self._remaining_s() if 0 < share < 1 else None
        eta = f", eta {_clock(remaining)}" if remaining is not None else ""
        verdicts = ", ".join(f"{n} {verdict_info(v).short}" for v, n in self.counts.items() if n)
        return f"[{_clock(elapsed)}] {self.done}/{self.total} cases ({share:.0%}){eta}" + (
            f": {verdicts}" if verdicts else ""
        )

    def _remaining_s(self) -> float | None:
        """Seconds left at the pace since the first judged case: the start (imports, workers, a gateway coming
        up) is not a case's cost, and extrapolated from one early case it read "eta 26:35:02". None until two
        cases a second apart give a pace."""
        since = self.clock() - self._first_at
        if self.done < 2 or since < 1:
            return None
        return (self.total - self.done) * since / (self.done - 1)

    def _started(self, total: int) -> None:
        self.total, self.done, self.counts = total, 0, empty_counts()
        self._start = self._last = self.clock()
        self._next_step = self.step
        if self.console.is_terminal:
            self._bar = Progress(
                TextColumn("[bold]cases"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[verdicts]}", markup=False),
                TimeElapsedColumn(),
                TextColumn("{task.fields[latest]}", style="dim", markup=False),
                console=self.console,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("cases", total=total, latest="", verdicts="")
        else:
            self.console.print(Text(f"running {total} cases"), soft_wrap=True)

    def _advanced(self, case_id: str) -> None:
        if self._bar is not None and self._task is not None:
            verdicts = " ".join(f"{n}{verdict_info(v).mark or ' pass'}" for v, n in self.counts.items() if n)
            self._bar.update(self._task, completed=self.done, latest=case_id, verdicts=verdicts)
            return
        now = self.clock()
        share = self.done / self.total if self.total else 1.0
        due = share >= self._next_step or now - self._last >= self.every_s
        if due and now - self._last >= self.min_gap_s and self.done < self.total:
            while self._next_step <= share:
                self._next_step += self.step
            self._last = now
            self.console.print(Text(self.line()), soft_wrap=True)

    def _finished(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
            return
        self.console.print(Text(self.line()), soft_wrap=True)
