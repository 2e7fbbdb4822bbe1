"""A shrunk failure written as a regression case: `DIR/scenarios/<id>.yaml` plus the reference cassettes of every
backend its case talks to under `DIR/cassettes/`, which reproduce it under `conformance run --scenarios
DIR/scenarios --cassettes DIR/cassettes`."""

from __future__ import annotations

import dataclasses
import hashlib
import shlex
from collections.abc import Sequence
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
    replay: Case | None = None
    """With `sut`: the case as it reproduces through the gateway, on the route it already has (its scenario and
    cassettes under `DIR/sut/`): the regression case's own id has no route until its config is made again."""
    replay_command: str | None = None


def finding_id(finding: Finding, case: Case) -> str:
    """A stable id for the shrunk example: the pair, the mode and a digest of its content."""
    digest = hashlib.sha256(render(finding.scenario).encode("utf-8")).hexdigest()[:8]
    return f"fuzz-{case.frontend}-{case.backend}-{stream_mode(case.stream)}-{digest}".lower()


def write_finding(
    finding: Finding, case: Case, out: Path, *, hooks: str | None = None, sut: Sequence[str] = ()
) -> Written:
    """Write the finding's scenario and cassettes under `out`; returns the paths and the `conformance run` line.

    `sut`: the finding came through an external proxy on the route of `case.scenario`, and these are the
    `conformance run` options that reach it (`--sut URL --replay-port P ...`): a copy of the case under the route's
    id is written to `out/sut/` too, which reproduces through the gateway as it is configured."""
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
    written = Written(path, cassettes, found, shlex.join(parts))
    if not sut:
        return written
    routed = scenario.model_copy(update={"id": case.scenario})
    folder = out / "sut"
    write(routed, folder / "scenarios")
    record(routed, case, folder / "cassettes")
    line = ["conformance", "run", "--no-packaged", "--scenarios", str(folder / "scenarios"), "--cassettes"]
    line += [str(folder / "cassettes"), "--frontend", case.frontend, "--backend", case.backend]
    line += ["--scenario", case.scenario, "--streaming", stream_mode(case.stream), *sut]
    return dataclasses.replace(written, replay=case, replay_command=shlex.join(line))
