"""Join the reports of a sharded run into one: `conformance report --merge DIR...` reads the report folder of
every shard (`conformance run --shard K/N`, one per CI machine) and writes one report folder with one gate.

Each shard's `summary.json` says which slice it is and how many cases the whole matrix has; the join checks that
the N shards are all there once, of the same matrix (same axes, same system under test), and that together they
hold every case exactly once. Any doubt is an error, never a partial report that could pass. Cases are put back
in matrix order, so the joined report is the report of the same matrix run on one machine (its duration is the
longest shard's: the shards ran side by side).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.report.model import ReportError
from harness.report.rerender import read_summary
from harness.runner.folder import PLAN_FILE, read_plan
from harness.runner.run_events import CaseFinished, MatrixFinished, MatrixStarted, RunnerEvent, gate_code, judged_count
from harness.trace import CaseResult, TraceError, Verdict, matrix_order, read_cases

SAME_MATRIX = ("frontends", "backends", "scenarios", "sut")
"""Summary fields every shard of one matrix shares."""


def shard_summary(run_dir: Path) -> dict[str, Any]:
    """A shard's summary.json, validated, with its `shard` entry (ReportError otherwise)."""
    path = run_dir / "summary.json"
    data = read_summary(path, "the shard's summary")
    if "shard" not in data:
        raise ReportError(f"{path}: not a shard's report (run with --shard K/N)")
    return data


def _check_shards(dirs: Sequence[Path], summaries: Sequence[dict[str, Any]]) -> None:
    first = summaries[0]
    count = first["shard"]["count"]
    for run_dir, summary in zip(dirs, summaries, strict=True):
        if summary["shard"]["count"] != count or summary["shard"]["matrix_cases"] != first["shard"]["matrix_cases"]:
            raise ReportError(f"{run_dir}: shard {summary['shard']} is not of the same matrix as {dirs[0]}")
        for key in SAME_MATRIX:
            if summary[key] != first[key]:
                raise ReportError(f"{run_dir}: {key} differ from {dirs[0]}'s: not shards of one matrix")
    indices = sorted(s["shard"]["index"] for s in summaries)
    if indices != list(range(1, count + 1)):
        missing = sorted(set(range(1, count + 1)) - set(indices))
        doubled = sorted({i for i in indices if indices.count(i) > 1})
        raise ReportError(f"shards of {count}: missing {missing or 'none'}, given twice {doubled or 'none'}")


PLAN_SAME = ("options", "scenario_hashes")
"""Entries of `plan.json` every shard of one matrix shares: the options that shape each case and the content of
every scenario (a shard run on an edited scenario file is of another matrix)."""


def shard_plan(run_dir: Path) -> dict[str, Any]:
    """A shard's `plan.json` (ReportError when it is missing or unreadable: a shard without one is not vouched for)."""
    path = run_dir / PLAN_FILE
    try:
        plan = read_plan(run_dir)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: cannot read the shard's plan: {exc}") from exc
    if not isinstance(plan, dict):
        raise ReportError(f"{path}: not a run's plan")
    return plan


def _difference(key: str, mine: Any, theirs: Any) -> str:
    if key == "scenario_hashes" and isinstance(mine, dict) and isinstance(theirs, dict):
        changed = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        return f"scenario content differs ({', '.join(changed[:5])})"
    words = [" ".join(map(str, v or [])) or "none" for v in (mine, theirs)]
    return f"options differ ({words[0]} vs {words[1]})"


def check_plans(dirs: Sequence[Path]) -> dict[str, Any]:
    """The first shard's plan, after checking every shard ran the same options on the same scenario content
    (ReportError naming the shard and the difference otherwise)."""
    plans = [shard_plan(d) for d in dirs]
    first = plans[0]
    for run_dir, plan in zip(dirs, plans, strict=True):
        for key in PLAN_SAME:
            if plan.get(key) != first.get(key):
                raise ReportError(
                    f"{run_dir}: {_difference(key, plan.get(key), first.get(key))} from {dirs[0]}: not shards of "
                    f"one matrix"
                )
    return first


def _shard_cases(run_dir: Path, summary: dict[str, Any], full_check: bool) -> list[tuple[CaseResult, Path]]:
    out = []
    files: dict[Path, dict[str, CaseResult]] = {}  # a pack holds many cases: read once
    for entry in summary["cases"]:
        path = run_dir / entry["trace"]
        if path not in files:
            try:
                files[path] = {c.case_id: c for c in read_cases(path, full_check=full_check)}
            except TraceError as exc:
                raise ReportError(str(exc)) from exc
        result = files[path].get(entry["case_id"])
        if result is None:
            held = ", ".join(sorted(files[path])) or "no case"
            raise ReportError(f"{path}: holds {held}, not {entry['case_id']} as the summary says")
        out.append((result, path))
    return out


def events_for_merge(
    dirs: Sequence[Path], run_id: str, *, full_check: bool = False
) -> tuple[list[RunnerEvent], dict[str, Path]]:
    """The events that make the joined report of these shard folders, and each case's trace file by case id."""
    if not dirs:
        raise ReportError("no shard folders to join")
    summaries = [shard_summary(d) for d in dirs]
    _check_shards(dirs, summaries)
    check_plans(dirs)
    files: dict[str, Path] = {}
    cases: list[CaseResult] = []
    for run_dir, summary in zip(dirs, summaries, strict=True):
        for result, path in _shard_cases(run_dir, summary, full_check):
            if result.case_id in files:
                raise ReportError(
                    f"{result.case_id} is in two shards ({files[result.case_id].parent.parent}, {run_dir})"
                )
            files[result.case_id] = path
            cases.append(result)
    first = summaries[0]
    expected = first["shard"]["matrix_cases"]
    if len(cases) != expected:
        raise ReportError(f"the shards hold {len(cases)} cases, the matrix has {expected}")
    key = matrix_order(first["scenarios"])
    cases.sort(key=lambda c: key(c.case))
    new_bugs = [c.case_id for c in cases if c.verdict.is_proxy_bug and not c.known]
    counts: dict[str, int] = {}
    for case in cases:
        counts[case.verdict] = counts.get(case.verdict, 0) + 1
    started = MatrixStarted(
        run_id,
        [c.case_id for c in cases],
        first["frontends"],
        first["backends"],
        first["scenarios"],
        sut=first["sut"],
        descriptions=first.get("scenario_descriptions", {}),
        rerun=first.get("rerun_options", []),
    )
    errors = [c.case_id for c in cases if c.verdict.is_harness_error]
    deviating = [c.case_id for c in cases if c.deviations]
    strict = any(bool(s.get("strict", False)) for s in summaries)
    finished = MatrixFinished(
        run_id=run_id,
        duration_s=max(s["duration_s"] for s in summaries),
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
    return [started, *(CaseFinished(c) for c in cases), finished], files


def copy_traces(files: dict[str, Path], out_dir: Path) -> None:
    """Copy each case's trace file into `out_dir/cases/` (so the joined folder re-renders like any run's)."""
    from harness.trace.writer import atomic_write_bytes

    for path in set(files.values()):
        target = out_dir / "cases" / path.name  # compressed or not, as the shard wrote it
        if target.resolve() != path.resolve():
            atomic_write_bytes(target, path.read_bytes())
