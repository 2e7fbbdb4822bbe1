"""The `conformance` command: a thin shell over the harness. Each subcommand lives in its own module."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from harness import __version__

# Subcommand modules, each with `add_parser(subparsers)` that sets `func(args) -> int` as default.
# Imported lazily by name so that `--help` stays fast and a broken subcommand cannot hide the others.
SUBCOMMANDS: tuple[str, ...] = (
    "harness.cli.decode",
    "harness.cli.diff",
    "harness.cli.fuzz",
    "harness.cli.gateway",
    "harness.cli.import_cmd",
    "harness.cli.list_cmd",
    "harness.cli.mock_server",
    "harness.cli.record",
    "harness.cli.replay_server",
    "harness.cli.report",
    "harness.cli.run",
    "harness.cli.selftest",
    "harness.cli.serve",
    "harness.cli.shapes",
    "harness.cli.sut_config",
)

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C


def say_error(command: str, message: object) -> None:
    """Print an error on stderr, each of its lines prefixed `conformance <command>: ` (a bad scenario folder says
    every problem, one per line)."""
    for line in str(message).splitlines() or [""]:
        print(f"conformance {command}: {line}", file=sys.stderr)  # noqa: T201


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Record-and-replay protocol conformance harness for LLM protocol-translating proxies.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(name).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script and of `python -m harness`."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        result: int = args.func(args)
    except KeyboardInterrupt:
        # Ctrl-C: one line, no traceback; the subcommands' own `finally` blocks have stopped what they started.
        say_error(str(args.command), "interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _quiet_closed_stdout()  # `conformance list ... | head`: the reader left, which is not an error
        return EXIT_OK
    return result


def _quiet_closed_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail again on the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
