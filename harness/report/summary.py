"""`summary.json`: the run in numbers for machines (dashboards, bots, the next run's "fixed" list).

Its JSON Schema ships next to this module (`summary.schema.json`); the writer validates before writing.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from harness.report.commands import rerun_command
from harness.report.groups import CaseGroup, failing, groups_of
from harness.report.model import FileWriter, MatrixReport, ReportError, first_path
from harness.trace.pack import trace_file

SUMMARY_SCHEMA_VERSION = 2
"""2: the harness_error verdict, harness errors, wire deviations and the strict flag (1 is still read)."""


@cache
def summary_schema() -> dict[str, Any]:
    """The JSON Schema of summary.json."""
    text = resources.files("harness.report").joinpath("summary.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> Any:
    schema = summary_schema()
    return jsonschema.validators.validator_for(schema)(schema)


def validate_summary(data: dict[str, Any]) -> None:
    """Raise ReportError when `data` does not match the summary schema.

    A full matrix's summary lists some 14,000 cases, and `jsonschema` takes a second over them; most entries differ
    from another only in the text of their strings, which the schema does not constrain. So each case entry is
    checked against the schema once per shape (`_shape`: its keys, the JSON type of each value, the verdict, the
    sign of its duration, the item types of its lists); an entry with deviations is always checked."""
    cases = data.get("cases")
    if not isinstance(cases, list):
        _raise_first(_validator().iter_errors(data), "")
        return
    _raise_first(_validator().iter_errors({**data, "cases": []}), "")
    entry = _validator().evolve(schema=summary_schema()["properties"]["cases"]["items"])
    seen: set[tuple[Any, ...]] = set()
    for number, case in enumerate(cases):
        shape = _shape(case)
        if shape is None or shape not in seen:
            _raise_first(entry.iter_errors(case), f"cases/{number}")
            if shape is not None:
                seen.add(shape)


def _raise_first(errors: Any, prefix: str) -> None:
    error = jsonschema.exceptions.best_match(errors)
    if error is not None:
        where = "/".join([prefix, *map(str, error.absolute_path)] if prefix else map(str, error.absolute_path))
        raise ReportError(f"summary invalid at {where or '(root)'}: {error.message}")


def _shape(case: Any) -> tuple[Any, ...] | None:
    """What the schema can tell apart in a case entry (None: an entry to check whatever its shape)."""
    if not isinstance(case, dict) or case.get("deviations"):
        return None
    return tuple(sorted((key, case[key] if key == "verdict" else _kind(case[key])) for key in case))


def _kind(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):
        return ("number", value >= 0)
    if isinstance(value, list):
        return ("list", tuple(sorted({type(item).__name__ for item in value})))
    return type(value).__name__


def _group(group: CaseGroup, report: MatrixReport) -> dict[str, Any]:
    example = group.example
    return {
        "id": group.id,
        "verdict": group.verdict,
        "title": group.title,
        "first_divergence": group.path,
        "reason": group.reason,
        "count": len(group.cases),
        "new": group.new,
        "example": example.case_id,
        "rerun": rerun_command(example, report.rerun),
        "frontends": group.axis("frontend"),
        "backends": group.axis("backend"),
        "scenarios": group.axis("scenario"),
        "cases": [c.case_id for c in group.cases],
    }


def build_summary(report: MatrixReport) -> dict[str, Any]:
    """The summary of a finished run as JSON-ready data."""
    cells = report.cells()
    shard = report.shard
    groups = failing(report.cases)
    group_of = {case_id: [g.id for g in mine] for case_id, mine in groups_of(groups).items()}
    return {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "run_id": report.run_id,
        "sut": report.sut,
        "duration_s": round(report.duration_s, 3),
        "exit_code": report.exit_code,
        "total": len(report.cases),
        "counts": report.counts(),
        "frontends": report.frontends,
        "backends": report.backends,
        "scenarios": report.scenarios,
        "cells": [
            {"frontend": f, "backend": b, "total": sum(counts.values()), "counts": counts}
            for (f, b), counts in cells.items()
        ],
        "new_proxy_bugs": report.new_proxy_bugs,
        "fixed": report.fixed,
        "harness_errors": report.harness_errors,
        "deviating": report.deviating,
        "strict": report.strict,
        **(
            {"shard": {"index": shard.index, "count": shard.count, "matrix_cases": shard.matrix_cases}}
            if shard is not None
            else {}
        ),
        "scenario_descriptions": report.descriptions,
        "rerun_options": report.rerun,
        "groups": [_group(g, report) for g in groups],
        "cases": [
            {
                "case_id": c.case_id,
                "scenario": c.scenario,
                "frontend": c.frontend,
                "backend": c.backend,
                "stream": c.stream,
                "verdict": c.verdict,
                "reason": c.reason,
                "first_divergence": first_path(c),
                "known": c.known,
                "deviations": [d.model_dump(mode="json") for d in c.deviations],
                "group": group_of[c.case_id][0] if c.case_id in group_of else None,
                "groups": group_of.get(c.case_id, []),
                "duration_ms": round(c.duration_ms, 3),
                "trace": f"cases/{trace_file(c)}",
            }
            for c in report.cases
        ],
    }


class SummaryWriter(FileWriter):
    """Writes `summary.json`, validated against its schema."""

    file_name = "summary.json"

    def render(self, report: MatrixReport) -> str:
        """The summary as JSON text (`summary_text`)."""
        data = build_summary(report)
        validate_summary(data)
        return summary_text(data)


def summary_text(data: dict[str, Any]) -> str:
    """`data` as indented JSON, each entry of its `cases` (the last key) on one line: one case a line reads and
    diffs well, and lets JSON's C encoder write the ~17,000 entries of a full matrix (an indented dump of them
    all goes through the pure-Python encoder, about half a second)."""
    head = {key: value for key, value in data.items() if key != "cases"}
    text = json.dumps(head, indent=2, ensure_ascii=False)
    cases = data.get("cases")
    if cases is None:
        return text + "\n"
    lines = ",\n".join("    " + json.dumps(case, ensure_ascii=False) for case in cases)
    listed = f"[\n{lines}\n  ]" if cases else "[]"
    opening = "{\n" if not head else text[:-2] + ",\n"  # head without its closing "\n}"
    return f'{opening}  "cases": {listed}\n}}\n'


class RerenderSummaryWriter(SummaryWriter):
    """A re-render's summary, written beside the run's own `summary.json`, which stays as the run left it."""

    file_name = "summary.rerender.json"
