"""The `conformance` command: a thin shell over the harness. Each subcommand lives in its own module."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType

from harness import __version__

# Subcommand modules, each with `add_parser(subparsers)` that sets `func(args) -> int` as default.
# Imported lazily by name so that `--help` stays fast and a broken subcommand cannot hide the others.
SUBCOMMANDS: tuple[str, ...] = (
    "harness.cli.decode",
    "harness.cli.diff",
    "harness.cli.fuzz",
    "harness.cli.gateway",
    "harness.cli.import_cmd",
    "harness.cli.init",
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
EXIT_TERMINATED = 143  # 128 + SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C, so that every `finally` (a gateway's stop, a run's workers)
    runs the same way for both."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated` in the main thread (elsewhere: no change); the previous
    handler is put back after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def say_error(command: str, message: object) -> None:
    """Print an error on stderr, each of its lines prefixed `conformance <command>: ` (a bad scenario folder says
    every problem, one per line)."""
    for line in str(message).splitlines() or [""]:
        print(f"conformance {command}: {line}", file=sys.stderr)  # noqa: T201


def output_folder(text: str) -> Path:
    """An argparse type for a folder the command writes into (`--reports`): it may not exist yet, but neither it
    nor any folder above it may be a file (one line, exit 2, instead of a traceback half-way through a run)."""
    path = Path(text)
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            where = "" if part == path else f" ({part} is a file)"
            raise argparse.ArgumentTypeError(f"{text}: not a folder{where}")
    return path


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
        with sigterm_raises():
            result: int = args.func(args)
    except Terminated:
        say_error(str(args.command), "terminated")
        return EXIT_TERMINATED
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
