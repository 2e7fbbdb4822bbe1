"""`conformance run`: the conformance matrix against the built-in proxy and the committed cassettes; the exit code
is the gate (0 no new proxy bug, 1 a new proxy bug, 2 a usage or configuration error)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_BUG, EXIT_USAGE = 0, 1, 2


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
            "known-failures file; 1: a new proxy bug; 2: usage or configuration error."
        ),
    )
    p.add_argument("--scenarios", type=Path, default=Path("scenarios"), help="scenario folder (default: scenarios)")
    p.add_argument("--cassettes", type=Path, default=Path("cassettes"), help="cassette folder (default: cassettes)")
    p.add_argument("--reports", type=Path, default=Path("reports"), help="report folder (default: reports)")
    p.add_argument("--frontend", type=_names, action="extend", help="frontend protocols (comma list; default all)")
    p.add_argument("--backend", type=_names, action="extend", help="backends (comma list; default: all recorded)")
    p.add_argument("--scenario", type=_names, action="extend", help="only these scenario ids (comma list)")
    p.add_argument("--streaming", choices=("both", "stream", "nonstream"), default="both", help="streaming modes")
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        help="worker processes (default: the cores available; results equal a serial run's, -j 1 runs in-process)",
    )
    p.add_argument(
        "--shard",
        metavar="K/N",
        help="run only shard K of N of the matrix (deterministic; a shard runs the baselines it needs); join the "
        "shards' reports with `conformance report --merge`",
    )
    p.add_argument(
        "--validate-traces",
        action="store_true",
        help="also check every case trace against the JSON Schema (slow; the trace models check each one anyway)",
    )
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
        "--record-mode",
        choices=("none", "once", "new_episodes", "all", "rewrite"),
        default="none",
        help="none: replay only (default); others first (re-)record missing cassettes from the reference backends",
    )
    p.add_argument("--known", type=Path, default=Path("conformance-known.toml"), help="known-failures file")
    p.add_argument("--update-known", action="store_true", help="rewrite the known-failures file from this run")
    p.add_argument("--run-id", help="report folder name (default: a timestamp)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary table")
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    print(f"conformance run: {message}", file=sys.stderr)  # noqa: T201
    return EXIT_USAGE


def run(args: argparse.Namespace) -> int:
    """Run the matrix and return the gate's exit code."""
    from rich.console import Console

    from harness.protocols.registry import UnknownProtocolError
    from harness.record import Rechunk
    from harness.report import progress, report_writers
    from harness.runner.engine import Runner, default_jobs
    from harness.runner.known import KnownFileError, load_known, write_known
    from harness.runner.plan import RunOptions
    from harness.runner.record_missing import record_missing
    from harness.runner.units import parse_shard
    from harness.runner.workers import WorkerError
    from harness.scenarios.loader import ScenarioError

    jobs = default_jobs() if args.jobs is None else args.jobs
    if jobs < 1:
        return _fail("--jobs must be at least 1")
    try:
        shard = parse_shard(args.shard) if args.shard else None
    except ValueError as exc:
        return _fail(str(exc))
    if not args.scenarios.is_dir() or not any(args.scenarios.glob("*.yaml")):
        print("no scenarios yet" if not args.scenarios.exists() else f"no scenarios in {args.scenarios}")  # noqa: T201
        return EXIT_OK
    streams = {"both": (True, False), "stream": (True,), "nonstream": (False,)}[args.streaming]
    options = RunOptions(
        scenarios=args.scenarios,
        cassettes=args.cassettes,
        reports=args.reports,
        frontends=args.frontend,
        backends=args.backend,
        only=args.scenario,
        streams=streams,
        jobs=jobs,
        shard=shard,
        validate_traces=args.validate_traces,
        socket=args.socket,
        rechunk=Rechunk(args.rechunk) if args.rechunk else None,
        known=args.known,
        run_id=args.run_id,
        sut=args.sut,
        replay_host=args.replay_host,
        replay_port=args.replay_port,
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
        if args.update_known:
            count = write_known(args.known, options.results, load_known(args.known))
            console.print(f"wrote {count} known failure(s) to {args.known}")
    except (ScenarioError, KnownFileError, UnknownProtocolError, ValueError, WorkerError) as exc:
        return _fail(str(exc))
    console.print(f"report: {runner.folder / 'index.html'}")
    return EXIT_OK if args.update_known else finished.exit_code
