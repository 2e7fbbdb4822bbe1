"""Re-render a run's reports from its case traces by replaying synthetic runner events through the same writers.

The case files in `reports/<run-id>/cases/` are the source of truth. What they do not hold (the run's wall
time, the system under test, the order of cases and matrix axes) is taken from the run's previous
`summary.json` when it is there; without it the duration is the sum of the case durations, the order is by
case id, and the axes are sorted. The gate is recomputed from the cases: a proxy bug not marked `known` is new.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.report.model import ReportError
from harness.report.summary import validate_summary
from harness.runner.folder import PLAN_FILE, read_plan
from harness.runner.run_events import (
    CaseFinished,
    MatrixFinished,
    MatrixStarted,
    RunnerEvent,
    Shard,
    Writer,
    gate_code,
    judged_count,
)
from harness.trace import CaseResult, TraceError, Verdict, read_cases, trace_files

UNKNOWN_SUT = "unknown (re-rendered from case traces)"


def read_summary(path: Path, what: str) -> dict[str, Any]:
    """A summary.json, read and validated; ReportError naming the file and `what` it was read as otherwise."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: cannot read {what}: {exc}") from exc
    try:
        validate_summary(data)
    except ReportError as exc:
        raise ReportError(f"{path}: {exc}") from exc
    return data


def _previous_summary(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / "summary.json"
    return read_summary(path, "the previous summary") if path.is_file() else None


def load_cases(run_dir: Path, *, full_check: bool = False) -> list[CaseResult]:
    """Every case trace of a run, checked (`full_check`: against the JSON Schema too); ReportError when there are
    none or one is invalid."""
    folder = run_dir / "cases"
    files = trace_files(folder)
    if not files:
        raise ReportError(f"no case traces in {folder}")
    try:
        return [case for path in files for case in read_cases(path, full_check=full_check)]
    except TraceError as exc:
        raise ReportError(str(exc)) from exc


def check_plan(run_dir: Path, cases: Sequence[CaseResult]) -> None:
    """ReportError when the traces are not the run's planned cases: a run killed before it finished, or traces
    deleted or added since, must never re-render as a gate (a missing case would read as one that passed)."""
    path = run_dir / PLAN_FILE
    if not path.is_file():
        return  # a report folder older than plan files, or written by the pytest plugin: nothing to hold it to
    try:
        planned = read_plan(run_dir)["case_ids"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ReportError(f"{path}: cannot read the run's plan: {exc}") from exc
    have = {c.case_id for c in cases}
    missing = [c for c in planned if c not in have]
    extra = sorted(have - set(planned))
    if missing:
        raise ReportError(
            f"{len(missing)} of the {len(planned)} planned cases have no trace in {run_dir / 'cases'} (first: "
            f"{missing[0]}): the run did not finish or traces were deleted; rerun it"
        )
    if extra:
        raise ReportError(
            f"{len(extra)} case trace(s) in {run_dir / 'cases'} were not planned by {path} (first: {extra[0]})"
        )


def _planned_options(run_dir: Path) -> list[str]:
    """The rerun options the run wrote in its plan (a run without its summary still reruns on the same system)."""
    try:
        options = read_plan(run_dir).get("options", [])
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return []
    return [str(o) for o in options] if isinstance(options, list) else []


def _ordered(cases: list[CaseResult], previous: dict[str, Any] | None) -> list[CaseResult]:
    rank = {c["case_id"]: i for i, c in enumerate(previous["cases"])} if previous else {}
    return sorted(cases, key=lambda c: (rank.get(c.case_id, len(rank)), c.case_id))


def _axis(previous: dict[str, Any] | None, key: str, values: Iterable[str]) -> Sequence[str]:
    seen = sorted(set(values))
    if previous is None:
        return seen
    declared: list[str] = previous[key]
    return [*declared, *(v for v in seen if v not in declared)]


def events_for_run(
    run_dir: Path, descriptions: Mapping[str, str] | None = None, *, full_check: bool = False
) -> list[RunnerEvent]:
    """The MatrixStarted, CaseFinished* and MatrixFinished events that reproduce a finished run's reports (scenario
    `descriptions` stand in when the previous summary has none, as summaries written before they were kept)."""
    previous = _previous_summary(run_dir)
    cases = load_cases(run_dir, full_check=full_check)
    check_plan(run_dir, cases)
    cases = _ordered(cases, previous)
    run_id = previous["run_id"] if previous else run_dir.resolve().name
    new_bugs = [c.case_id for c in cases if c.verdict.is_proxy_bug and not c.known]
    started = MatrixStarted(
        run_id=run_id,
        case_ids=[c.case_id for c in cases],
        frontends=_axis(previous, "frontends", (c.frontend for c in cases)),
        backends=_axis(previous, "backends", (c.backend for c in cases)),
        scenarios=_axis(previous, "scenarios", (c.scenario for c in cases)),
        sut=previous["sut"] if previous else UNKNOWN_SUT,
        shard=Shard(**previous["shard"]) if previous and "shard" in previous else None,
        descriptions=(previous or {}).get("scenario_descriptions", descriptions or {}),
        rerun=previous["rerun_options"] if previous and "rerun_options" in previous else _planned_options(run_dir),
    )
    counts: dict[str, int] = {}
    for case in cases:
        counts[case.verdict] = counts.get(case.verdict, 0) + 1
    errors = [c.case_id for c in cases if c.verdict.is_harness_error]
    deviating = [c.case_id for c in cases if c.deviations]
    strict = bool(previous.get("strict", False)) if previous else False
    finished = MatrixFinished(
        run_id=run_id,
        duration_s=previous["duration_s"] if previous else sum(c.duration_ms for c in cases) / 1000,
        counts=counts,
        new_proxy_bugs=new_bugs,
        fixed=[c.case_id for c in cases if c.known and c.verdict is Verdict.PASS],
        exit_code=gate_code(
            new_bugs, errors, deviating, strict=strict, judged=judged_count([c.verdict for c in cases])
        ),
        harness_errors=errors,
        deviating=deviating,
        strict=strict,
    )
    return [started, *(CaseFinished(c) for c in cases), finished]


def emit(events: Iterable[RunnerEvent], writers: Sequence[Writer]) -> None:
    """Feed every event to every writer, in order."""
    for event in events:
        for writer in writers:
            writer.handle(event)
