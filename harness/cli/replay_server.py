"""`conformance replay-server`: the cassettes served on 127.0.0.1 as provider endpoints, for a proxy that runs in
another process (any language) to use as its upstream."""

from __future__ import annotations

import argparse
import sys

from harness.cli import say_error
from harness.cli._serving import add_bind_options, serve
from harness.cli._sources import add_layer_options, cassette_folder, cassette_layers, layer_problem, scenario_layers


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "replay-server",
        help="serve the cassettes as provider endpoints (http://HOST:PORT/<backend>/...)",
        description=(
            "Serve recorded backends: each backend's API under http://HOST:PORT/<backend> (an upstream base URL "
            "is http://127.0.0.1:8790/<backend> plus the API's own prefix, e.g. /v1). Requests are matched to "
            "scenarios by decoding them; a request with no recording gets a 400 naming the nearest recordings. "
            "No network is used."
        ),
    )
    add_bind_options(p, 8790)
    add_layer_options(p)
    p.add_argument("--rechunk", choices=("bytes", "random", "utf8"), help="re-cut streams adversarially")
    p.add_argument(
        "--pace",
        type=float,
        default=0.0,
        metavar="MS",
        help="send streamed chunks MS milliseconds apart (0 to 200; default 0: back to back)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from harness.backends.app import check_pace
    from harness.record import Rechunk, Replayer, create_replay_app, recorded
    from harness.scenarios.loader import ScenarioError, load_scenarios

    try:
        pace = check_pace(args.pace)
    except ValueError as exc:
        say_error("replay-server", exc)
        return 2
    problem = layer_problem(args)
    if problem:
        say_error("replay-server", problem)
        return 2
    try:
        scenarios = load_scenarios(scenario_layers(args, "replay-server"))
    except ScenarioError as exc:
        say_error("replay-server", exc)
        return 2
    cassettes = cassette_folder(args, "replay-server")
    replayer = Replayer(cassettes, scenarios, rechunk_mode=Rechunk(args.rechunk) if args.rechunk else None)
    backends = sorted({r.backend for r in recorded(cassettes)})
    if not backends:
        shown = ", ".join(str(f) for f in cassette_layers(args).folders)
        print(f"conformance replay-server: no cassettes under {shown}", file=sys.stderr)  # noqa: T201
        return 2
    banner = [f"replaying {b}: {{base}}/{b}" for b in backends]
    return serve(create_replay_app(replayer, backends, pace=pace), args, banner)
