"""Events the runner emits; every output format (HTML, JUnit, JSON summary, terminal) is a writer that
consumes them (as schemathesis' engine/events.py and reporting/ do)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from harness.diff.pipeline import Compared
from harness.trace.model import CaseResult

EXIT_HARNESS_ERROR = 2
"""The gate's exit code when a case could not be judged (a harness or setup failure)."""


@dataclass(frozen=True)
class Shard:
    """Which slice of the matrix a sharded run is (`conformance run --shard K/N`)."""

    index: int
    """K, from 1."""
    count: int
    """N."""
    matrix_cases: int
    """Cases in the whole matrix (all N shards together), so that joining shards can tell one is missing."""


@dataclass(frozen=True)
class MatrixStarted:
    """The matrix is expanded and about to run."""

    run_id: str
    """Id of this run; also the report folder name."""
    case_ids: Sequence[str]
    """Every case, in the deterministic order results will arrive."""
    frontends: Sequence[str]
    """Frontend protocols in the matrix."""
    backends: Sequence[str]
    """Backend protocols and profiles in the matrix."""
    scenarios: Sequence[str]
    """Scenario ids in the matrix."""
    sut: str = "built-in proxy"
    """What is under test."""
    shard: Shard | None = None
    """Set when the run is one shard of the matrix: its cases are that slice of the matrix above."""
    descriptions: Mapping[str, str] = field(default_factory=dict)
    """Each scenario's description, by id (the report shows it with every case)."""
    rerun: Sequence[str] = ()
    """The `conformance run` options of this run that shape every case (folders, socket, rechunk, system under
    test), so a report can print a command that reruns exactly one case."""


@dataclass(frozen=True)
class CaseFinished:
    """One case is triaged."""

    result: CaseResult
    """The case with its runs and verdict."""


@dataclass(frozen=True)
class MatrixFinished:
    """Every case is done."""

    run_id: str
    """Id of this run."""
    duration_s: float
    """Wall time of the whole run."""
    counts: dict[str, int] = field(default_factory=dict)
    """Cases per verdict."""
    new_proxy_bugs: Sequence[str] = ()
    """Proxy-bug cases not in the known-failures file (they fail the gate)."""
    fixed: Sequence[str] = ()
    """Cases in the known-failures file that now pass."""
    exit_code: int = 0
    """The gate's exit code: 0 pass, 1 new proxy bug (or a wire deviation under `strict`), 2 a harness error."""
    harness_errors: Sequence[str] = ()
    """Cases that could not be judged (harness or setup failures): any one makes the exit code 2."""
    deviating: Sequence[str] = ()
    """Cases whose translated run shows wire deviations (warnings; they fail the gate only under `strict`)."""
    strict: bool = False
    """Whether wire deviations fail the gate."""


@dataclass(frozen=True)
class CaseJudged:
    """A case was judged, as its unit of runs finished (in no set order): what progress shows. `CaseFinished`
    follows for every case, in plan order, once all are judged."""

    result: CaseResult
    """The judged case."""


UnitWork = Callable[[Sequence[CaseResult], Mapping[str, Compared]], str]
"""What a writer makes of one unit's judged cases, done where they were judged (in a worker process, in
parallel) and sent back in `UnitDone`: a module-level function, or a partial of one, so that it pickles. It is
also given the views the verdicts compared, by case id (of the cases kept whole, whose runs are still the
judged ones)."""


@dataclass(frozen=True)
class UnitDone:
    """The cases of one unit (a scenario in one streaming mode) are judged: what each writer's unit work made of
    them, by the writer's key. It follows the unit's `CaseJudged` events."""

    scenario: str
    """Scenario id."""
    stream: bool
    """Streaming mode."""
    parts: Mapping[str, str]
    """Each `UnitWriter`'s part, by its key."""


def judged_count(verdicts: Sequence[str]) -> int:
    """How many of these verdicts judged something: every verdict but `unsupported` (a case that did not run)."""
    return sum(1 for v in verdicts if v != "unsupported")


RunnerEvent = MatrixStarted | CaseJudged | UnitDone | CaseFinished | MatrixFinished


def gate_code(
    new_bugs: Sequence[str], errors: Sequence[str], deviating: Sequence[str], *, strict: bool, judged: int | None = None
) -> int:
    """The gate's exit code: 2 when any case is a harness error (nothing was judged there, so nothing may pass) or
    when no case at all was judged (`judged` 0: every case unsupported, or none planned), 1 for a new proxy bug (or,
    under `strict`, a wire deviation), else 0."""
    if errors or judged == 0:
        return EXIT_HARNESS_ERROR
    return 1 if new_bugs or (strict and deviating) else 0


class Writer(Protocol):
    """An output format: receives every runner event in order."""

    def handle(self, event: RunnerEvent) -> None:
        """Consume one event (write files on MatrixFinished)."""
        ...


@runtime_checkable
class UnitWriter(Protocol):
    """A writer with work to do on each unit's cases where they are judged (its `UnitDone` part)."""

    def unit_work(self, started: MatrixStarted) -> tuple[str, UnitWork]:
        """The writer's key and its unit work, for the run that started."""
        ...
