"""Cases that fail the same way, grouped: one line per (verdict, first-divergence path, reason) instead of one per
case, with counts and one example. The terminal, summary.json, junit.xml and the HTML list share this grouping.

The path's list indices are read as a pattern (`events[7].arguments` and `events[9].arguments` are both
`events[*].arguments`): the same translation bug lands at another event index on a backend that chunks
differently, and is still one bug.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from harness.report.model import VERDICTS, first_path
from harness.trace.model import CaseResult, Verdict

_INDEX = re.compile(r"\[\d+\]")
NO_PATH = "(no divergence)"
"""The path shown for cases whose verdict no divergence decided (a failed check, an error)."""


def path_pattern(path: str | None) -> str:
    """The first-divergence path with list indices as `[*]`; NO_PATH when there is none."""
    return NO_PATH if path is None else _INDEX.sub("[*]", path)


@dataclass
class CaseGroup:
    """Cases sharing a verdict, a first-divergence path pattern and a reason."""

    verdict: Verdict
    """Their verdict."""
    path: str
    """Their first-divergence path pattern (`NO_PATH` when none)."""
    reason: str
    """Their reason."""
    cases: list[CaseResult] = field(default_factory=list)
    """The cases, in run order."""

    @property
    def id(self) -> str:
        """A stable short id (the same bug gets the same id in every run), for links and CI annotations."""
        key = "\0".join((self.verdict, self.path, self.reason)).encode("utf-8", "surrogatepass")
        return "g" + hashlib.sha256(key).hexdigest()[:8]

    @property
    def example(self) -> CaseResult:
        """The first case of the group."""
        return self.cases[0]

    @property
    def known(self) -> int:
        """How many of its cases are accepted by the known-failures file (only a proxy bug can be; a harness error
        never is, even in a trace written before that rule)."""
        return sum(1 for c in self.cases if c.known and c.verdict.is_proxy_bug)

    @property
    def new(self) -> int:
        """How many of its cases are not."""
        return len(self.cases) - self.known

    def axis(self, name: str) -> list[str]:
        """The distinct frontends, backends or scenarios (`name`) of its cases, in first-seen order."""
        return list(dict.fromkeys(getattr(c, name) for c in self.cases))


def group_cases(cases: Iterable[CaseResult], verdicts: Iterable[str] | None = None) -> list[CaseGroup]:
    """The groups of `cases` (only those with a verdict in `verdicts`, when given): by verdict in report order,
    then the largest group first, then by path and reason."""
    wanted = None if verdicts is None else set(verdicts)
    groups: dict[tuple[str, str, str], CaseGroup] = {}
    for case in cases:
        if wanted is not None and case.verdict not in wanted:
            continue
        key = (case.verdict, path_pattern(first_path(case)), case.reason)
        if key not in groups:
            groups[key] = CaseGroup(case.verdict, key[1], case.reason)
        groups[key].cases.append(case)
    order = {v: i for i, v in enumerate(VERDICTS)}
    return sorted(groups.values(), key=lambda g: (order.get(g.verdict, len(order)), -len(g.cases), g.path, g.reason))


def failing(cases: Iterable[CaseResult]) -> list[CaseGroup]:
    """The groups of every case that is neither a pass nor unsupported (proxy bugs, backend and baseline issues,
    and any verdict added later)."""
    return group_cases(c for c in cases if c.verdict not in (Verdict.PASS, Verdict.UNSUPPORTED))
