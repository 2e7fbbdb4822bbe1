"""The `--scenarios`/`--cassettes`/`--no-packaged` options every command that reads scenarios or cassettes takes:
repeatable folders over the packaged ones (`harness.scenarios.layers`), a notice on stderr for each file of a
team's folder that replaces one of ours."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness.scenarios.layers import Layers, capped, cassette_notices, cassette_view, notices, scenario_sources

if TYPE_CHECKING:
    from harness.trace import Transport

TRANSPORT_OPTION: dict[str, tuple[Transport, ...]] = {"both": ("http", "ws"), "http": ("http",), "ws": ("ws",)}
"""`--transport` values and the transports each runs."""


def add_transport_option(p: argparse.ArgumentParser, *, note: str = "") -> None:
    """Register `--transport` (its values `TRANSPORT_OPTION`'s, default both); `note` ends the help."""
    p.add_argument(
        "--transport",
        choices=tuple(TRANSPORT_OPTION),
        default="both",
        help="how the SDKs reach the proxy: HTTP, and (ws) the streamed cases again over the WebSocket mode of "
        f"the frontends that have one (default: both){note}",
    )


def add_layer_options(p: argparse.ArgumentParser, *, scenarios: bool = True, cassettes: bool = True) -> None:
    """Register the folder options (writes, where a command writes, go to the first folder given)."""
    if scenarios:
        p.add_argument(
            "--scenarios",
            type=Path,
            action="append",
            default=[],
            metavar="DIR",
            help="a scenario folder over the packaged ones (repeatable; the first given wins on equal ids)",
        )
    if cassettes:
        p.add_argument(
            "--cassettes",
            type=Path,
            action="append",
            default=[],
            metavar="DIR",
            help="a cassette folder over the packaged ones (repeatable; the first given wins on equal files)",
        )
    p.add_argument(
        "--no-packaged",
        action="store_true",
        help="read only the folders given, not the packaged scenarios and cassettes",
    )


def scenario_layers(args: argparse.Namespace, command: str, *, quiet: bool = False) -> Layers:
    """The scenario layers of the command line; prints a notice per replaced scenario unless `quiet`."""
    layers = Layers.of("scenarios", args.scenarios, with_packaged=not args.no_packaged)
    if not quiet and not args.no_packaged:
        for line in capped(notices(scenario_sources(layers), layers)):
            print(f"conformance {command}: notice: {line}", file=sys.stderr)  # noqa: T201
    return layers


def cassette_layers(args: argparse.Namespace) -> Layers:
    """The cassette layers of the command line."""
    return Layers.of("cassettes", args.cassettes, with_packaged=not args.no_packaged)


def cassette_folder(args: argparse.Namespace, command: str, *, quiet: bool = False) -> Path:
    """One folder to read cassettes from: the only layer, or a merged view of them; a notice per replaced file."""
    layers = cassette_layers(args)
    if not quiet and not args.no_packaged:
        for line in capped(cassette_notices(layers)):
            print(f"conformance {command}: notice: {line}", file=sys.stderr)  # noqa: T201
    return cassette_view(layers)


def layer_problem(args: argparse.Namespace, writes: str | None = None) -> str | None:
    """One line when a folder option cannot be used: a given folder that does not exist (but the first of the kind
    a command `writes` to: it is made), or nothing to read."""
    for flag, folders in (
        ("--scenarios", getattr(args, "scenarios", [])),
        ("--cassettes", getattr(args, "cassettes", [])),
    ):
        for folder in folders[1:] if flag == f"--{writes}" else folders:
            if not folder.is_dir():
                return f"{flag} {folder}: the folder does not exist"
    if args.no_packaged:
        unnamed = [f"--{k}" for k in ("scenarios", "cassettes") if hasattr(args, k) and not getattr(args, k)]
        if unnamed:
            return f"--no-packaged needs {' and '.join(unnamed)}: the folders to read instead"
    return None


def record_problem(args: argparse.Namespace) -> str | None:
    """A record mode needs one cassette folder to write to (a merged view of several has no single place)."""
    if args.record_mode != "none" and len(cassette_layers(args).folders) > 1:
        return (
            "--record-mode records into one cassette folder: add --no-packaged, or record first "
            "(`conformance record --cassettes DIR`)"
        )
    return None


def layer_rerun(args: argparse.Namespace) -> list[str]:
    """The folder options as a rerun command carries them."""
    out: list[str] = []
    for kind in ("scenarios", "cassettes"):
        layers = Layers.of(kind, getattr(args, kind, []), with_packaged=not args.no_packaged)
        for folder in layers.added() if layers.with_packaged else layers.given:
            out += [f"--{kind}", str(folder)]
    return [*out, "--no-packaged"] if args.no_packaged else out
