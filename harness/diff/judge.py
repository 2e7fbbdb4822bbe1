"""A case's verdict from its three run traces: request-side diff, response-side diff (both through
`harness.diff.pipeline`), triage."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from harness.diff.compare import Divergence
from harness.diff.pipeline import request_side, response_divergences
from harness.diff.triage import RunOutcome, Triage, triage
from harness.trace.identity import Case
from harness.trace.model import CaseResult, DivergenceJSON, RunTrace, Verdict

LEAK_CHECK = "secret_leak"
"""Name of the check that fails when a run shows the proxy's upstream key (`harness.runner.wire_checks`)."""


def outcome(trace: RunTrace) -> RunOutcome:
    """What triage needs of a run: ok, or the names of what failed."""
    failures = {c.name for c in trace.checks if not c.passed}
    failures |= {f"grammar:{g.split(' ', 1)[0]}" for g in trace.grammar}
    if trace.status == "error":
        failures.add(f"harness_error:{(trace.error or '').split(':', 1)[0]}")
    return RunOutcome(ok=not failures, failures=frozenset(failures))


def _as_json(divergences: Iterable[Divergence]) -> list[DivergenceJSON]:
    return [DivergenceJSON.model_validate(d.to_json()) for d in divergences]


def leaked(runs: Mapping[str, RunTrace]) -> Triage | None:
    """A proxy bug whatever else happened when any run shows the proxy's upstream key to the client or trace."""
    for role, trace in runs.items():
        for check in trace.checks:
            if check.name == LEAK_CHECK and not check.passed:
                return Triage(
                    Verdict.PROXY_BUG_RESPONSE, f"the proxy leaked its upstream key ({role} run: {check.actual})"
                )
    return None


def _result(case: Case, verdict: Triage, **fields: object) -> CaseResult:
    return CaseResult.model_validate(
        {
            "case_id": case.case_id,
            "scenario": case.scenario,
            "frontend": case.frontend,
            "backend": case.backend,
            "stream": case.stream,
            "verdict": verdict.verdict,
            "reason": verdict.reason,
            **fields,
        }
    )


def unsupported(case: Case, reason: str) -> CaseResult:
    """The result of a case that cannot run: `reason` names who lacks what."""
    ok = RunOutcome(True)
    return _result(case, triage(ok, ok, ok, request_divergences=[], response_divergences=[], unsupported=reason))


def judge(case: Case, runs: Mapping[str, RunTrace]) -> CaseResult:
    """The CaseResult of one case from its three runs."""
    base_f, base_b, translated = runs["baseline_frontend"], runs["baseline_backend"], runs["translated"]
    req = request_side(translated)
    resp = response_divergences(base_f, translated)
    result = leaked(runs) or triage(
        outcome(base_f), outcome(base_b), outcome(translated), request_divergences=req, response_divergences=resp
    )
    first = result.first_divergence
    return _result(
        case,
        result,
        first_divergence=_as_json([first])[0] if first else None,
        request_divergences=_as_json(req),
        response_divergences=_as_json(resp),
        runs=dict(runs),
        duration_ms=translated.timings.total_ms,
    )
