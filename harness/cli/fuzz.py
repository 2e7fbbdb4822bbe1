"""`conformance fuzz`: generated scenarios through the built-in proxy for one (frontend, backend) pair; a failure is
shrunk and written as a regression case, then reproduced by the matrix runner into an HTML report."""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path
from typing import Any

from harness.cli import EXIT_FAIL, EXIT_OK, EXIT_USAGE, output_folder, say_error
from harness.cli._sut_options import add_sut_client_options, sut_client_rerun


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: must be at least 1")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text}: must be a positive, finite number of seconds")
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "fuzz",
        help="explore one frontend/backend pair with generated scenarios and shrink a failure to a scenario file",
        description=(
            "Hypothesis draws scenarios (turns, system prompts, any unicode, tools with nested JSON Schemas, 1-5 "
            "parallel calls with any JSON arguments, thinking with signatures, stop reasons, usage, HTTP errors, "
            "chunkings that split UTF-8) within what both protocols of the pair can express. Each example gets the "
            "matrix's three runs against the reference backends, recorded on the fly, and the same judge. A proxy "
            "bug or harness error is shrunk to its smallest form and written as DIR/scenarios/<id>.yaml plus "
            "DIR/cassettes/, then rerun by the matrix runner into reports/<run-id>/. Exit 0: nothing found; 1: a "
            "proxy bug; 2: a harness error or a usage error."
        ),
    )
    p.add_argument("--frontend", required=True, help="frontend protocol (the client SDK and proxy route)")
    p.add_argument("--backend", required=True, help="backend protocol or profile the proxy translates to")
    p.add_argument("--streaming", choices=("both", "stream", "nonstream"), default="both", help="modes to fuzz")
    p.add_argument("--max-examples", type=_positive_int, default=200, help="examples per mode (default 200)")
    p.add_argument("--seed", type=int, help="derandomise: the same seed draws the same examples (for CI)")
    p.add_argument("--out", type=Path, default=Path("fuzz-findings"), help="where a shrunk failure is written")
    p.add_argument("--database", type=Path, help="hypothesis's example database (default: .hypothesis/conformance)")
    p.add_argument("--deadline", type=_seconds, help="wall-clock budget of the whole session, in seconds")
    p.add_argument("--hooks", metavar="FAULT", help="switch on a catalogued fault (conformance selftest --list)")
    p.add_argument(
        "--no-shrink",
        dest="shrink",
        action="store_false",
        help="write the first failing example as drawn, without shrinking it (sooner on a slow gateway, but larger)",
    )
    p.add_argument("--timeout", type=_seconds, default=30.0, help="seconds an SDK client waits between bytes")
    p.add_argument("--reports", type=output_folder, default=Path("reports"), help="report folder for what was found")
    p.add_argument("--run-id", help="report folder name of the reproduction (default: fuzz-<timestamp>)")
    p.add_argument(
        "--known",
        type=Path,
        metavar="FILE",
        help="a known-failures file (e.g. gateways/NAME/conformance-known.toml): an example failing only as its "
        "entries for the pair and mode do (their verdict, their signatures) is counted known, not a finding",
    )
    _add_sut_options(p)
    p.set_defaults(func=run)


def _add_sut_options(p: argparse.ArgumentParser) -> None:
    """`run`'s --sut options (the same names and meaning: `harness.cli.run.sut_client` reads them), and the route."""
    p.add_argument(
        "--sut",
        metavar="URL",
        help="fuzz a proxy running elsewhere, configured with `conformance sut-config`'s output as for `run --sut`: "
        "each example travels the route of --route to the replay server this command starts, which answers it",
    )
    p.add_argument("--wait-for-sut", type=float, metavar="SECONDS", help="--sut: poll the URL until it answers")
    p.add_argument(
        "--route",
        default="text-basic",
        metavar="SCENARIO",
        help="--sut: the scenario whose route the examples travel (any the gateway's config has; default %(default)s)",
    )
    add_sut_client_options(p)


def run(args: argparse.Namespace) -> int:
    """Fuzz each asked mode until a failure is found or the budget is spent."""
    from harness.cli.run import sut_client, wait_for_sut
    from harness.faults.catalog import by_name
    from harness.fuzz import FuzzOptions, fuzz, stream_modes, write_finding
    from harness.fuzz.engine import known_for
    from harness.runner import names
    from harness.runner.known import KnownFileError, load_known
    from harness.runner.plan import default_frontends

    try:
        names.check([args.frontend], [args.backend], default_frontends())
        if args.hooks and args.sut:
            raise ValueError("--hooks switches a fault on in the built-in proxy; it cannot act on a --sut")
        hooks = by_name(args.hooks).hooks if args.hooks else None
        client = sut_client(args)  # SutClientError (a ValueError) names a bad option
        known = list(load_known(args.known, required=True).values()) if args.known else []
    except (ValueError, KeyError, KnownFileError) as exc:
        say_error("fuzz", exc.args[0] if isinstance(exc, KeyError) else exc)
        return EXIT_USAGE
    waited = wait_for_sut(args)
    if waited:
        say_error("fuzz", waited)
        return EXIT_USAGE
    wanted = {"both": (True, False), "stream": (True,), "nonstream": (False,)}[args.streaming]
    modes = stream_modes(args.frontend, args.backend, wanted)
    if not modes:
        say_error("fuzz", f"{args.frontend}->{args.backend} has no form for --streaming {args.streaming}")
        return EXIT_USAGE
    database = args.database or Path(".hypothesis") / "conformance"
    stop_at = time.monotonic() + args.deadline if args.deadline else None
    for stream in modes:
        options = FuzzOptions(
            args.frontend,
            args.backend,
            stream,
            max_examples=args.max_examples,
            seed=args.seed,
            database=database,
            hooks=hooks,
            timeout=args.timeout,
            stop_at=stop_at,
            sut=args.sut,
            replay_host=args.replay_host,
            replay_port=args.replay_port,
            sut_client=client,
            route=args.route,
            shrink=args.shrink,
        )
        options = dataclasses.replace(options, known=known_for(known, options.case))
        mode = "stream" if stream else "nonstream"
        progress = _Progress(f"{args.frontend}->{args.backend},{mode}", args.max_examples)
        try:
            outcome = fuzz(options, on_example=progress)
        except RuntimeError as exc:
            say_error("fuzz", exc)
            return EXIT_USAGE
        progress.end(outcome)
        if outcome.finding is None:
            continue
        written = write_finding(outcome.finding, options.case, args.out, hooks=args.hooks, sut=_sut_rerun(args))
        print(f"shrunk failure: {outcome.finding.result.verdict}: {outcome.finding.result.reason}")  # noqa: T201
        print(f"  scenario:  {written.scenario}")  # noqa: T201
        print(f"  cassettes: {written.cassettes}")  # noqa: T201
        print(f"  rerun:     {written.replay_command or written.command}")  # noqa: T201
        return _reproduce(args, written, hooks, client)
    print(f"fuzz: PASS (exit 0): no proxy bug in {args.frontend}->{args.backend}")  # noqa: T201
    return EXIT_OK


class _Progress:
    """One stderr line per ten examples: how many, at what rate, which verdicts."""

    def __init__(self, label: str, budget: int) -> None:
        self.label, self.budget, self.seen, self.started = label, budget, 0, time.monotonic()

    def __call__(self, result: Any) -> None:
        self.seen += 1
        if self.seen % 10 == 0:
            rate = self.seen / max(time.monotonic() - self.started, 1e-9)
            print(f"[{self.label}] {self.seen} examples ({rate:.1f}/s)", file=sys.stderr)  # noqa: T201

    def end(self, outcome: Any) -> None:
        took = time.monotonic() - self.started
        counts = ", ".join(f"{n} {v}" for v, n in sorted(outcome.verdicts.items()))
        print(f"[{self.label}] {outcome.examples} examples in {took:.1f} s: {counts or 'none'}", file=sys.stderr)  # noqa: T201


def _sut_rerun(args: argparse.Namespace) -> list[str]:
    """The `conformance run` options that reach the --sut (none without one): never a key or a header value, only
    the variable or file that holds them, and never the URL's user:password@."""
    from harness.record.scrub import without_userinfo

    if not args.sut:
        return []
    return ["--sut", without_userinfo(args.sut), *sut_client_rerun(args)]


def _reproduce(args: argparse.Namespace, written: Any, hooks: Any, client: Any) -> int:
    """Rerun the written case with the matrix runner (its HTML report), and exit with its verdict's code; a case
    found through --sut reruns through it, on its route."""
    from harness.report import file_writers
    from harness.runner.engine import Engine
    from harness.runner.plan import MatrixOptions

    case = written.replay or written.case
    folder = written.scenario.parent if written.replay is None else args.out / "sut"
    options = MatrixOptions(
        scenarios=folder if written.replay is None else folder / "scenarios",
        cassettes=written.cassettes if written.replay is None else folder / "cassettes",
        reports=args.reports,
        frontends=[case.frontend],
        backends=[case.backend],
        only=[case.scenario],
        streams=(case.stream,),
        hooks=hooks,
        run_id=args.run_id or f"fuzz-{time.strftime('%Y%m%d-%H%M%S')}",
        timeout=args.timeout,
        sut=args.sut,
        replay_host=args.replay_host,
        replay_port=args.replay_port,
        sut_client=client,
    )
    runner = Engine(options)
    runner.writers = list(file_writers(runner.folder))
    finished = runner.run()
    result = next(r for r in runner.results if r.case_id == case.case_id)
    print(f"report: {runner.folder / 'index.html'}")  # noqa: T201
    if finished.harness_errors:
        print(f"fuzz: ERROR (exit 2): {result.case_id}: {result.reason}")  # noqa: T201
        return EXIT_USAGE
    if not result.verdict.is_proxy_bug:
        print(f"fuzz: ERROR (exit 2): the shrunk case did not reproduce under the runner ({result.verdict})")  # noqa: T201
        return EXIT_USAGE
    print(f"fuzz: FAIL (exit 1): {result.case_id}: {result.verdict}")  # noqa: T201
    return EXIT_FAIL
