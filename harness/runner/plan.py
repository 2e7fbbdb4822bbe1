"""The matrix: frontends x backends x scenarios x streaming, in a deterministic order, each case marked
unsupported (with the missing capability named) where the SDK, the frontend or the backend lacks one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from harness.scenarios.model import Scenario


@dataclass(frozen=True, order=True)
class Case:
    """One (scenario, frontend, backend, streaming) combination."""

    scenario: str
    """Scenario id."""
    frontend: str
    """Frontend protocol: the SDK client and the proxy route it speaks."""
    backend: str
    """Backend protocol or profile the proxy translates to."""
    stream: bool
    """Whether the case streams."""

    @property
    def case_id(self) -> str:
        """Stable id, e.g. `tool-call-parallel[anthropic->openai,stream]`."""
        return f"{self.scenario}[{self.frontend}->{self.backend},{'stream' if self.stream else 'nonstream'}]"


def missing_capabilities(scenario: Scenario, parties: Mapping[str, frozenset[str]]) -> str | None:
    """Which party lacks which required capability, in words; None when all have everything."""
    gaps = [
        f"{name} lacks {', '.join(sorted(set(scenario.requires) - caps))}"
        for name, caps in parties.items()
        if set(scenario.requires) - caps
    ]
    return "; ".join(gaps) or None


def expand(
    scenarios: Sequence[Scenario],
    frontends: Iterable[str],
    backends: Iterable[str],
    *,
    streams: Iterable[bool] = (True, False),
) -> list[Case]:
    """Every case of the matrix, sorted by scenario, frontend, backend, streaming (stream first)."""
    modes = set(streams)
    cases = [
        Case(s.id, f, b, st)
        for s in scenarios
        for f in frontends
        for b in backends
        for st in (True, False)
        if st in modes and ("stream" if st else "nonstream") in s.streaming
    ]
    order = {s.id: i for i, s in enumerate(scenarios)}
    return sorted(cases, key=lambda c: (order[c.scenario], c.frontend, c.backend, not c.stream))
