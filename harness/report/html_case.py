"""What the page needs to show one case, loaded only when the case is opened: the case result, its runs (a
baseline shared by many cases is stored once per pack), the two views exactly as the verdict compared them,
the event diff aligned by block, each streamed run's timeline, and the commands that rerun and re-diff it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from harness.diff import Compared, UnknownLossesError, compared_views
from harness.report.commands import diff_command, rerun_command
from harness.report.eventdiff import event_diff
from harness.report.timeline import timeline
from harness.trace.model import CaseResult, RunTrace
from harness.trace.slim import needs_triage


def _run_text(run: RunTrace) -> str:
    """A run as the blob holds it. case_id (which case first produced a shared baseline) and role (the frontend
    baseline of one case is the backend baseline of another) are left out, so that one baseline run reached from
    many cases is stored once."""
    return run.model_dump_json(by_alias=True, exclude={"case_id", "role"})


def json_text(payload: Any) -> str:
    """`payload` as the blob writes it: compact JSON, non-ASCII kept."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _object(texts: dict[str, str]) -> str:
    """A JSON object of JSON texts by key (keys that need no escaping: table names and hex hashes)."""
    return "{" + ",".join(f'"{key}":{text}' for key, text in texts.items()) + "}"


def intern(table: dict[str, str], text: str) -> str:
    """Store a payload's JSON text once in `table`, under a hash of that text, and return the hash. Each payload
    is encoded once (the text hashed is the text the blob holds): the blob is spliced from these texts."""
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    table.setdefault(key, text)
    return key


def compared_payload(case: CaseResult, judged: Compared | None = None) -> tuple[dict[str, Any], str | None]:
    """The views the case's verdict compared, by role (none for a case that did not run), and why they are
    missing when they cannot be rebuilt here. `judged`: the views as the judge handed them over, taken when they
    are of the case's runs."""
    reference, translated = case.runs.get("baseline_frontend"), case.runs.get("translated")
    if reference is None or translated is None:
        return {}, None
    views = judged.of(case) if judged is not None else None
    try:
        left, right = views or compared_views(reference, translated)
    except UnknownLossesError as exc:
        return {}, str(exc)
    return {"baseline_frontend": left, "translated": right}, None


class Pack:
    """The details of a few cases, with their distinct runs and views: one compressed blob of the page."""

    def __init__(self, report_dir: str, rerun: list[str]) -> None:
        """`report_dir`: the report folder as a command line names it; `rerun`: the run's shaping options."""
        self.report_dir = report_dir
        self.rerun = rerun
        self.cases: dict[str, Any] = {}
        self.runs: dict[str, str] = {}
        self.views: dict[str, str] = {}
        self.timelines: dict[str, str] = {}
        """Runs, views and timelines as JSON texts (`intern`), by key: a baseline serves many cases."""
        self._run_keys: dict[int, tuple[RunTrace, str]] = {}
        """Each run's key in `runs`, by the id of the run (held with it): a baseline serves many cases."""

    def _run_key(self, run: RunTrace) -> str:
        seen = self._run_keys.get(id(run))
        if seen is None or seen[0] is not run:
            seen = self._run_keys[id(run)] = (run, intern(self.runs, _run_text(run)))
        return seen[1]

    def add(self, case: CaseResult, judged: Compared | None = None) -> None:
        """Add one case's details (`judged`: the views its verdict compared, as the judge handed them over)."""
        data = case.model_dump(mode="json", by_alias=True, exclude={"runs"})
        data["runs"] = {role: self._run_key(run) for role, run in case.runs.items()}
        compared, missing = compared_payload(case, judged)
        data["compared"] = {role: intern(self.views, json_text(view)) for role, view in compared.items()}
        if missing is not None:
            data["compared_missing"] = missing
        if compared:
            data["event_diff"] = event_diff(compared["baseline_frontend"], compared["translated"])
        # A timeline is as long as its stream; a frontend baseline shared by every backend's case is kept once.
        data["timelines"] = {
            role: intern(self.timelines, json_text(line))
            for role, run in case.runs.items()
            if role != "baseline_backend" and (line := timeline(run))
        }
        data["commands"] = {"rerun": rerun_command(case, self.rerun)}
        if case.runs and needs_triage(case):  # a case file of its own (the others share a pack)
            data["commands"]["diff"] = diff_command(case, self.report_dir)
        self.cases[case.case_id] = data

    def text(self) -> str:
        """The pack as JSON text: the cases, then each table's texts as they were interned (keys are hex)."""
        tables = {"runs": self.runs, "views": self.views, "timelines": self.timelines}
        return _object({"cases": json_text(self.cases)} | {name: _object(table) for name, table in tables.items()})

    def payload(self) -> dict[str, Any]:
        """The pack as data (its text, read back)."""
        data: dict[str, Any] = json.loads(self.text())
        return data
