"""`conformance run`: the conformance matrix against the built-in proxy and the committed cassettes; the exit code
is the gate (0 no new proxy bug, 1 a new proxy bug, 2 a usage, configuration or harness error: nothing that could
not be judged ever passes)."""

from __future__ import annotations

import argparse
import math
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli import output_folder
from harness.cli._sources import (
    TRANSPORT_OPTION,
    add_layer_options,
    add_transport_option,
    cassette_folder,
    layer_problem,
    layer_rerun,
    record_problem,
    scenario_layers,
)
from harness.cli._sut_options import add_sut_client_options, sut_client_rerun

if TYPE_CHECKING:
    from harness.rig.sut_client import SutClient
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
    add_layer_options(p)
    p.add_argument("--reports", type=output_folder, default=Path("reports"), help="report folder (default: reports)")
    p.add_argument("--frontend", type=_names, action="extend", help="frontend protocols (comma list; default all)")
    p.add_argument("--backend", type=_names, action="extend", help="backends (comma list; default: all recorded)")
    p.add_argument("--scenario", type=_names, action="extend", help="only these scenario ids (comma list)")
    p.add_argument("--streaming", choices=("both", "stream", "nonstream"), default="both", help="streaming modes")
    add_transport_option(p)
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
        "--keep-traces",
        choices=("failing", "all"),
        default="failing",
        help="which cases keep their whole trace (requests, events, raw wire): failing (default: a CI report stays "
        "small; a clean pass keeps its verdict, checks and timings) or all",
    )
    p.add_argument(
        "--hooks",
        metavar="FAULT",
        help="switch on a catalogued fault in the built-in proxy's translate path (`conformance selftest --list`), "
        "e.g. to reproduce what `conformance fuzz --hooks FAULT` found",
    )
    p.add_argument(
        "--sut",
        metavar="URL",
        help="gate a proxy running elsewhere: translated runs go to URL (baselines stay on the built-in pass-through); "
        "its upstreams must point at the replay server this run starts (config: `conformance sut-config`). The SDK "
        "appends its own path (/v1/chat/completions, /v1/messages, ...) to URL, which may hold a path and "
        "{frontend} {backend} {scenario}, filled per run (a gateway that serves each protocol under its own path)",
    )
    p.add_argument(
        "--wait-for-sut",
        type=float,
        metavar="SECONDS",
        help="--sut: poll the URL until it answers (a proxy still starting), at most SECONDS; then exit 2",
    )
    p.add_argument(
        "--pace",
        type=float,
        default=0.0,
        metavar="MS",
        help="--sut: the replay server sends streamed chunks MS milliseconds apart (0 to 200; default 0: back to "
        "back), to tell a gateway's race on fast upstreams from a translation bug",
    )
    add_sut_client_options(p)
    p.add_argument(
        "--upstream-model",
        metavar="BACKEND=MODEL",
        action="append",
        default=[],
        help="the model routes send upstream for BACKEND (repeatable; default: a realistic one per backend, "
        "`conformance list providers`); must match the gateway config's",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="per-request timeout of the SDK clients (connect, and between bytes); a run through --sut also ends "
        "after 4 x SECONDS of wall-clock time. A proxy that never answers is a harness error naming the SDK's "
        "own error; one that answered and then stalls is judged (default: 60)",
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
    p.add_argument(
        "-q", "--quiet", action="store_true", help="no progress or summary; only the report path and the gate line"
    )
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    for line in message.splitlines():
        print(f"conformance run: {line}", file=sys.stderr)  # noqa: T201
    return EXIT_USAGE


def sut_client(args: argparse.Namespace) -> SutClient:
    """The client key and extra headers of the `--sut` options; SutClientError names a bad option."""
    from harness.rig.sut_client import (
        SutClient,
        SutClientError,
        check_sut_url,
        load_headers,
        parse_header,
        parse_unversioned,
    )

    if args.sut:
        check_sut_url(args.sut)
    key = args.client_key
    if args.client_key_env:
        key = os.environ.get(args.client_key_env)
        if not key:
            raise SutClientError(f"--client-key-env {args.client_key_env}: the variable is not set")
    headers = load_headers(args.sut_headers) if args.sut_headers else ()
    headers += tuple(parse_header(h) for h in args.sut_header)
    unversioned = parse_unversioned(args.sut_unversioned) if args.sut_unversioned else frozenset()
    if (key or headers or unversioned) and not args.sut:
        raise SutClientError("--client-key, --client-key-env, --sut-header(s) and --sut-unversioned need --sut")
    return SutClient(key=key, headers=headers, unversioned=unversioned)


def run(args: argparse.Namespace) -> int:
    """Run the matrix and return the gate's exit code.

    A run with workers starts their fork server first: its preload (the SDKs' imports, seconds) is the longest wait
    before the first case, and this process's own imports and planning overlap it. A usage or setup error (exit 2)
    stops a server this call started, rather than leave it importing for nothing."""
    from harness.runner import forkserver

    jobs = forkserver.default_jobs() if args.jobs is None else args.jobs
    started = jobs > 1 and args.sut is None and forkserver.warm_up()
    code = _run(args, jobs)
    if started and code == 2:
        forkserver.stop()
    return code


def _run(args: argparse.Namespace, jobs: int) -> int:
    from rich.console import Console

    from harness.protocols.registry import UnknownProtocolError
    from harness.record import Rechunk
    from harness.report import ProgressWriter, TerminalWriter, file_writers
    from harness.rig import SetupError
    from harness.rig.routes import parse_model_overrides
    from harness.runner.crash import reraise_interrupt
    from harness.runner.engine import Engine
    from harness.runner.known import KnownFileError, load_known
    from harness.runner.plan import MatrixOptions
    from harness.runner.record_missing import record_missing
    from harness.runner.run_events import Writer
    from harness.runner.units import parse_shard
    from harness.runner.workers import WorkerError
    from harness.scenarios.loader import ScenarioError

    if jobs < 1:
        return _fail("--jobs must be at least 1")
    if not math.isfinite(args.timeout) or args.timeout <= 0:
        return _fail(f"--timeout {args.timeout}: must be a positive, finite number of seconds")
    for flag in ("frontend", "backend", "scenario"):
        if getattr(args, flag) == []:  # given, but only commas or nothing: never read as "all"
            return _fail(f"--{flag}: an empty list; name at least one (leave --{flag} out for all)")
    try:
        shard = parse_shard(args.shard) if args.shard else None
    except ValueError as exc:
        return _fail(str(exc))
    for folder in args.scenarios:
        if not folder.is_dir() or not any(folder.glob("*.yaml")):
            # Nothing to run is a usage error, never a pass: a green gate must mean the cases ran.
            missing = "does not exist" if not folder.exists() else "holds no scenario (*.yaml)"
            return _fail(f"--scenarios {folder}: the folder {missing}")
    problem = layer_problem(args) or record_problem(args)
    if problem:
        return _fail(problem)
    streams = {"both": (True, False), "stream": (True,), "nonstream": (False,)}[args.streaming]
    known = args.known or DEFAULT_KNOWN
    if args.known is not None and not known.is_file() and not args.update_known:
        return _fail(f"--known {known}: no such file (omit --known to run without one; --update-known creates it)")
    if args.update_known and not known.parent.is_dir():
        return _fail(f"--update-known: {known}: no folder {known.parent} to write it in")
    try:  # a bad known-failures file fails before any case runs
        pace = _pace(args)
        if args.hooks and args.sut:
            raise ValueError("--hooks switches a fault on in the built-in proxy; it cannot act on a --sut")
        hooks = _hooks(args.hooks)
        previous = load_known(known)
        _note_unsigned(known, previous)
        client = sut_client(args)
        models = parse_model_overrides(args.upstream_model)
    except (KnownFileError, ValueError) as exc:
        return _fail(str(exc))
    waited = wait_for_sut(args)  # last: every other option is checked before the wait
    if waited:
        return _fail(waited)
    options = MatrixOptions(
        scenarios=scenario_layers(args, "run"),
        cassettes=cassette_folder(args, "run"),
        reports=args.reports,
        frontends=args.frontend,
        backends=args.backend,
        only=args.scenario,
        streams=streams,
        transports=TRANSPORT_OPTION[args.transport],
        jobs=jobs,
        shard=shard,
        validate_traces=args.validate_traces,
        socket=args.socket,
        rechunk=Rechunk(args.rechunk) if args.rechunk else None,
        pace=pace,
        hooks=hooks,
        keep_traces=args.keep_traces,
        known=known,
        run_id=args.run_id,
        sut=args.sut,
        replay_host=args.replay_host,
        replay_port=args.replay_port,
        sut_client=client,
        upstream_models=models,
        timeout=args.timeout,
        strict=args.strict,
        rerun=rerun_options(args),
    )
    console = Console(stderr=False)
    terminal = TerminalWriter(console, summary=not args.quiet, gate=False)
    try:
        runner = Engine(options)
        if args.record_mode != "none":
            made = record_missing(runner, args.record_mode)
            console.print(f"recorded {made} cassette(s) from the reference backends")
        writers: list[Writer] = [*file_writers(runner.folder), terminal]
        if not args.quiet:  # progress on stderr: a CI log interleaves it, `> file` keeps the summary alone
            writers.insert(0, ProgressWriter(Console(stderr=True)))
        runner.writers = writers
        finished = runner.run()
    except (ScenarioError, KnownFileError, UnknownProtocolError, SetupError, ValueError, WorkerError) as exc:
        return _fail(str(exc))
    except Exception as exc:  # a bug of the harness itself: never read as a proxy bug (exit 1) or a pass
        reraise_interrupt(exc)
        traceback.print_exc()
        return _fail(f"internal error: {type(exc).__name__}: {exc} (a harness bug; the traceback is above)")
    console.print(f"report: {runner.folder / 'index.html'}", soft_wrap=True)
    if finished.harness_errors:
        assert terminal.report is not None  # the runner always ends with MatrixFinished
        console.print(gate_text(terminal.report), soft_wrap=True)
        return _fail(harness_error_line(runner.results, finished.harness_errors, runner.folder))
    if args.update_known:
        return _update_known(known, runner.results, previous, finished.exit_code)
    assert terminal.report is not None  # the runner always ends with MatrixFinished
    console.print(gate_text(terminal.report), soft_wrap=True)
    return finished.exit_code


def _note_unsigned(path: Path, entries: dict[str, Any]) -> None:
    """Say on stderr when known-failures entries have no signature: they hold a verdict, not a bug."""
    from harness.runner.known import unsigned_notice

    note = unsigned_notice("run", path, entries)
    if note:
        print(note, file=sys.stderr)  # noqa: T201


def _pace(args: argparse.Namespace) -> float:
    """`--pace` in seconds; ValueError when it is out of range or given without `--sut`."""
    from harness.backends.app import check_pace

    if args.pace and not args.sut:
        raise ValueError("--pace paces the replay server of a --sut run (the built-in proxy replays in-process)")
    return check_pace(args.pace)


def _hooks(name: str | None) -> Any:
    """The translate hooks of a catalogued fault; ValueError naming the known ones for an unknown name."""
    if name is None:
        return None
    from harness.faults.catalog import portable_hooks

    try:
        return portable_hooks(name)  # by reference: it goes to the worker processes
    except KeyError as exc:
        raise ValueError(f"--hooks: {exc.args[0]}") from exc


def rerun_options(args: argparse.Namespace) -> list[str]:
    """The options of this command line that shape every case, for the reports' per-case rerun commands."""
    from harness.record.scrub import without_userinfo

    out: list[str] = layer_rerun(args)
    for flag, value, default in (
        ("--known", args.known, None),
        ("--rechunk", args.rechunk, None),
        ("--hooks", args.hooks, None),
        ("--keep-traces", args.keep_traces, "failing"),
        ("--sut", without_userinfo(args.sut) if args.sut else None, None),  # never its user:password@
    ):
        if value is not None and value != default:
            out += [flag, str(value)]
    # The variable's name, never a key: --client-key and --sut-header values may hold secrets, and reports keep none.
    out += sut_client_rerun(args)
    if args.sut and args.pace:
        out += ["--pace", f"{args.pace:g}"]
    for override in args.upstream_model:
        out += ["--upstream-model", override]
    if args.timeout != 60.0:
        out += ["--timeout", str(args.timeout)]
    if args.strict:
        out.append("--strict")
    return [*out, "--socket"] if args.socket else out


def wait_for_sut(args: argparse.Namespace) -> str | None:
    """Poll `--sut` until something answers HTTP, for at most `--wait-for-sut` seconds; the line to fail with
    when nothing did (or the option is misused), else None."""
    if args.wait_for_sut is None:
        return None
    if not args.sut:
        return "--wait-for-sut needs --sut"
    if args.wait_for_sut <= 0:
        return "--wait-for-sut must be a positive number of seconds"
    from harness.rig.sut import wait_until_up

    return wait_until_up(args.sut, args.wait_for_sut)


def gate_text(report: Any) -> Any:
    """The gate line, coloured by outcome."""
    from rich.text import Text

    from harness.report import gate_line

    return Text(gate_line(report), style="bold red" if report.exit_code else "bold green")


def _update_known(path: Path, results: list[Any], previous: dict[str, Any], gate: int) -> int:
    """Rewrite the known-failures file; exit 0 only once it is written, and say what changed."""
    from harness.runner.known import write_known

    if gate not in (EXIT_OK, EXIT_BUG):  # the run itself failed: its verdicts are no basis for the file
        print(f"conformance run: --update-known: {path} left unchanged (the run exited {gate})", file=sys.stderr)  # noqa: T201
        return gate
    try:
        update = write_known(path, results, previous)
    except OSError as exc:
        print(f"gate: ERROR (exit {EXIT_USAGE}): --update-known could not write {path}")  # noqa: T201
        return _fail(f"--update-known: {path}: cannot write: {exc.strerror}")
    print(f"known failures updated: {update.summary(path)}")  # noqa: T201
    for sign, ids in (("+", update.added), ("~", update.changed), ("-", update.removed)):
        for case_id in ids[:LISTED]:
            print(f"  {sign} {case_id}")  # noqa: T201
        if len(ids) > LISTED:
            print(f"  {sign} ... and {len(ids) - LISTED} more")  # noqa: T201
    bugs = sum(1 for r in results if r.verdict.is_proxy_bug)
    before = "FAIL: they were new" if gate == EXIT_BUG else "PASS as well"
    print(  # noqa: T201
        f"gate: PASS (exit 0) with the updated {path}: it accepts all {bugs} proxy bug(s) of this run "
        f"(without the update: {before})"
    )
    return EXIT_OK


def harness_error_line(results: list[CaseResult], errors: Sequence[str], folder: Path) -> str:
    """One line for cases that could not be judged: how many, and the first one's reason."""
    first = next(r for r in results if r.case_id == errors[0])
    more = f" (and {len(errors) - 1} more case(s); see {folder / 'summary.json'})" if len(errors) > 1 else ""
    return f"harness error: {first.case_id}: {first.reason}{more}"
