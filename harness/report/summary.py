"""`summary.json`: the run in numbers for machines (dashboards, bots, the next run's "fixed" list).

Its JSON Schema ships next to this module (`summary.schema.json`); the writer validates before writing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from harness.diff import Compared
from harness.report.commands import rerun_command
from harness.report.groups import CaseGroup, failing, groups_of, settled
from harness.report.model import MatrixReport, ReadyTextWriter, ReportError, first_path, ready_part
from harness.runner.run_events import UnitWork
from harness.trace.model import CaseResult
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
    checked against the schema once per shape (`entry_shape`: its keys, the JSON type of each value, the verdict, the
    sign of its duration, the item types of its lists); an entry with deviations is always checked."""
    cases = data.get("cases")
    if not isinstance(cases, list):
        _raise_first(_validator().iter_errors(data), "")
        return
    _raise_first(_validator().iter_errors({**data, "cases": []}), "")
    check = _EntryCheck()
    for number, case in enumerate(cases):
        shape = entry_shape(case)
        if check.wanted(shape):
            check(number, shape, case)


class _EntryCheck:
    """Checks case entries against the schema's entry once per shape (`entry_shape`); whoever holds an entry asks
    first whether its shape is `wanted`, so a line written already is parsed back only then."""

    def __init__(self) -> None:
        self._validator = _validator().evolve(schema=summary_schema()["properties"]["cases"]["items"])
        self._seen: set[str] = set()

    def wanted(self, shape: str | None) -> bool:
        """Whether an entry of this shape is still to be checked."""
        return shape is None or shape not in self._seen

    def __call__(self, number: int, shape: str | None, entry: Any) -> None:
        """Check entry `number` of the `cases` list; raise ReportError when it does not match."""
        _raise_first(self._validator.iter_errors(entry), f"cases/{number}")
        if shape is not None:
            self._seen.add(shape)


def _raise_first(errors: Any, prefix: str) -> None:
    error = jsonschema.exceptions.best_match(errors)
    if error is not None:
        where = "/".join([prefix, *map(str, error.absolute_path)] if prefix else map(str, error.absolute_path))
        raise ReportError(f"summary invalid at {where or '(root)'}: {error.message}")


def entry_shape(case: Any) -> str | None:
    """What the schema can tell apart in a case entry, as text (None: an entry to check whatever its shape)."""
    if not isinstance(case, dict) or case.get("deviations"):
        return None
    return repr(sorted((key, str(case[key]) if key == "verdict" else _kind(case[key])) for key in case))


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


def case_entry(case: CaseResult, groups: list[str]) -> dict[str, Any]:
    """A case's entry in `cases` (`groups`: the ids of its groups, its headline cause's first)."""
    return {
        "case_id": case.case_id,
        "scenario": case.scenario,
        "frontend": case.frontend,
        "backend": case.backend,
        "stream": case.stream,
        "verdict": case.verdict,
        "reason": case.reason,
        "first_divergence": first_path(case),
        "known": case.known,
        "deviations": [d.model_dump(mode="json") for d in case.deviations],
        "group": groups[0] if groups else None,
        "groups": groups,
        "duration_ms": round(case.duration_ms, 3),
        "trace": f"cases/{trace_file(case)}",
    }


def _line(entry: dict[str, Any]) -> str:
    """A case entry as its line of summary.json (`summary_text`)."""
    return "    " + json.dumps(entry, ensure_ascii=False)


def unit_entries(cases: Sequence[CaseResult], judged: Mapping[str, Compared] | None = None) -> str:
    """The lines of a unit's settled cases (`groups.settled`: in no group) with the shape of each
    (`entry_shape`, before a newline), made where the unit was judged (`model.ready_part`)."""
    entries = (case_entry(case, []) for case in cases if settled(case))
    return ready_part((entry["case_id"], f"{entry_shape(entry)}\n{_line(entry)}") for entry in entries)


def build_summary(report: MatrixReport) -> dict[str, Any]:
    """The summary of a finished run as JSON-ready data."""
    groups = failing(report.cases)
    group_of = _group_ids(groups)
    return {
        **_head(report, groups),
        "cases": [case_entry(c, group_of.get(c.case_id, [])) for c in report.cases],
    }


def _group_ids(groups: list[CaseGroup]) -> dict[str, list[str]]:
    """The ids of each case's groups, by case id, its headline cause's first."""
    return {case_id: [g.id for g in mine] for case_id, mine in groups_of(groups).items()}


def _head(report: MatrixReport, groups: list[CaseGroup]) -> dict[str, Any]:
    """Everything in the summary but its `cases`."""
    cells = report.cells()
    shard = report.shard
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
    }


class SummaryWriter(ReadyTextWriter):
    """Writes `summary.json`, validated against its schema."""

    file_name = "summary.json"

    key = "summary"

    def texts(self) -> UnitWork:
        """`unit_entries`."""
        return unit_entries

    def render(self, report: MatrixReport) -> str:
        """The summary as JSON text, validated."""
        return render_summary(report, self.ready)


def render_summary(report: MatrixReport, ready: Mapping[str, str] | None = None) -> str:
    """`summary_text` of the validated `build_summary` of a finished run (`ready`: the shape and line of settled
    cases made already, by case id, as `unit_entries` makes them; the others are made here). A ready line is
    validated as it was written: parsed back, once per shape, as the entries made here are."""
    made = ready or {}
    groups = failing(report.cases)
    head = _head(report, groups)
    _raise_first(_validator().iter_errors({**head, "cases": []}), "")
    group_of = _group_ids(groups)
    check = _EntryCheck()
    lines = []
    for number, case in enumerate(report.cases):
        text = made.get(case.case_id)
        if text is not None and settled(case):
            written, line = text.split("\n", 1)
            if check.wanted(written):
                check(number, written, json.loads(line))
        else:
            entry = case_entry(case, group_of.get(case.case_id, []))
            line = _line(entry)
            shape = entry_shape(entry)
            if check.wanted(shape):
                check(number, shape, entry)
        lines.append(line)
    return _document(json.dumps(head, indent=2, ensure_ascii=False), lines)


def summary_text(data: dict[str, Any]) -> str:
    """`data` as indented JSON, each entry of its `cases` (the last key) on one line: one case a line reads and
    diffs well, and lets JSON's C encoder write the ~17,000 entries of a full matrix (an indented dump of them
    all goes through the pure-Python encoder, about half a second)."""
    head = {key: value for key, value in data.items() if key != "cases"}
    text = json.dumps(head, indent=2, ensure_ascii=False)
    cases = data.get("cases")
    if cases is None:
        return text + "\n"
    return _document(text, [_line(case) for case in cases])


def _document(head: str, lines: list[str]) -> str:
    """The summary's text from its head's indented JSON (`head`) and one line per case entry (`_line`)."""
    listed = "[\n" + ",\n".join(lines) + "\n  ]" if lines else "[]"
    opening = "{\n" if head == "{}" else head[:-2] + ",\n"  # head without its closing "\n}"
    return f'{opening}  "cases": {listed}\n}}\n'


class RerenderSummaryWriter(SummaryWriter):
    """A re-render's summary, written beside the run's own `summary.json`, which stays as the run left it."""

    file_name = "summary.rerender.json"
