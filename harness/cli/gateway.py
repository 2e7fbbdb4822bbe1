"""`conformance gateway NAME`: gate one real gateway end to end. Generate its config for a replay server on a free
loopback port, start the installed, pinned gateway on 127.0.0.1 and wait until it is ready (bounded), run the
matrix of every frontend it serves against every upstream it can name, stop it by PID (also on failure), and
keep its config and log in the report. The exit code is the gate, against `gateways/NAME/conformance-known.toml`.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cli import output_folder
from harness.cli._sources import TRANSPORT_OPTION, add_transport_option

if TYPE_CHECKING:
    from harness.gateways.specs import GatewaySpec
    from harness.rig import SutHeader

EXIT_OK, EXIT_USAGE = 0, 2


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "gateway",
        help="start an installed real gateway (`conformance gateway no-such` lists them), gate it, stop it",
        description=(
            "Gate a real gateway: its config generated (`sut-config --format NAME`), the gateway started on "
            "127.0.0.1 from its install (LiteLLM: the `litellm` script of this Python; npm gateways: "
            "gateways/NAME/node_modules), every frontend it serves run against every upstream it can name, the "
            "gateway stopped by PID. Report: reports/gateway-NAME/ (with the gateway's config and log). Exit 0: "
            "no proxy bug beyond gateways/NAME/conformance-known.toml; 1: a new one; 2: it could not be gated."
        ),
    )
    p.add_argument("name", help="a gateway gated here: its folder under gateways/ (docs/gateways.md lists them)")
    p.add_argument("--home", type=Path, help="the gateway's install folder (default: gateways/NAME)")
    p.add_argument("--port", type=int, default=0, help="gateway port on 127.0.0.1 (default: a free one)")
    p.add_argument("--replay-port", type=int, default=0, help="replay server port (default: a free one)")
    p.add_argument("--frontend", type=_names, action="extend", help="only these frontends (default: all it serves)")
    p.add_argument("--backend", type=_names, action="extend", help="only these upstreams (default: all it names)")
    p.add_argument("--scenario", type=_names, action="extend", help="only these scenario ids (comma list)")
    p.add_argument("--streaming", choices=("both", "stream", "nonstream"), default="both")
    add_transport_option(
        p, note="; a gateway that answers the upgrade with an HTTP status has its ws cases unsupported"
    )
    p.add_argument(
        "--pace",
        type=float,
        metavar="MS",
        help="the replay server sends streamed chunks MS milliseconds apart (0 to 200; default: the gateway's own, "
        "0 = back to back, but 20 for nullplatform, whose stream race kills it at 0: docs/gateways.md)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="the SDK clients' timeout (connect, and between bytes), as `conformance run --timeout` (default: 60)",
    )
    p.add_argument("--scenarios", type=Path, default=Path("scenarios"), help="scenario folder")
    p.add_argument("--cassettes", type=Path, default=Path("cassettes"), help="cassette folder")
    p.add_argument("--reports", type=output_folder, default=Path("reports"), help="report folder")
    p.add_argument("--run-id", help="report folder name (default: gateway-NAME)")
    p.add_argument("--known", type=Path, help="known-failures file (default: gateways/NAME/conformance-known.toml)")
    p.add_argument("--update-known", action="store_true", help="rewrite the known-failures file from this run")
    p.add_argument("--ready-seconds", type=float, default=120.0, help="how long the gateway may take to start")
    p.add_argument("-j", "--jobs", type=int, default=2, help="parallel runs")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary table")
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    print(f"conformance gateway: {message}", file=sys.stderr)  # noqa: T201
    return EXIT_USAGE


def run(args: argparse.Namespace) -> int:
    """Gate the gateway and return the gate's exit code."""
    from harness.gateways.specs import GatewayInstallError, gateway
    from harness.rig.keys import CLIENT_KEY_ENV, PLANTED_KEY_ENV, planted_key

    try:
        spec = gateway(args.name)
        spec.program()
    except (KeyError, GatewayInstallError) as exc:
        return _fail(str(exc).strip('"'))
    home = args.home or Path("gateways") / spec.name
    if not home.is_dir():
        return _fail(f"{home}: no such folder ({spec.install_hint})")
    keys = {PLANTED_KEY_ENV: planted_key(), CLIENT_KEY_ENV: os.environ.get(CLIENT_KEY_ENV) or _client_key()}
    with tempfile.TemporaryDirectory(prefix=f"conformance-{spec.name}-") as tmp:
        return _gate(args, spec, home, Path(tmp), keys)


def _client_key() -> str:
    # Short enough not to look like a real provider key to the leak scan; LiteLLM wants the `sk-` prefix.
    return f"sk-gate-{secrets.token_hex(6)}"


def _gate(args: argparse.Namespace, spec: GatewaySpec, home: Path, run_dir: Path, keys: dict[str, str]) -> int:
    from rich.console import Console

    from harness.backends.app import check_pace
    from harness.cli.run import gate_text, harness_error_line
    from harness.gateways import render
    from harness.gateways.launch import GatewayStartError, free_port, running
    from harness.protocols.registry import UnknownProtocolError
    from harness.report import ProgressWriter, TerminalWriter, file_writers
    from harness.rig import SetupError, SutClient
    from harness.rig.keys import CLIENT_KEY_ENV
    from harness.rig.sut_client import SutClientError, load_headers
    from harness.runner.engine import Engine
    from harness.runner.known import KnownFileError, load_known, unsigned_notice, write_known
    from harness.runner.plan import MatrixOptions
    from harness.scenarios.loader import ScenarioError, load_scenarios, select

    console = Console()
    quiet = Console(quiet=args.quiet)  # what -q leaves out; the report path and the gate line always print
    known = args.known or home / "conformance-known.toml"
    replay_port = args.replay_port or free_port()
    port = args.port or free_port()
    replay_url = f"http://127.0.0.1:{replay_port}"
    try:
        pace = check_pace(spec.pace_ms if args.pace is None else args.pace)
        if not args.timeout > 0 or args.timeout == float("inf"):
            raise ValueError(f"--timeout {args.timeout}: must be a positive, finite number of seconds")
        frontends = _subset("frontend", args.frontend, spec.frontends())
        backends = _subset("backend", args.backend, spec.backends())
        scenarios = select(load_scenarios(args.scenarios), args.scenario)
        # A gateway without a config file takes its upstream per request: the config is a headers file.
        config = run_dir / (spec.config_file or f"{spec.name}-headers.toml")
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(render(spec.naming, replay_url, scenarios, backends), encoding="utf-8")
        headers: tuple[SutHeader, ...] = () if spec.config_file else load_headers(config)
        launch = spec.launch(home, run_dir, port, keys, ready_seconds=args.ready_seconds)
        note = unsigned_notice("gateway", known, load_known(known, required=args.known is not None))
    except (ScenarioError, UnknownProtocolError, SutClientError, KnownFileError, ValueError) as exc:
        return _fail(str(exc))
    streams = {"both": (True, False), "stream": (True,), "nonstream": (False,)}[args.streaming]
    options = MatrixOptions(
        scenarios=args.scenarios,
        cassettes=args.cassettes,
        reports=args.reports,
        frontends=frontends,
        backends=backends,
        only=args.scenario,
        streams=streams,
        transports=TRANSPORT_OPTION[args.transport],
        jobs=args.jobs,
        known=known,
        run_id=args.run_id or f"gateway-{spec.name}",
        sut=f"http://127.0.0.1:{port}{spec.sut_path}",
        replay_port=replay_port,
        pace=pace,
        timeout=args.timeout,
        sut_client=SutClient(key=keys[CLIENT_KEY_ENV], headers=headers, unversioned=frozenset(spec.unversioned)),
        rerun=gateway_rerun(args),
    )
    kept = args.reports / str(options.run_id) / "gateway"
    if note:
        print(note, file=sys.stderr)  # noqa: T201
    quiet.print(f"{spec.name} {spec.version}: frontends {', '.join(frontends)}; upstreams {', '.join(backends)}")
    try:
        runner = Engine(options)
        terminal = TerminalWriter(console, summary=not args.quiet, gate=False)
        runner.writers = [*file_writers(runner.folder), terminal]
        if not args.quiet:
            runner.writers.insert(0, ProgressWriter(Console(stderr=True)))
        with running(launch) as process:
            quiet.print(f"{spec.name} ready on 127.0.0.1:{port} (pid {process.pid}); replay on {replay_url}")
            finished = runner.run()
        if args.update_known:
            update = write_known(known, runner.results, load_known(known))
            console.print(f"known failures updated: {update.summary(known)}")
    except GatewayStartError as exc:  # its log is kept in the report, not in the run folder that goes away
        return _fail(str(exc).replace(str(launch.log), str(kept / launch.log.name)))
    except (ScenarioError, KnownFileError, UnknownProtocolError, SetupError, ValueError) as exc:
        return _fail(str(exc))
    finally:
        _keep(kept, [config, launch.log], keys)
    console.print(f"report: {runner.folder / 'index.html'}", soft_wrap=True)
    if terminal.report is not None and not args.update_known:
        console.print(gate_text(terminal.report), soft_wrap=True)
    if finished.harness_errors:
        return _fail(harness_error_line(runner.results, finished.harness_errors, runner.folder))
    return EXIT_OK if args.update_known else finished.exit_code


def gateway_rerun(args: argparse.Namespace) -> list[str]:
    """What a report's rerun command starts with for a case of this gate: `gateway NAME` and the options that shape
    every case (the gateway starts again on its own ports; its keys are made anew, never written)."""
    out = ["gateway", args.name]
    for flag, value, default in (
        ("--home", args.home, None),
        ("--scenarios", args.scenarios, Path("scenarios")),
        ("--cassettes", args.cassettes, Path("cassettes")),
        ("--known", args.known, None),
        ("--pace", f"{args.pace:g}" if args.pace is not None else None, None),
        ("--timeout", f"{args.timeout:g}" if args.timeout != 60.0 else None, None),
    ):
        if value is not None and value != default:
            out += [flag, str(value)]
    return out


def _subset(kind: str, wanted: list[str] | None, served: list[str]) -> list[str]:
    if not wanted:
        return served
    unknown = [w for w in wanted if w not in served]
    if unknown:
        raise ValueError(f"--{kind} {', '.join(unknown)}: the gateway serves {', '.join(served)}")
    return wanted


def _keep(dest: Path, files: list[Path], keys: dict[str, str]) -> None:
    """Copy the gateway's config and log into the report, each key replaced by its variable's name."""
    dest.mkdir(parents=True, exist_ok=True)
    for source in files:
        if not source.is_file():
            continue
        text = source.read_text(encoding="utf-8", errors="replace")
        for variable, value in keys.items():
            text = text.replace(value, f"${variable}")
        (dest / source.name).write_text(text, encoding="utf-8")
