"""A shrunk failure written as a regression case: `DIR/scenarios/<id>.yaml` plus the reference cassettes of every
backend its case talks to under `DIR/cassettes/`, which reproduce it under `conformance run --scenarios
DIR/scenarios --cassettes DIR/cassettes`."""

from __future__ import annotations

import hashlib
import shlex
from dataclasses import dataclass
from pathlib import Path

from harness.importer.scenario import render, write
from harness.trace import Case, stream_mode

from .engine import Finding, record


@dataclass(frozen=True)
class Written:
    """Where a finding went and the command that reproduces it."""

    scenario: Path
    cassettes: Path
    case: Case
    command: str


def finding_id(finding: Finding, case: Case) -> str:
    """A stable id for the shrunk example: the pair, the mode and a digest of its content."""
    digest = hashlib.sha256(render(finding.scenario).encode("utf-8")).hexdigest()[:8]
    return f"fuzz-{case.frontend}-{case.backend}-{stream_mode(case.stream)}-{digest}".lower()


def write_finding(finding: Finding, case: Case, out: Path, *, hooks: str | None = None) -> Written:
    """Write the finding's scenario and cassettes under `out`; returns the paths and the `conformance run` line."""
    scenario_id = finding_id(finding, case)
    result = finding.result
    description = (
        f"Found by conformance fuzz on {case.frontend}->{case.backend} ({stream_mode(case.stream)}) and shrunk: "
        f"{result.verdict}: {result.reason}"
    )
    scenario = finding.scenario.model_copy(update={"id": scenario_id, "description": description})
    scenarios, cassettes = out / "scenarios", out / "cassettes"
    path = write(scenario, scenarios)
    found = Case(scenario_id, case.frontend, case.backend, case.stream)
    record(scenario, found, cassettes)
    parts = [
        "conformance",
        "run",
        "--scenarios",
        str(scenarios),
        "--cassettes",
        str(cassettes),
        "--frontend",
        case.frontend,
        "--backend",
        case.backend,
        "--scenario",
        scenario_id,
        "--streaming",
        stream_mode(case.stream),
    ]
    if hooks:
        parts += ["--hooks", hooks]
    return Written(path, cassettes, found, shlex.join(parts))
