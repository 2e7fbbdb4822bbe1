"""The plan cut into units of work that share nothing: one unit per (scenario, streaming) pair.

Every run a case needs has the case's scenario and streaming mode (its frontend's baseline, its backend's
baseline, the translated run), so the cases of one pair need only runs of that pair, and no run is needed by two
units. A unit is what a worker process runs (baselines shared within it, never run twice) and what a shard is made
of (the baselines a shard needs run in that shard).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness.runner.plan import Plan, runs_of
from harness.trace import Case, Run


@dataclass(frozen=True)
class Unit:
    """The cases of one (scenario, streaming) pair and the distinct runs they need."""

    scenario: str
    """Scenario id."""
    stream: bool
    """Streaming mode."""
    cases: tuple[Case, ...]
    """The pair's cases, in plan order (unsupported ones included: they are judged without running)."""
    runs: tuple[tuple[Run, str], ...]
    """The runs the runnable cases need, in plan order, each with the id of the first case that needs it."""

    @property
    def weight(self) -> int:
        """How much work the unit is: its runs (an unsupported case costs next to nothing)."""
        return len(self.runs) + 1


def units(plan: Plan) -> list[Unit]:
    """The plan's units, in the order of their first case."""
    cases: dict[tuple[str, bool], list[Case]] = {}
    for case in plan.cases:
        cases.setdefault((case.scenario, case.stream), []).append(case)
    out = []
    for (scenario, stream), members in cases.items():
        runs: dict[Run, str] = {}
        for case in members:
            if plan.gaps[case] is None:
                for run in runs_of(case).values():
                    runs.setdefault(run, plan.runs[run])
        out.append(Unit(scenario, stream, tuple(members), tuple(runs.items())))
    return out


SHARD = re.compile(r"^(\d+)/(\d+)$")


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` (1 <= K <= N) as (K, N); ValueError otherwise."""
    match = SHARD.match(text.strip())
    if match is None:
        raise ValueError(f"--shard {text!r}: expected K/N, e.g. 1/4")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= index <= count:
        raise ValueError(f"--shard {text!r}: K must be between 1 and N")
    return index, count


def shard(work: Sequence[Unit], index: int, count: int) -> list[Unit]:
    """Shard `index` of `count` (1-based): the units dealt to it, in plan order.

    Units are dealt heaviest first, each to the lightest shard so far (ties: the lower shard, then plan order), so
    shards carry about equal work and every machine that plans the same options deals the same way.
    """
    if not 1 <= index <= count:
        raise ValueError(f"shard {index}/{count}: K must be between 1 and N")
    loads = [0] * count
    owner: dict[int, int] = {}
    for position in sorted(range(len(work)), key=lambda i: (-work[i].weight, i)):
        lightest = min(range(count), key=lambda k: (loads[k], k))
        owner[position] = lightest
        loads[lightest] += work[position].weight
    return [unit for position, unit in enumerate(work) if owner[position] == index - 1]
