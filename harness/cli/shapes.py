"""`conformance shapes`: hold each reference backend against real recordings and print the agreement table.

Every recorded answer in a corpus folder is decoded to IR, re-encoded by the reference backend of its protocol
or profile, and the two wire shapes are compared (`harness.protocols.fidelity`). With the default corpus this
prints `docs/shape.md` (tests/protocols/test_shape.py keeps that file current):

    conformance shapes --corpus ../shared/corpus > docs/shape.md
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from harness.capture import CaptureError, load_interactions
from harness.protocols import registry
from harness.protocols.corpus import HEADER, protocol_of
from harness.protocols.fidelity import Exchange, Measurement, measure, render, undeclared


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "shapes",
        help="compare the reference backends' wire shapes with real recordings",
        description=(
            "Decode every recorded answer of a corpus folder to IR, re-encode it with the reference backend of "
            "its protocol or profile, compare the wire shapes, and print the agreement table (Markdown). Exit 1 "
            "when a difference has no declared reason."
        ),
    )
    default = os.environ.get("CONFORMANCE_CORPUS", "../shared/corpus")
    p.add_argument("--corpus", type=Path, default=Path(default), help=f"corpus folder (default {default})")
    p.set_defaults(func=run)


def exchanges(corpus: Path) -> Iterator[tuple[str, Exchange]]:
    """(protocol, exchange) for every interaction of every capture file under `corpus`, in file order."""
    for path in sorted(corpus.rglob("*")):
        if path.suffix not in (".yaml", ".httprr") or not path.is_file():
            continue
        relative = path.relative_to(corpus).as_posix()
        name = protocol_of(relative)
        if name is None:
            continue
        for i, interaction in enumerate(load_interactions(path)):
            yield name, Exchange(interaction.request, interaction.response, f"{relative}#{i}")


def measure_corpus(corpus: Path) -> list[Measurement]:
    """One measurement per registered protocol or profile with recordings in `corpus`, sorted by name."""
    grouped: dict[str, list[Exchange]] = {}
    for name, exchange in exchanges(corpus):
        grouped.setdefault(name, []).append(exchange)
    known = set(registry.names())
    return [measure(registry.get(name), grouped[name]) for name in sorted(grouped) if name in known]


def run(args: argparse.Namespace) -> int:
    """Print the table; 1 when a difference has no declared reason, 2 when the corpus cannot be read."""
    if not args.corpus.is_dir():
        print(f"conformance shapes: no corpus folder at {args.corpus}", file=sys.stderr)  # noqa: T201
        return 2
    try:
        measurements = measure_corpus(args.corpus)
    except CaptureError as exc:
        print(f"conformance shapes: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    sys.stdout.write(render(measurements, header=HEADER))
    missing = undeclared(measurements)
    for line in missing:
        print(f"conformance shapes: undeclared difference: {line}", file=sys.stderr)  # noqa: T201
    return 1 if missing else 0
