"""`conformance diff`: compare what the SDK saw in two traces (case files or run files), first divergence first,
through the same pipeline the verdict uses (`harness.diff.pipeline`): the same normalized views, the same
declared losses of every protocol on the way."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.diff import Divergence
    from harness.trace import RunTrace

# The diff engine, traces and reports are imported when the command runs, not when `conformance --help` builds
# the parser; so the role names are spelled out here (they are harness.trace.model.RunRole).
ROLES = ("baseline_frontend", "translated", "baseline_backend")

EXIT_SAME = 0
EXIT_DIVERGED = 1
EXIT_BAD_INPUT = 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "diff",
        help="compare the SDK views of two traces and print the divergences",
        description=(
            "Compare what the SDK saw in two traces exactly as a verdict does (streams accumulated, the declared "
            "losses of every protocol on the way applied, the normalization rules) and print every divergence, "
            "first divergence first. Each FILE is a case trace (reports/<run>/cases/"
            "*.json; --role picks which of its three runs) or a single run trace. Exit 0 when they agree, "
            "1 when they diverge, 2 when a file cannot be read or lacks the run."
        ),
    )
    p.add_argument("left", type=Path, help="reference trace")
    p.add_argument("right", type=Path, help="compared trace")
    p.add_argument("--role", choices=ROLES, default="translated", help="run to take from a case trace")
    p.add_argument("--left-role", choices=ROLES, default=None, help="run to take from the left case (over --role)")
    p.add_argument("--right-role", choices=ROLES, default=None, help="run to take from the right case (over --role)")
    p.add_argument("--raw", action="store_true", help="compare without the normalization rules and losses")
    p.add_argument("--json", action="store_true", help="print the divergences as a JSON list")
    p.set_defaults(func=run)


def load_run(path: Path, role: str) -> RunTrace:
    """The run trace in `path`: the file itself, or the run with `role` of a case trace (TraceError otherwise)."""
    from harness.trace import RunTrace, TraceError, read_trace_bytes, validate

    try:
        data: Any = json.loads(read_trace_bytes(path))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TraceError(f"{path}: cannot read trace: {exc}") from exc
    if not isinstance(data, dict):
        raise TraceError(f"{path}: not a trace (expected a JSON object)")
    is_case = "runs" in data and "verdict" in data
    try:
        validate(data, "case" if is_case else "run")
    except TraceError as exc:
        raise TraceError(f"{path}: {exc}") from exc
    if not is_case:
        return RunTrace.model_validate(data)
    if role not in data["runs"]:
        have = ", ".join(data["runs"]) or "none"
        raise TraceError(f"{path}: case {data['case_id']} has no {role} run (it has: {have})")
    return RunTrace.model_validate(data["runs"][role])


def format_divergence(number: int, d: Divergence) -> str:
    """One divergence as a line of text."""
    from harness.report.model import json_value

    where = f" (stream event {d.event_index})" if d.event_index is not None else ""
    return f"{number}. {d.path}{where}: {json_value(d.left)} != {json_value(d.right)}  [{d.change}]"


def run(args: argparse.Namespace) -> int:
    """Compare and print; exit 0 when the views agree, 1 when they diverge, 2 on unreadable input."""
    from harness.diff import response_divergences
    from harness.trace import TraceError

    try:
        left = load_run(args.left, args.left_role or args.role)
        right = load_run(args.right, args.right_role or args.role)
    except TraceError as exc:
        print(f"conformance diff: {exc}", file=sys.stderr)  # noqa: T201
        return EXIT_BAD_INPUT
    found = response_divergences(left, right, rules=(), losses=False) if args.raw else response_divergences(left, right)
    if args.json:
        sys.stdout.write(json.dumps([d.to_json() for d in found], indent=2, ensure_ascii=False) + "\n")
        return EXIT_DIVERGED if found else EXIT_SAME
    header = f"{args.left} ({left.role}) vs {args.right} ({right.role})"
    if not found:
        sys.stdout.write(f"{header}: no divergences\n")
        return EXIT_SAME
    lines = [f"{header}: {len(found)} divergence(s)", *(format_divergence(i, d) for i, d in enumerate(found, 1))]
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_DIVERGED
