"""`index.html`: the triage view, one self-contained file (inline CSS and JS, data as embedded JSON, no network).

The page is rendered by `html_assets/report.js` from a JSON blob: the matrix, the filters and the case list at
load, and one case view on demand (so hundreds of cases stay usable). Baseline runs are shared by many cases;
the blob stores each distinct run once and cases refer to it by a content hash. A case's "compared" pane shows
the two SDK views exactly as its verdict compared them (`harness.diff.compared_views`: accumulated, the declared
losses applied, normalized), interned the same way.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from functools import cache
from importlib import resources
from typing import Any

from harness.diff import UnknownLossesError, compared_views
from harness.report.model import VERDICTS, FileWriter, RunReport
from harness.trace.model import CaseResult, RunTrace

_ASSETS = "html_assets"
_MARKER = re.compile(r"<!--@(\w+)-->")
# Inside <script> the HTML parser only looks for `</script` and `<!--`; escaping every `<`, `>` and `&` as a
# JSON unicode escape keeps the blob valid JSON and makes both sequences impossible. Lone surrogates (valid
# in Python strings from JSON, not encodable as UTF-8) are escaped the same way.
_SCRIPT_UNSAFE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")


@cache
def asset(name: str) -> str:
    """The text of one file under html_assets/."""
    return resources.files("harness.report").joinpath(_ASSETS, name).read_text(encoding="utf-8")


def embed_json(data: Any) -> str:
    """JSON text safe to place inside a `<script type="application/json">` element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return _SCRIPT_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _run_payload(run: RunTrace) -> dict[str, Any]:
    # case_id (which case first produced a shared baseline) and role (frontend baseline of one case is the
    # backend baseline of another) are left out so that one baseline run reached from many cases is stored once.
    return run.model_dump(mode="json", by_alias=True, exclude={"case_id", "role"})


def _intern(table: dict[str, Any], payload: Any) -> str:
    key = hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    table.setdefault(key, payload)
    return key


def compared_payload(case: CaseResult) -> tuple[dict[str, Any], str | None]:
    """The views the case's verdict compared, by role (none for a case that did not run), and why they are
    missing when they cannot be rebuilt here."""
    reference, translated = case.runs.get("baseline_frontend"), case.runs.get("translated")
    if reference is None or translated is None:
        return {}, None
    try:
        left, right = compared_views(reference, translated)
    except UnknownLossesError as exc:
        return {}, str(exc)
    return {"baseline_frontend": left, "translated": right}, None


def _case_payload(case: CaseResult, runs: dict[str, Any], views: dict[str, Any]) -> dict[str, Any]:
    data = case.model_dump(mode="json", by_alias=True, exclude={"runs"})
    data["runs"] = {role: _intern(runs, _run_payload(run)) for role, run in case.runs.items()}
    compared, missing = compared_payload(case)
    data["compared"] = {role: _intern(views, view) for role, view in compared.items()}
    if missing is not None:
        data["compared_missing"] = missing
    return data


def build_data(report: RunReport) -> dict[str, Any]:
    """The JSON the page renders from: run facts, cases (with run and view references), the distinct runs and the
    distinct compared views."""
    runs: dict[str, Any] = {}
    views: dict[str, Any] = {}
    cases = [_case_payload(c, runs, views) for c in report.cases]
    return {
        "run": {
            "run_id": report.run_id,
            "sut": report.sut,
            "duration_s": report.duration_s,
            "exit_code": report.exit_code,
            "verdicts": list(VERDICTS),
            "counts": report.counts(),
            "frontends": report.frontends,
            "backends": report.backends,
            "scenarios": report.scenarios,
            "new_proxy_bugs": report.new_proxy_bugs,
            "fixed": report.fixed,
            "harness_errors": report.harness_errors,
            "deviating": report.deviating,
            "strict": report.strict,
        },
        "cases": cases,
        "runs": runs,
        "views": views,
    }


def render_html(report: RunReport) -> str:
    """The whole page for a finished run."""
    parts = {
        "title": html.escape(f"Conformance run {report.run_id}"),
        "style": asset("report.css"),
        "script": asset("report.js"),
        "data": embed_json(build_data(report)),
    }
    # One pass over the template only: markers that happen to appear inside inserted text are not expanded.
    return _MARKER.sub(lambda m: parts[m.group(1)], asset("template.html"))


class HtmlWriter(FileWriter):
    """Writes `index.html`."""

    file_name = "index.html"

    def render(self, report: RunReport) -> str:
        """The page text."""
        return render_html(report)
