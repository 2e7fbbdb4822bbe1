"""The terminal summary, written to read well in a CI log (no TTY, 80 columns) as on a terminal.

- The matrix with the longer axis as rows (24 backends x 5 frontends fits 80 columns), full names, and compact
  cells: the passes, then each other verdict's count with its mark (`60 2S 10u`), explained by a legend.
- Failing cases grouped by (verdict, root cause) with counts, the values where the cause shows, one example and
  the command that reruns it, instead of one block per case (a case with several causes is under each).
- The totals. The gate line and the report path are printed by `conformance run` itself (`gate_line`), so they
  appear with `-q` too and can say what `--update-known` did.
"""

from __future__ import annotations

import re

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from harness.checks import explain
from harness.report.commands import rerun_command
from harness.report.groups import CaseGroup, failing
from harness.report.model import Collector, MatrixReport, json_value, verdict_info
from harness.runner.run_events import RunnerEvent
from harness.trace.model import CaseResult, Verdict

GROUPS_SHOWN = 15
"""Groups listed per verdict on the terminal (summary.json and the HTML report have them all)."""
VALUE_LIMIT = 60
"""Longest divergence value printed on the terminal (the HTML report has the whole value)."""
MATRIX_NAME = 17
"""Widest row name before it is cut (`cloudflare-openai`)."""


def _cell(counts: dict[Verdict, int]) -> Text:
    text = Text()
    for verdict, n in counts.items():
        if n:
            info = verdict_info(verdict)
            text.append(" " if text else "")
            text.append(f"{n}{info.mark}", style=info.style)
    return text if text else Text("-", style="dim")


def _axes(report: MatrixReport) -> tuple[str, list[str], str, list[str], bool]:
    """(row title, rows, column title, columns, rows are backends): the longer axis runs down the page."""
    if len(report.backends) >= len(report.frontends):
        return "backend", report.backends, "frontend", report.frontends, True
    return "frontend", report.frontends, "backend", report.backends, False


def matrix_table(report: MatrixReport) -> Table:
    """The matrix with compact cells, a total per column, and room for 5 columns in 80 characters."""
    row_title, rows, col_title, cols, by_backend = _axes(report)
    cells = report.cells()
    totals = {c: dict.fromkeys(report.counts(), 0) for c in cols}
    for (frontend, backend), counts in cells.items():
        for verdict, n in counts.items():
            totals[frontend if by_backend else backend][verdict] += n
    table = Table(box=box.SIMPLE, pad_edge=False, padding=(0, 1), show_edge=False, show_footer=True)
    table.add_column(
        Text(f"{row_title} \\ {col_title}"), Text("all"), style="bold", no_wrap=True, max_width=MATRIX_NAME + 2
    )
    for name in cols:
        table.add_column(Text(name), _cell(totals[name]), overflow="fold")
    for row in rows:
        table.add_row(Text(row), *[_cell(cells[(col, row) if by_backend else (row, col)]) for col in cols])
    return table


def legend(report: MatrixReport) -> Text:
    """What the marks in the cells mean (only verdicts that occur)."""
    text = Text("cells: passes, then ")
    present = [v for v, n in report.counts().items() if n and verdict_info(v).mark]
    for i, verdict in enumerate(present):
        info = verdict_info(verdict)
        text.append(f"{info.mark}", style=info.style)
        text.append(f" {info.label}" + (", " if i < len(present) - 1 else ""))
    if not present:
        text.append("(no other verdicts)")
    return text


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Text from answers made safe for a terminal: every control character but newline and tab (ESC, CSI, BEL,
    CR, ...) shown as its escape (`\\x1b`), so a raw escape sequence in an answer cannot drive the terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _divergence(group: CaseGroup) -> Text:
    """The group's cause and, where a divergence shows it, the first case's values there: expected, then actual."""
    text = Text(printable(group.title))
    first = group.divergence
    if first is not None:
        text.append(": expected ")
        text.append(printable(json_value(first.left, VALUE_LIMIT)), style="green")
        text.append(", actual ")
        text.append(printable(json_value(first.right, VALUE_LIMIT)), style="red")
    return text


EXAMPLE_LIMIT = 160
"""Characters of a deviation's message shown as its rule's example."""


def deviation_lines(cases: list[CaseResult]) -> list[Text]:
    """One line per broken rule: how many cases and times, and one example (the report lists every one). The
    rules that touch the most cases come first."""
    by_rule: dict[str, list[tuple[str, str]]] = {}
    for case in cases:
        for deviation in case.deviations:
            by_rule.setdefault(deviation.rule, []).append((case.case_id, deviation.message))
    lines = []
    for rule, seen in sorted(by_rule.items(), key=lambda item: (-len({c for c, _ in item[1]}), item[0])):
        case_id, message = seen[0]
        short = message if len(message) <= EXAMPLE_LIMIT else message[: EXAMPLE_LIMIT - 1] + "…"
        line = Text("  ")
        line.append(rule, style="yellow")
        line.append(f": {_plural(len({c for c, _ in seen}), 'case')}, {_plural(len(seen), 'time')}; e.g. ")
        line.append(case_id, style="bold")
        line.append(f": {printable(short)}")
        lines.append(line)
    return lines


def print_deviations(report: MatrixReport, console: Console) -> None:
    """The wire deviations of the translated runs (warnings, or failures under --strict), summarised by rule."""
    deviating = report.with_deviations()
    if deviating:
        label = "fail the gate (--strict)" if report.strict else "warnings; every one is in the report"
        console.print(Text(f"wire deviations ({_plural(len(deviating), 'case')}; {label}):", style="bold"))
        for line in deviation_lines(deviating):
            console.print(line, soft_wrap=True)


def _names(label: str, names: list[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit]) + (f", +{len(names) - limit} more" if len(names) > limit else "")
    return f"{label} ({len(names)}): {shown}"


def print_group(console: Console, number: int, group: CaseGroup, rerun: list[str]) -> None:
    """One group: count, verdict and id; its cause (with the values where it shows); the example's reason; why;
    where it happens; one example to rerun (the command on one line of its own, unwrapped, to copy and paste)."""
    info = verdict_info(group.verdict)
    head = Text(f"{number:>2}. ")
    head.append(f"{len(group.cases)} x {info.label}", style=info.style)
    head.append(f"  [{group.id}]", style="dim")
    if group.known:
        head.append(f"  {group.known} known, {group.new} new", style="dim")
    body = [_divergence(group)]
    if group.reason != group.title:
        body.append(Text(printable(group.reason)))
    body += [Text(f"why {name} matters: {why}", style="dim") for name, why in explain(group.example)]
    body.append(Text(_names("frontends", group.axis("frontend")), style="dim"))
    body.append(Text(_names("backends", group.axis("backend")), style="dim"))
    body.append(Text(f"e.g. {group.example.case_id}"))
    console.print(head)
    for line in body:  # each indented on its own: a long reason wraps under itself, no line is padded out
        console.print(Padding(line, (0, 0, 0, 4), expand=False))
    console.print(Text(f"    rerun: {rerun_command(group.example, rerun)}", style="dim"), soft_wrap=True)


def print_groups(report: MatrixReport, console: Console) -> None:
    """Every failing verdict's groups (the largest first), at most GROUPS_SHOWN each."""
    by_verdict: dict[str, list[CaseGroup]] = {}
    for group in failing(report.cases):
        if verdict_info(group.verdict).listed:
            by_verdict.setdefault(group.verdict, []).append(group)
    if by_verdict:
        console.print(Text("failing cases grouped by verdict and root cause (a case under each):", style="dim"))
    for verdict, groups in by_verdict.items():
        info = verdict_info(verdict)
        cases = len({c.case_id for g in groups for c in g.cases})
        console.print(Text(f"{info.label}: {_plural(cases, 'case')} in {_plural(len(groups), 'group')}", style="bold"))
        for number, group in enumerate(groups[:GROUPS_SHOWN], 1):
            print_group(console, number, group, report.rerun)
        if len(groups) > GROUPS_SHOWN:
            console.print(Text(f"    ... and {len(groups) - GROUPS_SHOWN} more group(s): see summary.json"))


def totals_line(report: MatrixReport) -> Text:
    """`8280 cases in 1103.2s: 6773 pass, 10 proxy bug (response), ...`."""
    totals = Text(f"{len(report.cases)} cases in {report.duration_s:.1f}s: ")
    parts = [(f"{n} {verdict_info(v).label}", verdict_info(v).style) for v, n in report.counts().items() if n]
    for i, (label, style) in enumerate(parts):
        totals.append(label, style=style)
        if i < len(parts) - 1:
            totals.append(", ")
    return totals


def print_summary(report: MatrixReport, console: Console, *, gate: bool = True) -> None:
    """Print the matrix and its legend, the failing groups, the totals and (`gate`) the gate's outcome."""
    title = Text(f"conformance run {report.run_id}", style="bold")
    console.print(title)
    console.print(matrix_table(report))
    console.print(legend(report))
    print_groups(report, console)
    print_deviations(report, console)
    console.print(totals_line(report))
    if report.fixed:
        console.print(Text(f"fixed since the known-failures list: {', '.join(report.fixed)}", style="green"))
    if gate:
        console.print(Text(gate_line(report), style="bold red" if report.exit_code else "bold green"))


def gate_line(report: MatrixReport) -> str:
    """The gate's outcome in one line: `gate: FAIL (exit 1): 10 new proxy bugs in 1 group` (also what
    `conformance run` prints last on a harness error)."""
    deviations = f"; {_plural(len(report.deviating), 'case')} with wire deviations" if report.deviating else ""
    if report.harness_errors:
        first = next((c for c in report.cases if c.verdict.is_harness_error), None)
        why = f": {first.case_id}: {first.reason}" if first else ""
        count = _plural(len(report.harness_errors), "case")
        return f"gate: ERROR (exit {report.exit_code}): {count} could not be judged{why}"
    if report.exit_code == 2 and report.cases and all(c.verdict == "unsupported" for c in report.cases):
        return (
            f"gate: ERROR (exit {report.exit_code}): nothing was judged: all {_plural(len(report.cases), 'case')} "
            "are unsupported"
        )
    if report.exit_code == 0:
        known = sum(1 for c in report.proxy_bugs() if c.known)
        tail = f"; {known} known proxy bug(s) accepted by the known-failures file" if known else ""
        return f"gate: PASS (exit 0): no new proxy bugs{tail}{deviations}"
    new = set(report.new_proxy_bugs)
    groups = [g for g in failing(report.cases) if any(c.case_id in new for c in g.cases)]
    if new:
        return (
            f"gate: FAIL (exit {report.exit_code}): {_plural(len(new), 'new proxy bug')} in "
            f"{_plural(len(groups), 'group')}{deviations}"
        )
    if report.strict and report.deviating:
        return f"gate: FAIL (exit {report.exit_code}): --strict{deviations}"
    return f"gate: FAIL (exit {report.exit_code})"


class TerminalWriter:
    """Prints the summary to a console when the run finishes, and keeps the finished report for the gate line."""

    def __init__(self, console: Console, *, summary: bool = True, gate: bool = True) -> None:
        """Print to `console` (pass `Console(file=...)` to capture); `summary` False prints nothing (`-q`),
        `gate` False leaves the gate line to the caller."""
        self.console = console
        self.summary = summary
        self.gate = gate
        self.report: MatrixReport | None = None
        """The finished run, once MatrixFinished arrived."""
        self._collector = Collector()

    def handle(self, event: RunnerEvent) -> None:
        """Collect the event; print the summary on MatrixFinished."""
        report = self._collector.handle(event)
        if report is not None:
            self.report = report
            if self.summary:
                print_summary(report, self.console, gate=self.gate)
