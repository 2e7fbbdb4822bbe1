"""Events the runner emits; every output format (HTML, JUnit, JSON summary, terminal) is a writer that
consumes them (as schemathesis' engine/events.py and reporting/ do)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from harness.trace.model import CaseResult


@dataclass(frozen=True)
class RunStarted:
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
class RunFinished:
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
    """The gate's exit code: 0 pass, 1 new proxy bug."""


RunnerEvent = RunStarted | CaseFinished | RunFinished


class Writer(Protocol):
    """An output format: receives every runner event in order."""

    def handle(self, event: RunnerEvent) -> None:
        """Consume one event (write files on RunFinished)."""
        ...
