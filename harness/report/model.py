"""What every report writer shares: the run gathered from runner events, and verdict order.

Writers do not talk to each other; each one owns a `Collector` that turns the event sequence (MatrixStarted,
CaseFinished*, MatrixFinished) into one `MatrixReport`, and writes its file from that report when the run ends.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, eq
from pathlib import Path
from typing import Any, ClassVar

from harness.runner.run_events import (
    CaseFinished,
    CaseJudged,
    MatrixFinished,
    MatrixStarted,
    RunnerEvent,
    Shard,
    UnitDone,
    UnitWork,
)
from harness.trace.model import CaseResult, RunTrace, Verdict
from harness.trace.writer import atomic_write_text

VERDICTS: tuple[Verdict, ...] = tuple(Verdict)
"""Every verdict, in the order reports list them."""


@dataclass(frozen=True)
class VerdictInfo:
    """How every report shows one verdict: a verdict added to `Verdict` without an entry in `VERDICT_INFO` gets a
    plain one (`verdict_info`), so a new verdict is data for the writers, never code."""

    label: str
    """Full name, as the HTML report and the terminal legend print it."""
    short: str
    """Short name for narrow places (matrix cells in the HTML report)."""
    mark: str
    """One or two characters after a count in the terminal's 80-column matrix (`2S`)."""
    color: str
    """CSS colour of its badges and chart bars."""
    style: str
    """`rich` style on the terminal."""
    listed: bool = True
    """Whether the terminal lists its cases (grouped) after the matrix, or only counts them."""


VERDICT_INFO: dict[str, VerdictInfo] = {
    Verdict.PASS: VerdictInfo("pass", "pass", "", "#2e7d32", "green", listed=False),
    Verdict.PROXY_BUG_REQUEST: VerdictInfo("proxy bug (request)", "request bug", "Q", "#c62828", "bold red"),
    Verdict.PROXY_BUG_RESPONSE: VerdictInfo("proxy bug (response)", "response bug", "S", "#d84315", "bold red"),
    Verdict.BACKEND_ISSUE: VerdictInfo("backend issue", "backend", "b", "#9a7400", "yellow"),
    Verdict.BASELINE_ISSUE: VerdictInfo("baseline issue", "baseline", "B", "#6a1b9a", "magenta"),
    Verdict.UNSUPPORTED: VerdictInfo("unsupported", "unsupported", "u", "#757575", "dim", listed=False),
    "harness_error": VerdictInfo("harness error", "ERROR", "E", "#000000", "bold white on red"),
}
"""Presentation of each verdict (keyed by value, so an entry may come before its verdict does)."""


def verdict_info(verdict: str) -> VerdictInfo:
    """How reports show `verdict`; a verdict without an entry is shown by its name, listed, in a neutral colour."""
    found = VERDICT_INFO.get(str(verdict))
    if found is not None:
        return found
    words = str(verdict).replace("_", " ")
    return VerdictInfo(words, words, str(verdict)[:2], "#37474f", "bold")


ROLES: tuple[str, ...] = ("baseline_frontend", "translated", "baseline_backend")
"""The three runs of a case, in the order the case view shows them side by side."""


class ReportError(ValueError):
    """The runner's events do not make a consistent run (out of order, unknown verdict, counts that disagree)."""


def empty_counts() -> dict[Verdict, int]:
    """A count of zero for every verdict, in report order."""
    return dict.fromkeys(VERDICTS, 0)


def _merge_order(declared: Iterable[str], seen: Iterable[str]) -> list[str]:
    # The runner declares the matrix axes up front; anything a case brings that was not declared is appended
    # (not dropped) so that every case shows up in the matrix.
    out = list(dict.fromkeys(declared))
    out.extend(x for x in dict.fromkeys(seen) if x not in out)
    return out


@dataclass
class MatrixReport:
    """One finished run as the writers see it."""

    run_id: str
    """Id of the run (the report folder name)."""
    sut: str
    """What was under test."""
    frontends: list[str]
    """Matrix rows, in the runner's order."""
    backends: list[str]
    """Matrix columns, in the runner's order."""
    scenarios: list[str]
    """Scenario ids, in the runner's order."""
    cases: list[CaseResult] = field(default_factory=list)
    """Every case, in the order the runner finished them."""
    duration_s: float = 0.0
    """Wall time of the run."""
    exit_code: int = 0
    """The gate's exit code."""
    new_proxy_bugs: list[str] = field(default_factory=list)
    """Proxy-bug cases that are not known failures."""
    fixed: list[str] = field(default_factory=list)
    """Known failures that now pass."""
    harness_errors: list[str] = field(default_factory=list)
    """Cases that could not be judged (harness or setup failures): exit code 2."""
    deviating: list[str] = field(default_factory=list)
    """Cases with wire deviations (warnings; failing the gate only under `strict`)."""
    strict: bool = False
    """Whether wire deviations fail the gate."""
    shard: Shard | None = None
    """Which slice of the matrix this run was, when it was one shard of it."""
    descriptions: dict[str, str] = field(default_factory=dict)
    """Scenario descriptions by id."""
    rerun: list[str] = field(default_factory=list)
    """The run's options that shape every case (for rerun commands)."""

    def counts(self) -> dict[Verdict, int]:
        """Cases per verdict (every verdict present, zero when none)."""
        out = empty_counts()
        for case in self.cases:
            out[case.verdict] += 1
        return out

    def cells(self) -> dict[tuple[str, str], dict[Verdict, int]]:
        """Cases per verdict for every (frontend, backend) cell of the matrix, empty cells included."""
        out = {(f, b): empty_counts() for f in self.frontends for b in self.backends}
        for case in self.cases:
            out[(case.frontend, case.backend)][case.verdict] += 1
        return out

    def proxy_bugs(self) -> list[CaseResult]:
        """The proxy-bug cases, in run order."""
        return [c for c in self.cases if c.verdict.is_proxy_bug]

    def errors(self) -> list[CaseResult]:
        """The harness-error cases, in run order."""
        return [c for c in self.cases if c.verdict.is_harness_error]

    def with_deviations(self) -> list[CaseResult]:
        """The cases with wire deviations, in run order."""
        return [c for c in self.cases if c.deviations]


class Collector:
    """Turns the runner's event sequence into a MatrixReport, checking that the sequence makes sense."""

    def __init__(self) -> None:
        """Start empty: the next event must be MatrixStarted."""
        self._started: MatrixStarted | None = None
        self._cases: list[CaseResult] = []

    def handle(self, event: RunnerEvent) -> MatrixReport | None:
        """Take one event; returns the finished report on MatrixFinished, else None."""
        if isinstance(event, MatrixStarted):
            if self._started is not None:
                raise ReportError(f"run {event.run_id!r} started twice")
            self._started = event
            return None
        if self._started is None:
            raise ReportError(f"{type(event).__name__} before MatrixStarted")
        if isinstance(event, CaseJudged | UnitDone):  # every case comes again as CaseFinished, in order
            return None
        if isinstance(event, CaseFinished):
            if event.result.verdict not in VERDICTS:
                raise ReportError(f"{event.result.case_id}: unknown verdict {event.result.verdict!r}")
            self._cases.append(event.result)
            return None
        return self._finish(self._started, event)

    def _finish(self, started: MatrixStarted, event: MatrixFinished) -> MatrixReport:
        report = MatrixReport(
            run_id=event.run_id,
            sut=started.sut,
            frontends=_merge_order(started.frontends, map(attrgetter("frontend"), self._cases)),
            backends=_merge_order(started.backends, map(attrgetter("backend"), self._cases)),
            scenarios=_merge_order(started.scenarios, map(attrgetter("scenario"), self._cases)),
            cases=_plan_order(started.case_ids, self._cases),
            duration_s=event.duration_s,
            exit_code=event.exit_code,
            new_proxy_bugs=list(event.new_proxy_bugs),
            fixed=list(event.fixed),
            harness_errors=list(event.harness_errors),
            deviating=list(event.deviating),
            strict=event.strict,
            shard=started.shard,
            descriptions=dict(started.descriptions),
            rerun=list(started.rerun),
        )
        # The runner counts the same results the writers received: a mismatch is a bug on one side, and a
        # report that silently disagrees with the gate would be worse than none.
        if event.counts:
            counted = {k: v for k, v in report.counts().items() if v}
            claimed = {k: v for k, v in event.counts.items() if v}
            if counted != claimed:
                raise ReportError(f"run {event.run_id}: MatrixFinished counts {claimed} but cases give {counted}")
        self._started = None
        self._cases = []
        return report


def _plan_order(case_ids: Sequence[str], cases: list[CaseResult]) -> list[CaseResult]:
    # Cases may arrive in the order they finish (worker processes); reports list them in the plan's order, and a
    # case the plan did not announce after those, as it came. The runner sends them in plan order: that is checked
    # at C speed, and only a different order is sorted.
    if len(cases) == len(case_ids) and all(map(eq, map(attrgetter("case_id"), cases), case_ids)):
        return list(cases)
    rank = {case_id: i for i, case_id in enumerate(case_ids)}
    return sorted(cases, key=lambda c: rank.get(c.case_id, len(rank)))


def ready_part(entries: Iterable[tuple[str, str]]) -> str:
    """A `UnitDone` part holding text made for each of some cases: case id and text, each followed by a NUL (no
    case id holds one, and the texts that travel so escape theirs). A string, as unit work parts are, and compact to
    send back from a worker: one string to pickle, not thousands."""
    return "".join(f"{case_id}\0{text}\0" for case_id, text in entries)


def parse_ready(part: str) -> dict[str, str]:
    """The texts of a `ready_part`, by case id."""
    fields = part.split("\0")
    return dict(zip(fields[0:-1:2], fields[1::2], strict=True))


def first_path(case: CaseResult) -> str | None:
    """The path of the case's first divergence, if it has one."""
    return case.first_divergence.path if case.first_divergence is not None else None


def failed_checks(run: RunTrace | None) -> list[str]:
    """Names of the checks a run failed."""
    return [c.name for c in run.checks if not c.passed] if run is not None else []


def json_value(value: Any, limit: int | None = None) -> str:
    """A divergence value as readable text (`<missing>` stays as is), cut to `limit` characters if given."""
    if isinstance(value, str) and value == "<missing>":
        return value
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "\u2026"


class FileWriter(ABC):
    """A writer that renders one file into the run's report folder when the run finishes."""

    file_name: ClassVar[str]
    """Name of the file inside the report folder."""

    def __init__(self, out_dir: Path) -> None:
        """Write into `out_dir` (normally `reports/<run-id>/`)."""
        self.out_dir = out_dir
        self._collector = Collector()

    @property
    def path(self) -> Path:
        """Where the file is written."""
        return self.out_dir / self.file_name

    def handle(self, event: RunnerEvent) -> None:
        """Collect the event; on MatrixFinished render and atomically write the file."""
        report = self._collector.handle(event)
        if report is not None:
            atomic_write_text(self.path, self.render(report))

    @abstractmethod
    def render(self, report: MatrixReport) -> str:
        """The file's content for a finished run."""


class ReadyTextWriter(FileWriter):
    """A file writer that has a text made for each settled case (`groups.settled`) where its unit was judged
    (`unit_work`, in the worker processes of a parallel run): it keeps them, by case id, for its render."""

    key: ClassVar[str]
    """Its unit work's key in `UnitDone.parts`."""

    def __init__(self, out_dir: Path) -> None:
        """Write into `out_dir`, with no text made yet."""
        super().__init__(out_dir)
        self.ready: dict[str, str] = {}

    def unit_work(self, started: MatrixStarted) -> tuple[str, UnitWork]:
        """The texts of each unit's settled cases."""
        return self.key, self.texts()

    @abstractmethod
    def texts(self) -> UnitWork:
        """Its unit work: the texts of a unit's settled cases, as a `ready_part` (a module-level function)."""

    def handle(self, event: RunnerEvent) -> None:
        """Keep each unit's ready texts; the rest as every file writer does."""
        if isinstance(event, UnitDone) and self.key in event.parts:
            self.ready.update(parse_ready(event.parts[self.key]))
        elif isinstance(event, MatrixStarted):
            self.ready = {}
        super().handle(event)
