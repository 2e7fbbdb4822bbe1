"""`conformance list`: scenarios, providers (protocols and profiles) and capabilities."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli import say_error

WHAT = ("scenarios", "providers", "capabilities", "checks")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser("list", help="list scenarios, providers or capabilities")
    p.add_argument("what", choices=WHAT, help="what to list")
    p.add_argument("--scenarios", type=Path, default=Path("scenarios"), help="scenario folder")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print one line per item."""
    out = sys.stdout
    if args.what == "checks":
        from harness.checks import all_specs

        for spec in all_specs():
            out.write(f"{spec.name:40} {spec.scope:9} {spec.severity:13} {spec.why}\n")
        return 0
    if args.what == "scenarios":
        from harness.scenarios.loader import ScenarioError, load_scenarios

        try:
            scenarios = load_scenarios(args.scenarios)
        except ScenarioError as exc:
            say_error("list", exc)
            return 2
        for s in scenarios:
            needs = ",".join(sorted(s.requires)) or "-"
            out.write(f"{s.id:32} {'/'.join(s.streaming):18} requires={needs:28} {s.description.splitlines()[0]}\n")
        return 0
    if args.what == "providers":
        from harness import drivers
        from harness.protocols import registry

        for name in registry.names():
            codec, real = registry.get(name), registry.facts(name).real
            sdk = "frontend+backend" if name in drivers.names() else f"backend (baseline via {codec.family} SDK)"
            keys = " or ".join(real.key_env) if real is not None and real.key_env else "-"
            where = "" if real is None else f" model={real.model}" + (f" host={real.host_env}" if real.host_env else "")
            out.write(f"{name:12} family={codec.family:10} {sdk:42} keys={keys}{where}\n")
        return 0
    from harness.ir import Capability
    from harness.protocols import registry

    names = registry.names()
    out.write(f"{'capability':20} " + " ".join(f"{n[:9]:9}" for n in names) + "\n")
    for cap in Capability:
        marks = " ".join(f"{'yes' if cap.value in registry.get(n).capabilities else '-':9}" for n in names)
        out.write(f"{cap.value:20} {marks}\n")
    return 0
