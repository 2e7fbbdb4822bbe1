"""`conformance report`: re-render a run's index.html, junit.xml and summary.json from its case traces, or join the
reports of a sharded run into one (`--merge`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.scenarios.layers import packaged


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "report",
        help="re-render a run's reports from its case traces",
        description=(
            "Read every case trace in RUN/cases/ and write RUN/index.html, RUN/junit.xml and RUN/summary.json "
            "again through the same writers the runner uses (the run's own summary.json is kept: the re-render's "
            "goes to RUN/summary.rerender.json), then print the terminal summary. The traces must be the cases the "
            "run planned (RUN/plan.json): a run that did not finish is refused. With --merge DIR..., join the report "
            "folders of the N shards of one matrix into RUN instead (all N must be there). Exit 0 when the reports "
            "were written (--gate: the run's gate exit code instead), 2 when the traces cannot be read, do not match "
            "the plan, or the shards do not make one matrix."
        ),
    )
    p.add_argument(
        "--run", type=Path, required=True, help="report folder of the run (reports/<run-id>); with --merge, the output"
    )
    p.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        metavar="DIR",
        help="join the report folders of all N shards (`conformance run --shard K/N`) into --run: one report, one gate",
    )
    p.add_argument(
        "--validate-traces",
        action="store_true",
        help="also check every case trace against the JSON Schema (slow; the trace models check each one anyway)",
    )
    p.add_argument(
        "--scenarios",
        type=Path,
        default=packaged("scenarios"),
        help="scenario folder (default: packaged) whose descriptions the report shows when summary.json lacks them",
    )
    p.add_argument("--quiet", action="store_true", help="do not print the terminal summary")
    p.add_argument("--gate", action="store_true", help="exit with the run's gate code (1 on a new proxy bug)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Re-render the run's reports."""
    # Imported here so that building the parser for `conformance --help` stays light.
    from rich.console import Console

    from harness.report import ReportError, TerminalWriter, emit, events_for_run, file_writers
    from harness.report.merge import check_plans, copy_traces, events_for_merge
    from harness.report.summary import RerenderSummaryWriter, SummaryWriter
    from harness.runner.folder import write_plan
    from harness.runner.run_events import MatrixFinished, MatrixStarted, Writer

    try:
        if args.merge:
            events, traces = events_for_merge(args.merge, args.run.resolve().name, full_check=args.validate_traces)
            copy_traces(traces, args.run)
            started = events[0]
            assert isinstance(started, MatrixStarted)  # events_for_merge always starts with it
            hashes = check_plans(args.merge).get("scenario_hashes")
            write_plan(args.run, started.run_id, started.case_ids, started.rerun, hashes)  # the joined run's plan
        else:
            events = events_for_run(args.run, _descriptions(args.scenarios), full_check=args.validate_traces)
    except ReportError as exc:
        print(f"conformance report: {exc}", file=sys.stderr)  # noqa: T201
        return 2  # nothing could be judged from this folder: never a pass, never read as a proxy bug
    files = file_writers(args.run)
    if not args.merge and (args.run / "summary.json").is_file():
        files = [RerenderSummaryWriter(args.run) if isinstance(w, SummaryWriter) else w for w in files]
    writers: list[Writer] = [*files]
    if not args.quiet:
        writers.append(TerminalWriter(Console()))
    emit(events, writers)
    for writer in files:
        print(f"wrote {writer.path}", file=sys.stderr)  # noqa: T201
    finished = events[-1]
    assert isinstance(finished, MatrixFinished)  # events_for_run always ends with it
    return finished.exit_code if args.gate else 0


def _descriptions(folder: Path) -> dict[str, str]:
    """Scenario descriptions from the scenario files, when the folder is there and they load."""
    from harness.scenarios.loader import ScenarioError, load_scenarios

    if not folder.is_dir():
        return {}
    try:
        return {s.id: s.description for s in load_scenarios(folder)}
    except ScenarioError as exc:
        print(f"conformance report: {folder}: scenario descriptions left out: {exc}", file=sys.stderr)  # noqa: T201
        return {}
