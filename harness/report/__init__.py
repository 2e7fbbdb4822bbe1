"""Report writers, one per format, each consuming the runner's events (MatrixStarted, CaseJudged* as units of runs
finish, CaseFinished* in plan order, MatrixFinished): `index.html` (triage view), `junit.xml`, `summary.json`, the
terminal summary, and the progress of a run (which counts CaseJudged).

The runner uses `report_writers(reports/<run-id>, console)`; `conformance report` replays a finished run's
case traces through the same writers (`events_for_run` + `emit`), so there is one code path.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from harness.report.groups import CaseGroup, group_cases
from harness.report.html import HtmlWriter, render_html
from harness.report.junit import JUnitWriter, render_junit
from harness.report.model import VERDICTS, Collector, FileWriter, MatrixReport, ReportError, verdict_info
from harness.report.progress import ProgressWriter
from harness.report.rerender import emit, events_for_run, load_cases
from harness.report.summary import SummaryWriter, build_summary, summary_schema, validate_summary
from harness.report.terminal import TerminalWriter, gate_line, print_summary
from harness.runner.run_events import Writer


def file_writers(out_dir: Path) -> list[FileWriter]:
    """The writers of the report folder: index.html, junit.xml and summary.json."""
    return [HtmlWriter(out_dir), JUnitWriter(out_dir), SummaryWriter(out_dir)]


def report_writers(out_dir: Path, console: Console | None = None) -> list[Writer]:
    """Every writer for a run: the report files, and the terminal summary when a console is given."""
    writers: list[Writer] = [*file_writers(out_dir)]
    if console is not None:
        writers.append(TerminalWriter(console))
    return writers


__all__ = [
    "VERDICTS",
    "CaseGroup",
    "Collector",
    "FileWriter",
    "HtmlWriter",
    "JUnitWriter",
    "MatrixReport",
    "ProgressWriter",
    "ReportError",
    "SummaryWriter",
    "TerminalWriter",
    "build_summary",
    "emit",
    "events_for_run",
    "file_writers",
    "gate_line",
    "group_cases",
    "load_cases",
    "print_summary",
    "render_html",
    "render_junit",
    "report_writers",
    "summary_schema",
    "validate_summary",
    "verdict_info",
]
