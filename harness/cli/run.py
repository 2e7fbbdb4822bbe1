"""`conformance run`: the conformance matrix against the built-in proxy and the committed cassettes; the exit code
is the gate (0 no new proxy bug, 1 a new proxy bug, 2 a usage, configuration or harness error: nothing that could
not be judged ever passes)."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.trace import CaseResult

EXIT_OK, EXIT_BUG, EXIT_USAGE = 0, 1, 2
DEFAULT_KNOWN = Path("conformance-known.toml")
LISTED = 20
"""Case ids listed per kind of change after --update-known (the file holds them all)."""


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "run",
        help="run the conformance matrix and write the report (exit code is the gate)",
        description=(
            "Run every case (frontend x backend x scenario x streaming) through the built-in proxy against the "
            "recorded backends: baseline(F), baseline(B) and the translated run, then triage. Writes "
            "reports/<run-id>/ (index.html, junit.xml, summary.json, cases/). Exit 0: no proxy bug beyond the "
            "known-failures file; 1: a new proxy bug (or a wire deviation under --strict); 2: a usage, configuration "
            "or harness error (a case that could not be judged: a missing cassette, a system under test that "
            "cannot be reached, a port that cannot be bound)."
        ),
    )
    p.add_argument("--scenarios", type=Path, default=Path("scenarios"), help="scenario folder (default: scenarios)")
    p.add_argument("--cassettes", type=Path, default=Path("cassettes"), help="cassette folder (default: cassettes)")
    p.add_argument("--reports", type=Path, default=Path("reports"), help="report folder (default: reports)")
    p.add_argument("--frontend", type=_names, action="extend", help="frontend protocols (comma list; default all)")
    p.add_argument("--backend", type=_names, action="extend", help="backends (comma list; default: all recorded)")
    p.add_argument("--scenario", type=_names, action="extend", help="only these scenario ids (comma list)")
    p.add_argument("--streaming", choices=("both", "stream", "nonstream"), default="both", help="streaming modes")
    p.add_argument("-j", "--jobs", type=int, default=2, help="parallel runs (results equal a serial run)")
    p.add_argument("--socket", action="store_true", help="serve the proxy on a loopback socket (default in-process)")
    p.add_argument("--rechunk", choices=("bytes", "random", "utf8"), help="re-cut replayed streams adversarially")
    p.add_argument(
        "--sut",
        metavar="URL",
        help="gate a proxy running elsewhere: translated runs go to URL (baselines stay on the built-in pass-through); "
        "its upstreams must point at the replay server this run starts (config: `conformance sut-config`)",
    )
    p.add_argument("--replay-host", default="127.0.0.1", help="--sut: replay server interface")
    p.add_argument("--replay-port", type=int, default=8790, help="--sut: replay server port")
    p.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="per-request timeout of the SDK clients (connect, and between bytes); past it a run is a harness "
        "error naming the SDK's own error (default: 60)",
    )
    p.add_argument(
        "--strict", action="store_true", help="wire deviations (warnings by default) fail the gate too (exit 1)"
    )
    p.add_argument(
        "--record-mode",
        choices=("none", "once", "new_episodes", "all", "rewrite"),
        default="none",
        help="none: replay only (default); others first (re-)record missing cassettes from the reference backends",
    )
    p.add_argument(
        "--known", type=Path, help=f"known-failures file (default: {DEFAULT_KNOWN} when it exists; named, it must)"
    )
    p.add_argument(
        "--update-known",
        action="store_true",
        help="rewrite the known-failures file with this run's proxy bugs (exit 0 once written)",
    )
    p.add_argument("--run-id", help="report folder name (default: a timestamp)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary table")
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    for line in message.splitlines():
        print(f"conformance run: {line}", file=sys.stderr)  # noqa: T201
    return EXIT_USAGE


def run(args: argparse.Namespace) -> int:
    """Run the matrix and return the gate's exit code."""
    from rich.console import Console

    from harness.plumbing import SetupError
    from harness.protocols.registry import UnknownProtocolError
    from harness.record import Rechunk
    from harness.report import progress, report_writers
    from harness.runner.engine import Runner
    from harness.runner.known import KnownFileError, load_known
    from harness.runner.plan import RunOptions
    from harness.runner.record_missing import record_missing
    from harness.scenarios.loader import ScenarioError

    if args.jobs < 1:
        return _fail("--jobs must be at least 1")
    if args.timeout <= 0:
        return _fail("--timeout must be a positive number of seconds")
    if not args.scenarios.is_dir() or not any(args.scenarios.glob("*.yaml")):
        print("no scenarios yet" if not args.scenarios.exists() else f"no scenarios in {args.scenarios}")  # noqa: T201
        return EXIT_OK
    streams = {"both": (True, False), "stream": (True,), "nonstream": (False,)}[args.streaming]
    known = args.known or DEFAULT_KNOWN
    if args.known is not None and not known.is_file() and not args.update_known:
        return _fail(f"--known {known}: no such file (omit --known to run without one; --update-known creates it)")
    if args.update_known and not known.parent.is_dir():
        return _fail(f"--update-known: {known}: no folder {known.parent} to write it in")
    try:  # a bad known-failures file fails before any case runs
        previous = load_known(known)
    except KnownFileError as exc:
        return _fail(str(exc))
    options = RunOptions(
        scenarios=args.scenarios,
        cassettes=args.cassettes,
        reports=args.reports,
        frontends=args.frontend,
        backends=args.backend,
        only=args.scenario,
        streams=streams,
        jobs=args.jobs,
        socket=args.socket,
        rechunk=Rechunk(args.rechunk) if args.rechunk else None,
        known=known,
        run_id=args.run_id,
        sut=args.sut,
        replay_host=args.replay_host,
        replay_port=args.replay_port,
        timeout=args.timeout,
        strict=args.strict,
    )
    console = Console(stderr=False, quiet=args.quiet)
    try:
        runner = Runner(options)
        if args.record_mode != "none":
            made = record_missing(runner, args.record_mode)
            console.print(f"recorded {made} cassette(s) from the reference backends")
        runner.writers = report_writers(runner.folder, None if args.quiet else console)
        with progress(len(runner.planned_runs()), Console(stderr=True, quiet=args.quiet)) as bar:
            options.on_progress = lambda case_id: bar.progress.update(bar.task, advance=1, latest=case_id)
            finished = runner.run()
    except (ScenarioError, KnownFileError, UnknownProtocolError, SetupError, ValueError) as exc:
        return _fail(str(exc))
    except Exception as exc:  # a bug of the harness itself: never read as a proxy bug (exit 1) or a pass
        traceback.print_exc()
        return _fail(f"internal error: {type(exc).__name__}: {exc} (a harness bug; the traceback is above)")
    console.print(f"report: {runner.folder / 'index.html'}")
    if finished.harness_errors:
        return _fail(_harness_errors(options.results, finished.harness_errors, runner.folder))
    if args.update_known:
        return _update_known(known, options.results, previous, finished.exit_code)
    return finished.exit_code


def _update_known(path: Path, results: list[Any], previous: dict[str, Any], gate: int) -> int:
    """Rewrite the known-failures file; exit 0 only once it is written, and say what changed."""
    from harness.runner.known import write_known

    if gate not in (EXIT_OK, EXIT_BUG):  # the run itself failed: its verdicts are no basis for the file
        print(f"conformance run: --update-known: {path} left unchanged (the run exited {gate})", file=sys.stderr)  # noqa: T201
        return gate
    try:
        update = write_known(path, results, previous)
    except OSError as exc:
        return _fail(f"--update-known: {path}: cannot write: {exc.strerror}")
    print(f"known failures updated: {update.summary(path)}")  # noqa: T201
    for sign, ids in (("+", update.added), ("~", update.changed), ("-", update.removed)):
        for case_id in ids[:LISTED]:
            print(f"  {sign} {case_id}")  # noqa: T201
        if len(ids) > LISTED:
            print(f"  {sign} ... and {len(ids) - LISTED} more")  # noqa: T201
    if gate == EXIT_BUG:
        print("gate: PASS with the updated known-failures file (the gate line above is before the update)")  # noqa: T201
    return EXIT_OK


def _harness_errors(results: list[CaseResult], errors: Sequence[str], folder: Path) -> str:
    """One line for cases that could not be judged: how many, and the first one's reason."""
    first = next(r for r in results if r.case_id == errors[0])
    more = f" (and {len(errors) - 1} more case(s); see {folder / 'summary.json'})" if len(errors) > 1 else ""
    return f"harness error: {first.case_id}: {first.reason}{more}"
