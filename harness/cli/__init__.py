"""The `conformance` command: a thin shell over the harness. Each subcommand lives in its own module."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from harness import __version__
from harness.runner import interrupts

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


# How long a re-sent interrupt waits, after a finalizer swallowed the first one, before it arrives again.
RESEND_SECONDS = 0.02


def _raise_soon(exc_type: type[KeyboardInterrupt]) -> None:
    raise exc_type


def _interrupt_with(exc_type: type[KeyboardInterrupt]) -> Callable[[int, FrameType | None], None]:
    """A signal handler raising `exc_type` in the main thread. While an asyncio loop runs there (the SDK drivers
    wait on the in-process proxy that way), it is raised by a callback of that loop, outside every task: raised
    inside a task, app code that catches BaseException could swallow it, and the run would wait out its timeouts
    instead of stopping."""

    def handler(signum: int, frame: FrameType | None) -> None:
        interrupts.request(exc_type)  # raised again by the engine if swallowed where it lands
        asyncio = sys.modules.get("asyncio")  # not imported (`--help`): no loop can be running
        loop = asyncio.events._get_running_loop() if asyncio is not None else None
        if loop is None:
            raise exc_type
        loop.call_soon_threadsafe(_raise_soon, exc_type)  # wakes the loop's select at once

    return handler


def _resend_swallowed(previous: Callable[[Any], object]) -> Callable[[Any], object]:
    """An unraisable hook: an interrupt raised while a finalizer or weakref callback ran was swallowed there
    ("Exception ignored in ..."), so the signal is sent again, to arrive once that code is left."""

    def hook(unraisable: Any) -> object:
        kind = type(unraisable.exc_value)
        if not issubclass(kind, KeyboardInterrupt):
            return previous(unraisable)
        signum = signal.SIGTERM if issubclass(kind, Terminated) else signal.SIGINT
        timer = threading.Timer(RESEND_SECONDS, os.kill, (os.getpid(), signum))
        timer.daemon = True
        timer.start()
        return None

    return hook


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated` and SIGINT `KeyboardInterrupt` in the main thread, never
    inside an asyncio task and never lost in a finalizer (elsewhere: no change); the previous handlers are put
    back after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous_term = signal.signal(signal.SIGTERM, _interrupt_with(Terminated))
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int is signal.default_int_handler:  # an ignored Ctrl-C (nohup, a worker) stays ignored
        signal.signal(signal.SIGINT, _interrupt_with(KeyboardInterrupt))
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _resend_swallowed(previous_hook)
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        interrupts.clear()
        signal.signal(signal.SIGTERM, previous_term)
        if previous_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous_int)


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
