"""`index.html`: the triage view, one self-contained file (inline CSS and JS, no network), small and quick to open
for the full matrix.

The page embeds two kinds of data:
- the index (plain JSON): run facts, verdicts (labels and colours, from `VERDICT_INFO`), the matrix axes,
  scenario descriptions, one compact row per case, the groups of cases (verdict, first-divergence path,
  reason), and time to first token per cell. The matrix, the charts, the filters and the case list render from
  it at load.
- the case details, in packs (the cases of one scenario and streaming mode, which share their baselines), each
  gzip-compressed and base64-encoded in its own inert `<script type="application/octet-stream">` element. Opening
  a case decodes its pack in the browser (`DecompressionStream`), so nothing is fetched: the page opens from
  `file://` with no server, and a browser blocks fetch() of file URLs anyway.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
import re
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from harness.checks import spec_for
from harness.diff import Compared
from harness.report.commands import shown_dir
from harness.report.groups import group_cases, groups_of
from harness.report.html_case import Pack
from harness.report.model import VERDICTS, FileWriter, MatrixReport, first_path, verdict_info
from harness.report.timeline import first_token_ms
from harness.runner.run_events import MatrixStarted, RunnerEvent, UnitDone, UnitWork
from harness.trace.model import CaseResult, Verdict

_ASSETS = "html_assets"
SCRIPTS = ("views.js", "report.js")
"""Page scripts, in load order (views.js: DOM, SVG and case-view helpers; report.js: the page)."""
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


def pack_blob(text: str) -> str:
    """A pack's JSON text as base64 of gzip (fixed timestamp: the same run gives the same bytes)."""
    raw = text.encode("utf-8", "surrogatepass")
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


class _Table:
    """Distinct strings, referred to by position."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, value: str | None) -> int:
        if value is None:
            return -1
        if value not in self._index:
            self._index[value] = len(self.items)
            self.items.append(value)
        return self._index[value]


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def first_tokens(report: MatrixReport) -> list[list[Any]]:
    """Per (frontend, backend) cell with streamed cases: [frontend, backend, median time to first token of the
    translated runs, the same for their frontend baselines, streamed cases measured] (ms)."""
    found: dict[tuple[str, str], tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for case in report.cases:
        translated, baseline = case.runs.get("translated"), case.runs.get("baseline_frontend")
        if not case.stream or translated is None or baseline is None:
            continue
        mine, theirs = first_token_ms(translated), first_token_ms(baseline)
        if mine is not None and theirs is not None:
            found[(case.frontend, case.backend)][0].append(mine)
            found[(case.frontend, case.backend)][1].append(theirs)
    return [[f, b, _median(t), _median(r), len(t)] for (f, b), (t, r) in found.items()]


def unit_pack(
    cases: Sequence[CaseResult], judged: Mapping[str, Compared] | None = None, *, report_dir: str, rerun: Sequence[str]
) -> str:
    """The pack of one unit's cases (a scenario in one streaming mode: they share baselines); `judged`: the views
    their verdicts compared, by case id, as the judge handed them over."""
    pack = Pack(report_dir, list(rerun))
    for case in cases:
        pack.add(case, (judged or {}).get(case.case_id))
    return pack_blob(pack.text())


def _packs(
    report: MatrixReport, report_dir: str, ready: Mapping[tuple[str, bool], str]
) -> tuple[dict[str, int], list[str]]:
    """Which pack holds each case, and the packs: one per (scenario, streaming), whose cases share baselines;
    those `ready` (made where the unit was judged) are taken as they are."""
    units: dict[tuple[str, bool], list[CaseResult]] = {}
    for case in report.cases:
        units.setdefault((case.scenario, case.stream), []).append(case)
    number = {key: i for i, key in enumerate(units)}
    where = {case.case_id: number[(case.scenario, case.stream)] for case in report.cases}
    blobs = [
        ready[key] if key in ready else unit_pack(cases, report_dir=report_dir, rerun=report.rerun)
        for key, cases in units.items()
    ]
    return where, blobs


def _row(
    case: CaseResult, axes: dict[str, _Table], strings: _Table, groups: list[int], pack: int, new: bool
) -> list[Any]:
    return [
        case.case_id,
        axes["scenario"](case.scenario),
        axes["frontend"](case.frontend),
        axes["backend"](case.backend),
        1 if case.stream else 0,
        axes["verdict"](case.verdict),
        strings(case.reason),
        strings(first_path(case)),
        groups,
        strings(case.known),
        1 if new else 0,
        round(case.duration_ms),
        pack,
    ]


def _whys(report: MatrixReport) -> dict[str, str]:
    """Why each check that failed in this run matters (from the check registry), for the case view; addresses
    without their scheme, so the page holds no URL."""
    failed = {c.name for case in report.cases for run in case.runs.values() for c in run.checks if not c.passed}
    out = {}
    for name in sorted(failed):
        spec = spec_for(name)
        if spec is not None:
            out[spec.name] = re.sub(r"https?://", "", spec.why)
    return out


def build_index(
    report: MatrixReport, report_dir: str, ready: Mapping[tuple[str, bool], str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The index JSON and the compressed packs of a finished run (`ready`: packs already made, by unit)."""
    axes = {name: _Table() for name in ("scenario", "frontend", "backend", "verdict")}
    for name, values in (("scenario", report.scenarios), ("frontend", report.frontends), ("backend", report.backends)):
        for value in values:
            axes[name](value)
    for verdict in VERDICTS:
        axes["verdict"](verdict)
    strings = _Table()
    # The list shows what needs looking at first: every failing group before the unsupported and passing ones.
    groups = sorted(group_cases(report.cases), key=lambda g: g.verdict in (Verdict.PASS, Verdict.UNSUPPORTED))
    number = {g.id: i for i, g in enumerate(groups)}
    group_of = {case_id: [number[g.id] for g in mine] for case_id, mine in groups_of(groups).items()}
    where, packs = _packs(report, report_dir, ready or {})
    new = set(report.new_proxy_bugs)
    rows = [_row(c, axes, strings, group_of[c.case_id], where[c.case_id], c.case_id in new) for c in report.cases]
    index = {
        "run": {
            "run_id": report.run_id,
            "sut": report.sut,
            "duration_s": report.duration_s,
            "exit_code": report.exit_code,
            "new_proxy_bugs": len(report.new_proxy_bugs),
            "fixed": report.fixed,
            "harness_errors": report.harness_errors,
            "deviating": report.deviating,
            "strict": report.strict,
            "report_dir": report_dir,
        },
        "verdicts": [
            {"id": v, "label": verdict_info(v).label, "short": verdict_info(v).short, "color": verdict_info(v).color}
            for v in axes["verdict"].items
        ],
        "scenarios": axes["scenario"].items,
        "frontends": axes["frontend"].items,
        "backends": axes["backend"].items,
        "descriptions": [report.descriptions.get(s, "") for s in axes["scenario"].items],
        "strings": strings.items,
        "groups": [
            [g.id, axes["verdict"](g.verdict), g.path, strings(g.reason), len(g.cases), strings(g.title)]
            for g in groups
        ],
        "cases": rows,
        "first_tokens": first_tokens(report),
        "why": _whys(report),
    }
    return index, packs


def render_html(
    report: MatrixReport, report_dir: str = ".", ready: Mapping[tuple[str, bool], str] | None = None
) -> str:
    """The whole page for a finished run (`ready`: packs already made, by unit)."""
    index, packs = build_index(report, report_dir, ready)
    blobs = "\n".join(
        f'<script type="application/octet-stream" id="pack-{i}">{blob}</script>' for i, blob in enumerate(packs)
    )
    parts = {
        "title": html.escape(f"Conformance run {report.run_id}"),
        "style": asset("report.css"),
        "script": "\n".join(asset(name) for name in SCRIPTS),
        "data": embed_json(index),
        "packs": blobs,
    }
    # One pass over the template only: markers that happen to appear inside inserted text are not expanded.
    return _MARKER.sub(lambda m: parts[m.group(1)], asset("template.html"))


class HtmlWriter(FileWriter):
    """Writes `index.html`. Each unit's pack is made where the unit was judged (its `unit_work`, in the worker
    processes of a parallel run), so the page's heaviest part is not left to the end of the run."""

    file_name = "index.html"

    def __init__(self, out_dir: Path) -> None:
        super().__init__(out_dir)
        self._ready: dict[tuple[str, bool], str] = {}

    def unit_work(self, started: MatrixStarted) -> tuple[str, UnitWork]:
        """The pack of each unit, with this page's commands."""
        return "html", functools.partial(unit_pack, report_dir=shown_dir(self.out_dir), rerun=tuple(started.rerun))

    def handle(self, event: RunnerEvent) -> None:
        """Keep each unit's ready pack; the rest as every file writer does."""
        if isinstance(event, UnitDone) and "html" in event.parts:
            self._ready[(event.scenario, event.stream)] = event.parts["html"]
        elif isinstance(event, MatrixStarted):
            self._ready = {}
        super().handle(event)

    def render(self, report: MatrixReport) -> str:
        """The page text."""
        return render_html(report, shown_dir(self.out_dir), self._ready)
