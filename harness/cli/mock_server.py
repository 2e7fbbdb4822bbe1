"""`conformance mock-server`: the reference backends (each protocol's encoder answering a scenario's scripted
reply) served on 127.0.0.1, without recordings."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli import say_error
from harness.cli._serving import add_bind_options, serve


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "mock-server",
        help="serve the reference backends (http://HOST:PORT/<backend>/...)",
        description="Serve every registered backend protocol under http://HOST:PORT/<backend>, answering scenarios.",
    )
    add_bind_options(p, 8791)
    p.add_argument("--scenarios", type=Path, default=Path("scenarios"), help="scenario folder")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from harness.backends import create_backend_app
    from harness.protocols import registry
    from harness.scenarios.loader import ScenarioError, load_scenarios

    try:
        scenarios = load_scenarios(args.scenarios)
    except ScenarioError as exc:
        say_error("mock-server", exc)
        return 2
    banner = [f"reference {b}: {{base}}/{b}" for b in registry.names()]
    return serve(create_backend_app(scenarios), args, banner)
