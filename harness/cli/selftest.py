"""`conformance selftest`: prove the gate has teeth. The matrix runs once with the clean built-in proxy and once
per fault of the catalog (`harness.faults`); every fault must be caught and the clean run must be green."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.cli import output_folder
from harness.scenarios.layers import packaged

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "selftest",
        help="switch on each catalogued proxy fault and show which cases catch it (exit 1 if one escapes)",
        description=(
            "Run the cases the fault catalog needs once with the clean built-in proxy, then once per fault. Prints "
            "the catch matrix (fault x cases run, caught, verdicts, first divergence) and the score, writes "
            "reports/selftest-<id>/selftest.json and selftest.html (the catch matrix as a page). Exit 0: every "
            "fault caught and the clean run has no proxy bug; 1: a fault escaped or the clean run has a proxy bug; "
            "2: usage error."
        ),
    )
    p.add_argument("--scenarios", type=Path, default=packaged("scenarios"), help="scenario folder (default: packaged)")
    p.add_argument("--cassettes", type=Path, default=packaged("cassettes"), help="cassette folder (default: packaged)")
    p.add_argument("--reports", type=output_folder, default=Path("reports"), help="report folder (default: reports)")
    p.add_argument("--quick", action="store_true", help="only each fault's witness cases (the bounded CI form)")
    p.add_argument("--fault", type=_names, action="extend", help="only these faults (comma list; default all)")
    p.add_argument("--per-fault", type=int, help="cases per fault in a full run (default 24)")
    p.add_argument("-j", "--jobs", type=int, default=2, help="parallel runs")
    p.add_argument("--run-id", help="report folder suffix (default: a timestamp)")
    p.add_argument("--list", action="store_true", help="list the fault catalog and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress or table")
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    print(f"conformance selftest: {message}", file=sys.stderr)  # noqa: T201
    return EXIT_USAGE


def run(args: argparse.Namespace) -> int:
    """Run the selftest and return its exit code."""
    from rich.console import Console

    from harness.faults import FAULTS, by_name
    from harness.faults.selftest import SelftestOptions, run_selftest
    from harness.scenarios.loader import ScenarioError

    console = Console(quiet=args.quiet)
    if not console.is_terminal:
        console.width = 160  # a CI log has room for the first-divergence column
    if args.list:
        for fault in FAULTS:
            console.print(f"[bold]{fault.name}[/bold]: {fault.description}\n    models: {fault.models}", soft_wrap=True)
        return EXIT_OK
    if args.jobs < 1 or (args.per_fault is not None and args.per_fault < 1):
        return _fail("--jobs and --per-fault must be at least 1")
    try:
        faults = [by_name(n) for n in args.fault] if args.fault else list(FAULTS)
    except KeyError as exc:
        return _fail(str(exc.args[0]))
    options = SelftestOptions(
        scenarios=args.scenarios,
        cassettes=args.cassettes,
        reports=args.reports,
        faults=faults,
        quick=args.quick,
        jobs=args.jobs,
        run_id=args.run_id,
    )
    if args.per_fault is not None:
        options.per_fault = args.per_fault
    status = Console(stderr=True, quiet=args.quiet)
    try:
        with status.status("selftest: clean run and one run per fault ...") as spinner:
            options.on_progress = lambda label: spinner.update(f"selftest: {label}")
            result = run_selftest(options)
    except (ScenarioError, ValueError) as exc:
        return _fail(str(exc))
    render(result, console)
    print(f"report: {options.reports / f'selftest-{result.run_id}' / 'selftest.html'}")  # noqa: T201
    return result.exit_code


def render(result: Any, console: Any) -> None:
    """The catch matrix, the clean run's proxy bugs (if any) and the score."""
    from rich.table import Table

    table = Table(title=f"selftest {result.run_id}{' (quick)' if result.quick else ''}", show_lines=False)
    for column in ("fault", "cases", "caught", "verdicts", "caught by", "first divergence"):
        table.add_column(column, overflow="fold")
    for outcome in result.outcomes:
        verdicts = ", ".join(f"{v} {n}" for v, n in sorted(outcome.verdicts.items()))
        mark = f"[green]{len(outcome.catching)}[/green]" if outcome.caught else "[red bold]ESCAPED[/red bold]"
        catching = outcome.catching[0] if outcome.catching else "-"
        if len(outcome.catching) > 1:
            catching += f" (+{len(outcome.catching) - 1})"
        table.add_row(
            outcome.fault.name, str(len(outcome.cases)), mark, verdicts, catching, outcome.first_divergence or "-"
        )
    console.print(table)
    clean = result.clean_bugs
    console.print(f"clean run: {len(result.clean)} cases, {len(clean)} proxy bug(s)")
    for bug in clean:
        console.print(f"  [red]{bug.case_id}[/red]: {bug.reason}", soft_wrap=True)
    for error in result.clean_errors:
        console.print(f"  [red]harness error {error.case_id}[/red]: {error.reason}", soft_wrap=True)
    caught = sum(o.caught for o in result.outcomes)
    style = "green" if result.exit_code == 0 else "red bold"
    console.print(f"[{style}]caught {caught}/{len(result.outcomes)}[/{style}] in {result.duration_s:.1f} s")
