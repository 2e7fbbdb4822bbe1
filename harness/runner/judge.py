"""A case's verdict from its three run traces: request-side diff, response-side diff, triage."""

from __future__ import annotations

from collections.abc import Iterable

from harness import ir
from harness.diff import (
    Divergence,
    RunOutcome,
    Triage,
    Verdict,
    apply_losses,
    compare,
    request_divergences,
    triage,
    valid_keys,
)
from harness.diff.normalize import incomplete_stream, start_usage_reported
from harness.protocols import registry
from harness.runner.checks import LEAK
from harness.runner.execute import sdk_view_json
from harness.runner.matrix import Case
from harness.trace.model import CaseResult, DivergenceJSON, RunTrace


def losses_of(*protocols: str) -> list[str]:
    """The loss keys the codecs of these protocols declare."""
    keys: list[str] = []
    for name in protocols:
        keys.extend(valid_keys(registry.get(name).losses))
    return keys


def outcome(trace: RunTrace) -> RunOutcome:
    """What triage needs of a run: ok, or the names of what failed."""
    failures = {c.name for c in trace.checks if not c.passed}
    failures |= {f"grammar:{g.split(' ', 1)[0]}" for g in trace.grammar}
    if trace.status == "error":
        failures.add(f"harness_error:{(trace.error or '').split(':', 1)[0]}")
    return RunOutcome(ok=not failures, failures=frozenset(failures))


def _as_json(divergences: Iterable[Divergence]) -> list[DivergenceJSON]:
    return [DivergenceJSON.model_validate(d.to_json()) for d in divergences]


def request_side(case: Case, translated: RunTrace) -> list[Divergence]:
    """The client's request against what the proxy sent upstream, minus the backend's declared losses."""
    if translated.frontend_request is None or translated.upstream_request is None:
        return []
    return request_divergences(
        ir.to_json(translated.frontend_request),
        ir.to_json(translated.upstream_request),
        losses=losses_of(case.backend),
        pair=(case.frontend, case.backend),
    )


def response_side(case: Case, baseline_frontend: RunTrace, translated: RunTrace) -> list[Divergence]:
    """What the frontend SDK saw through translation against what it saw from its own backend."""
    # Equivalences between the two runs come first: declared losses may remove what they look at (a backend
    # that cannot carry start usage loses its value, not the frontend's duty to report one).
    left, right = incomplete_stream(sdk_view_json(baseline_frontend), sdk_view_json(translated))
    left, right = start_usage_reported(left), start_usage_reported(right)
    left, right = apply_losses(
        left,
        right,
        losses_of(case.backend, case.frontend),
        scope="response",
    )
    return compare(left, right)


def leaked(runs: dict[str, RunTrace]) -> Triage | None:
    """A proxy bug whatever else happened when any run shows the proxy's upstream key to the client or trace."""
    for role, trace in runs.items():
        for check in trace.checks:
            if check.name == LEAK and not check.passed:
                return Triage(
                    Verdict.PROXY_BUG_RESPONSE, f"the proxy leaked its upstream key ({role} run: {check.actual})"
                )
    return None


def judge(case: Case, runs: dict[str, RunTrace], *, unsupported: str | None = None) -> CaseResult:
    """The CaseResult of one case."""
    if unsupported is not None:
        verdict = triage(
            RunOutcome(True),
            RunOutcome(True),
            RunOutcome(True),
            request_divergences=[],
            response_divergences=[],
            unsupported=unsupported,
        )
        return CaseResult(
            case_id=case.case_id,
            scenario=case.scenario,
            frontend=case.frontend,
            backend=case.backend,
            stream=case.stream,
            verdict=verdict.verdict.value,
            reason=verdict.reason,
            runs=runs,
        )
    base_f, base_b, translated = runs["baseline_frontend"], runs["baseline_backend"], runs["translated"]
    req = request_side(case, translated)
    resp = response_side(case, base_f, translated)
    result = leaked(runs) or triage(
        outcome(base_f), outcome(base_b), outcome(translated), request_divergences=req, response_divergences=resp
    )
    first = result.first_divergence
    return CaseResult(
        case_id=case.case_id,
        scenario=case.scenario,
        frontend=case.frontend,
        backend=case.backend,
        stream=case.stream,
        verdict=result.verdict.value,
        reason=result.reason,
        first_divergence=_as_json([first])[0] if first else None,
        request_divergences=_as_json(req),
        response_divergences=_as_json(resp),
        runs=runs,
        duration_ms=translated.timings.total_ms,
    )
