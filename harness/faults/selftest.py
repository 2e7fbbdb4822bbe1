"""The selftest: the gate must be green on the built-in proxy and red for every fault in the catalog.

It runs the cases the faults need once with the clean proxy (no case may be a proxy bug), then each fault on
its own cases (its witnesses plus, unless `quick`, a representative spread of the frontends, backends and
scenarios its scope allows). Baselines do not depend on the fault (they are pass-through runs), so every fault
reuses the clean run's baselines and only its translated runs are run again. A fault is caught when at least
one of its cases gets a proxy-bug verdict.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.faults.catalog import FAULTS
from harness.faults.fault import Fault
from harness.faults.selftest_html import render_html
from harness.runner.engine import CaseRunner
from harness.runner.plan import MatrixOptions, Plan, plan, wanted_runs
from harness.trace import Case, CaseResult

DEFAULT_PER_FAULT = 24
"""Cases per fault in a full selftest (witnesses included)."""


@dataclass
class SelftestOptions:
    """What the selftest runs."""

    scenarios: Path = Path("scenarios")
    cassettes: Path = Path("cassettes")
    reports: Path = Path("reports")
    faults: Sequence[Fault] = FAULTS
    """The faults to prove caught (the whole catalog by default)."""
    quick: bool = False
    """Only each fault's witnesses (the CI form)."""
    per_fault: int = DEFAULT_PER_FAULT
    """Cases per fault in a full run."""
    jobs: int = 2
    run_id: str | None = None
    on_progress: Callable[[str], None] | None = None
    """Called with a short label after each run."""


@dataclass
class FaultOutcome:
    """How one fault fared."""

    fault: Fault
    cases: list[str]
    """Case ids it ran on."""
    catching: list[str] = field(default_factory=list)
    """Case ids with a proxy-bug verdict."""
    verdicts: dict[str, int] = field(default_factory=dict)
    """Cases per verdict."""
    first_divergence: str | None = None
    """The first divergence (or the reason) of the first catching case."""
    case_verdicts: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Each case's verdict and its first divergence (or reason), by case id."""

    @property
    def caught(self) -> bool:
        """Whether some case caught it."""
        return bool(self.catching)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form for selftest.json."""
        return {
            "name": self.fault.name,
            "description": self.fault.description,
            "models": self.fault.models,
            "expected_catch": self.fault.caught_by,
            "caught": self.caught,
            "cases_run": self.cases,
            "catching_cases": self.catching,
            "verdicts": self.verdicts,
            "first_divergence": self.first_divergence,
            "case_verdicts": {case_id: verdict for case_id, (verdict, _) in self.case_verdicts.items()},
        }


@dataclass
class SelftestResult:
    """The catch matrix and the score."""

    run_id: str
    quick: bool
    clean: list[CaseResult]
    """The clean run of every case the faults use."""
    outcomes: list[FaultOutcome]
    duration_s: float = 0.0

    @property
    def clean_bugs(self) -> list[CaseResult]:
        """Clean cases judged proxy bugs (each one fails the selftest: the gate would cry wolf)."""
        return [r for r in self.clean if r.verdict.is_proxy_bug]

    @property
    def escaped(self) -> list[str]:
        """Faults no case caught."""
        return [o.fault.name for o in self.outcomes if not o.caught]

    @property
    def clean_errors(self) -> list[CaseResult]:
        """Clean cases that could not be judged (harness errors): the selftest proves nothing there."""
        return [r for r in self.clean if r.verdict.is_harness_error]

    @property
    def exit_code(self) -> int:
        """0 when every fault is caught and the clean run has no proxy bug, 1 when not, 2 when a clean case is a
        harness error."""
        if self.clean_errors:
            return 2
        return 1 if self.escaped or self.clean_bugs else 0

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form for selftest.json."""
        caught = sum(o.caught for o in self.outcomes)
        return {
            "run_id": self.run_id,
            "quick": self.quick,
            "duration_s": round(self.duration_s, 3),
            "score": {"caught": caught, "total": len(self.outcomes)},
            "exit_code": self.exit_code,
            "clean": {
                "cases": len(self.clean),
                "verdicts": dict(Counter(r.verdict for r in self.clean)),
                "proxy_bugs": [{"case": r.case_id, "reason": r.reason} for r in self.clean_bugs],
            },
            "faults": [o.to_json() for o in self.outcomes],
        }


def describe(result: CaseResult) -> str:
    """The first divergence of a case as one line (`path: left -> right`), or its reason."""
    first = result.first_divergence
    if first is None:
        return result.reason
    left, right = (json.dumps(v, ensure_ascii=False, default=str)[:60] for v in (first.left, first.right))
    return f"{first.path}: {left} -> {right}"


def spread(candidates: Sequence[Case], limit: int, chosen: Iterable[Case] = ()) -> list[Case]:
    """Up to `limit` cases (starting with `chosen`), each next one adding the most frontends, backends, scenarios
    and streaming modes not covered yet; ties keep the candidates' order (deterministic)."""
    picked = list(dict.fromkeys(chosen))
    covered: set[tuple[str, object]] = set()
    for case in picked:
        covered |= _facets(case)
    rest = [c for c in candidates if c not in picked]
    while rest and len(picked) < limit:
        best = max(rest, key=lambda c: len(_facets(c) - covered))
        picked.append(best)
        covered |= _facets(best)
        rest.remove(best)
    return picked


def _facets(case: Case) -> set[tuple[str, object]]:
    return {("f", case.frontend), ("b", case.backend), ("s", case.scenario), ("st", case.stream)}


class Selftest:
    """One selftest run: plan, clean run, one run per fault, result."""

    def __init__(self, options: SelftestOptions) -> None:
        self.options = options
        self.run_id = options.run_id or dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.folder = options.reports / f"selftest-{self.run_id}"
        self.run_options = MatrixOptions(
            scenarios=options.scenarios,
            cassettes=options.cassettes,
            reports=options.reports,
            jobs=options.jobs,
            write_traces=False,
            on_progress=options.on_progress,
        )
        self.matrix: Plan = plan(self.run_options)
        """The full matrix `conformance run` would plan: a fault runs only on its runnable cases."""
        self._clean = CaseRunner(self.run_options, list(self.matrix.scenarios), self.matrix.run_backends)

    def plan(self, fault: Fault) -> list[Case]:
        """The cases a fault runs on: its witnesses, then (unless quick) a spread over its scope."""
        runnable = [case for case in fault.witnesses if self.matrix.runnable(case)]
        if self.options.quick:
            return runnable
        return spread(self._candidates(fault), max(self.options.per_fault, len(runnable)), runnable)

    def _candidates(self, fault: Fault) -> list[Case]:
        scope = fault.scope
        cases = [
            Case(s, f, b, st)
            for s in scope.scenarios
            for f in scope.frontends or self.matrix.frontends
            for b in scope.backends or self.matrix.backends
            for st in scope.streams
        ]
        return [c for c in cases if self.matrix.runnable(c)]

    def run(self) -> SelftestResult:
        """Run everything and write `reports/selftest-<id>/selftest.json` and its page, `selftest.html`."""
        started = time.perf_counter()
        plans = {fault.name: self.plan(fault) for fault in self.options.faults}
        union = sorted({case for cases in plans.values() for case in cases})
        try:
            self._clean.run_all(wanted_runs(union))
            clean = [self._clean.judge(case, None) for case in union]
            outcomes = [self._run_fault(fault, plans[fault.name]) for fault in self.options.faults]
        finally:
            self._clean.close()
        result = SelftestResult(self.run_id, self.options.quick, clean, outcomes, time.perf_counter() - started)
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "selftest.json").write_text(json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8")
        (self.folder / "selftest.html").write_text(render_html(result), encoding="utf-8")
        return result

    def _run_fault(self, fault: Fault, cases: list[Case]) -> FaultOutcome:
        # A fault's hooks are closures, which cannot go to worker processes; its few translated runs run here.
        options = dataclasses.replace(self.run_options, hooks=fault.hooks, jobs=1)
        runner = CaseRunner(options, list(self.matrix.scenarios), self.matrix.run_backends)
        # Baselines are pass-through runs, untouched by translate hooks: reuse the clean ones.
        runner.traces.update({run: trace for run, trace in self._clean.traces.items() if run.role != "translated"})
        try:
            runner.run_all(wanted_runs(cases))
            results = [runner.judge(case, None) for case in cases]
        finally:
            runner.close()
        outcome = FaultOutcome(fault, [r.case_id for r in results])
        outcome.verdicts = dict(Counter(r.verdict for r in results))
        outcome.case_verdicts = {r.case_id: (str(r.verdict), describe(r)) for r in results}
        outcome.catching = [r.case_id for r in results if r.verdict.is_proxy_bug]
        first = next((r for r in results if r.verdict.is_proxy_bug), None)
        outcome.first_divergence = describe(first) if first is not None else None
        return outcome


def run_selftest(options: SelftestOptions) -> SelftestResult:
    """Run a selftest with these options."""
    return Selftest(options).run()
