"""The terminal summary (a `rich` matrix table and the list of proxy bugs) and a progress helper for the runner."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from harness.report.model import Collector, RunReport, json_value
from harness.runner.run_events import RunnerEvent
from harness.trace.model import CaseResult, Verdict

STYLES: dict[Verdict, str] = {
    Verdict.PASS: "green",
    Verdict.PROXY_BUG_REQUEST: "bold red",
    Verdict.PROXY_BUG_RESPONSE: "bold red",
    Verdict.BACKEND_ISSUE: "yellow",
    Verdict.BASELINE_ISSUE: "magenta",
    Verdict.UNSUPPORTED: "dim",
    Verdict.HARNESS_ERROR: "bold white on red",
}
"""Colour of each verdict."""

SHORT: dict[Verdict, str] = {
    Verdict.PASS: "pass",
    Verdict.PROXY_BUG_REQUEST: "bug:req",
    Verdict.PROXY_BUG_RESPONSE: "bug:resp",
    Verdict.BACKEND_ISSUE: "backend",
    Verdict.BASELINE_ISSUE: "baseline",
    Verdict.UNSUPPORTED: "unsup",
    Verdict.HARNESS_ERROR: "ERROR",
}
"""Short verdict labels that keep matrix cells narrow."""

VALUE_LIMIT = 120
"""Longest divergence value printed on the terminal (the HTML report has the whole value)."""


def _cell(counts: dict[Verdict, int]) -> Text:
    text = Text()
    for verdict, n in counts.items():
        if n:
            if text:
                text.append(" ")
            text.append(f"{n} {SHORT[verdict]}", style=STYLES[verdict])
    return text if text else Text("-", style="dim")


def matrix_table(report: RunReport) -> Table:
    """Frontend x backend table whose cells count cases per verdict, coloured."""
    # Names are wrapped in Text so that brackets in them are never read as rich markup.
    table = Table(title=Text(f"conformance run {report.run_id}"), title_justify="left")
    table.add_column(Text("frontend \\ backend"), style="bold")
    for backend in report.backends:
        table.add_column(Text(backend))
    cells = report.cells()
    for frontend in report.frontends:
        table.add_row(Text(frontend), *[_cell(cells[(frontend, b)]) for b in report.backends])
    return table


def _bug_line(case: CaseResult) -> Text:
    line = Text("  ")
    line.append(case.verdict, style=STYLES[case.verdict])
    line.append(f" {case.case_id}", style="bold")
    if case.known:
        line.append(f" (known: {case.known})", style="dim")
    line.append(f"\n    {case.reason}")
    first = case.first_divergence
    if first is not None:
        line.append(f"\n    first divergence at {first.path}: ")
        line.append(json_value(first.left, VALUE_LIMIT), style="green")
        line.append(" != ")
        line.append(json_value(first.right, VALUE_LIMIT), style="red")
    return line


def _deviation_lines(case: CaseResult) -> Text:
    line = Text("  ")
    line.append(case.case_id, style="bold")
    for deviation in case.deviations:
        line.append(f"\n    {deviation.rule}: ", style="yellow")
        line.append(deviation.message)
    return line


def gate_line(report: RunReport) -> str:
    """The gate's outcome in one line (also what `conformance run` prints last on a harness error)."""
    if report.harness_errors:
        first = next((c for c in report.cases if c.verdict.is_harness_error), None)
        why = f": {first.case_id}: {first.reason}" if first else ""
        return f"gate: ERROR ({len(report.harness_errors)} case(s) could not be judged{why})"
    deviations = f"; {len(report.deviating)} case(s) with wire deviations" if report.deviating else ""
    if report.strict and report.deviating and not report.new_proxy_bugs:
        return f"gate: FAIL (--strict{deviations})"
    detail = f"{len(report.new_proxy_bugs)} new proxy bug(s)" if report.new_proxy_bugs else "no new proxy bugs"
    return f"gate: {'FAIL' if report.exit_code else 'PASS'} ({detail}{deviations})"


def print_summary(report: RunReport, console: Console) -> None:
    """Print the matrix, the harness errors and proxy bugs with their first divergence, the wire deviations, the
    totals and the gate's outcome."""
    console.print(matrix_table(report))
    for title, cases in (("harness errors", report.errors()), ("proxy bugs", report.proxy_bugs())):
        if cases:
            console.print(Text(f"{title} ({len(cases)}):", style="bold"))
            for case in cases:
                console.print(_bug_line(case), soft_wrap=True)
    deviating = report.with_deviations()
    if deviating:
        label = "fail the gate (--strict)" if report.strict else "warnings"
        console.print(Text(f"wire deviations ({len(deviating)} cases; {label}):", style="bold"))
        for case in deviating:
            console.print(_deviation_lines(case), soft_wrap=True)
    totals = Text(f"{len(report.cases)} cases in {report.duration_s:.1f}s: ")
    parts = [(f"{n} {v}", STYLES[v]) for v, n in report.counts().items() if n]
    for i, (label, style) in enumerate(parts):
        totals.append(label, style=style)
        if i < len(parts) - 1:
            totals.append(", ")
    console.print(totals)
    if report.fixed:
        console.print(Text(f"fixed since the known-failures list: {', '.join(report.fixed)}", style="green"))
    console.print(Text(gate_line(report), style="bold red" if report.exit_code else "bold green"))


class TerminalWriter:
    """Prints the summary to a console when the run finishes."""

    def __init__(self, console: Console) -> None:
        """Print to `console` (pass `Console(file=...)` to capture)."""
        self.console = console
        self._collector = Collector()

    def handle(self, event: RunnerEvent) -> None:
        """Collect the event; print the summary on RunFinished."""
        report = self._collector.handle(event)
        if report is not None:
            print_summary(report, self.console)


@dataclass
class ProgressHandle:
    """What the runner advances once per finished case."""

    progress: Progress
    """The rich progress display (disabled when not on a terminal)."""
    task: TaskID
    """Its one task."""
    bugs: int = 0
    """Proxy bugs seen so far."""

    def advance(self, case: CaseResult) -> None:
        """Count one finished case and show it as the latest."""
        if case.verdict.is_proxy_bug:
            self.bugs += 1
        self.progress.update(self.task, advance=1, latest=case.case_id, bugs=self.bugs)


@contextmanager
def progress(total: int, console: Console | None = None) -> Iterator[ProgressHandle]:
    """A progress bar over `total` cases; draws nothing when the console is not a terminal (CI logs, pipes)."""
    console = console or Console(stderr=True)
    bar = Progress(
        TextColumn("[bold]cases"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("[red]{task.fields[bugs]} proxy bugs"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[latest]}", style="dim", markup=False),
        console=console,
        disable=not console.is_terminal,
        transient=True,
    )
    with bar:
        task = bar.add_task("cases", total=total, latest="", bugs=0)
        yield ProgressHandle(bar, task)
