"""A run's report folder before its first case: what an earlier run under the same id left is removed, and the
plan (`plan.json`: the run's id, its options, every case it will judge and a hash of each scenario's content) is
written, so a re-render or a join can tell a finished run from a killed one, and one matrix from another."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.scenarios.model import Scenario
from harness.trace.writer import atomic_write_text

PLAN_FILE = "plan.json"
"""The cases a run set out to judge, written before the first one runs: a re-render checks the traces against it."""
REPORT_FILES = ("index.html", "junit.xml", "summary.json", "summary.rerender.json", PLAN_FILE)
"""What a run writes beside its `cases/` folder."""


def clear_previous(folder: Path) -> None:
    """Remove what an earlier run under the same id left in `folder` (its case traces and report files), so a
    reused `--run-id` (the nox sessions reuse theirs) never mixes old traces into the new run. Nothing else in the
    folder is touched."""
    cases = folder / "cases"
    if cases.is_dir():
        shutil.rmtree(cases)
    for name in REPORT_FILES:
        (folder / name).unlink(missing_ok=True)


def write_plan(
    folder: Path,
    run_id: str,
    case_ids: Sequence[str],
    rerun: Sequence[str],
    scenario_hashes: Mapping[str, str] | None = None,
) -> None:
    """Write `plan.json`: the run's id, its options, every case it will judge, in order, and a hash of each
    scenario's content (shards of one matrix must agree on both: `report --merge`)."""
    doc: dict[str, object] = {"run_id": run_id, "options": list(rerun), "case_ids": list(case_ids)}
    if scenario_hashes is not None:
        doc["scenario_hashes"] = dict(scenario_hashes)
    atomic_write_text(folder / PLAN_FILE, json.dumps(doc, indent=1) + "\n")


def read_plan(folder: Path) -> Any:
    """The parsed `plan.json` of a run's folder (OSError, UnicodeDecodeError or a JSON error when it is missing or
    unreadable; the caller says what that means for it)."""
    return json.loads((folder / PLAN_FILE).read_text(encoding="utf-8"))


def content_hash(scenario: Scenario) -> str:
    """A short hash of a scenario's content (not its file's path): two runs that differ in it are not one matrix."""
    return hashlib.sha256(scenario.model_dump_json().encode("utf-8")).hexdigest()[:16]
