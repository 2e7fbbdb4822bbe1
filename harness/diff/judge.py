"""A case's verdict from its three run traces: request-side diff, response-side diff (both through
`harness.diff.pipeline`), triage."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from harness.checks import CLIENT_CRASH, LEAK, across_runs
from harness.diff.compare import Divergence, diff_views
from harness.diff.pipeline import Compared, compared_views, request_side
from harness.diff.triage import RunOutcome, Triage, triage
from harness.trace.identity import Case
from harness.trace.model import CaseResult, Check, Deviation, DivergenceJSON, RunTrace, Verdict

LEAK_CHECK = LEAK
"""Name of the check that fails when a run shows the proxy's upstream key (registered in `harness.checks`)."""
__all__ = ["CLIENT_CRASH", "LEAK_CHECK", "judge", "outcome", "unsupported"]


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


ROLE_NAMES = {
    "baseline_frontend": "the frontend's baseline run",
    "baseline_backend": "the backend's baseline run",
    "translated": "the translated run",
}
"""How a reason names each of the three runs."""


def harness_failed(runs: Mapping[str, RunTrace]) -> Triage | None:
    """A harness error when any run could not complete (a missing or unreadable cassette, a system under test
    that cannot be reached, an exception in the harness's own code): nothing was judged, so nothing may pass."""
    for role in ("translated", "baseline_frontend", "baseline_backend"):
        trace = runs.get(role)
        if trace is not None and trace.status == "error":
            return Triage(Verdict.HARNESS_ERROR, f"{ROLE_NAMES[role]} could not complete: {trace.error}")
    return None


def unreached(translated: RunTrace, *, backend_reached: bool) -> Triage | None:
    """A translated run that sent nothing upstream while the proxy answered an error of its own. When other
    translated runs to the same backend got through, the proxy refused this request itself: a request-side proxy
    bug. When none did, its upstream is not pointed at this run's replay server (or cannot reach it): a harness
    error, since nothing could be judged."""
    if translated.unreached is None:
        return None
    if backend_reached:
        return Triage(
            Verdict.PROXY_BUG_REQUEST,
            f"the proxy answered this request itself, though other requests to {translated.upstream} got through: "
            f"{translated.unreached}",
        )
    return Triage(
        Verdict.HARNESS_ERROR,
        f"no translated run reached the {translated.upstream} backend: the system under test answered "
        f"{translated.unreached}; check its upstream base URL, key and model for {translated.upstream}",
    )


def client_crashed(translated: RunTrace, result: Triage) -> Triage:
    """A response-side verdict whose translated run crashed its SDK says so first: the client crashed on the
    proxy's output (the `client_crash` check names the event it choked on)."""
    crash = next((c for c in translated.checks if c.name == CLIENT_CRASH and not c.passed), None)
    if crash is None or result.verdict is not Verdict.PROXY_BUG_RESPONSE:
        return result
    reason = f"the {translated.client} SDK crashed on the proxy's output: {crash.actual}"
    return Triage(result.verdict, reason, result.first_divergence, result.divergences)


def _result(case: Case, verdict: Triage, **fields: object) -> CaseResult:
    return CaseResult.model_validate(
        {
            "case_id": case.case_id,
            "scenario": case.scenario,
            "frontend": case.frontend,
            "backend": case.backend,
            "stream": case.stream,
            "transport": case.transport,
            "verdict": verdict.verdict,
            "reason": verdict.reason,
            **fields,
        }
    )


def unsupported(case: Case, reason: str) -> CaseResult:
    """The result of a case that cannot run: `reason` names who lacks what."""
    ok = RunOutcome(True)
    return _result(case, triage(ok, ok, ok, request_divergences=[], response_divergences=[], unsupported=reason))


def with_checks_across_runs(case: Case, runs: Mapping[str, RunTrace]) -> Mapping[str, RunTrace]:
    """The runs with the checks across runs (`harness.checks.across_runs`) applied to the translated run: the
    header comparisons added, and the spec warnings its baselines share left out."""
    found = across_runs.compare(case.frontend, case.backend, runs)
    translated = runs["translated"]
    own = across_runs.beyond_baseline(runs)
    if not found and len(own) == len(translated.deviations):
        return runs
    checks = [*translated.checks, *(r for r in found if isinstance(r, Check))]
    deviations = [*own, *(r for r in found if isinstance(r, Deviation))]
    failed = translated.status == "ok" and any(not c.passed for c in checks)
    update = {"checks": checks, "deviations": deviations, "status": "failed" if failed else translated.status}
    return {**runs, "translated": translated.model_copy(update=update)}


def judge(
    case: Case, runs: Mapping[str, RunTrace], *, backend_reached: bool = False, keep: dict[str, Compared] | None = None
) -> CaseResult:
    """The CaseResult of one case from its three runs. `backend_reached`: whether any translated run to the
    case's backend through an external proxy reached the replay server (see `unreached`). `keep`: where the
    views the response side compared are put, by case id (for the report)."""
    runs = with_checks_across_runs(case, runs)
    base_f, base_b, translated = runs["baseline_frontend"], runs["baseline_backend"], runs["translated"]
    req = request_side(translated)
    views = compared_views(base_f, translated)
    resp = diff_views(*views)
    if keep is not None:
        keep[case.case_id] = Compared(base_f, translated, views)
    result = (
        leaked(runs)
        or harness_failed(runs)
        or unreached(translated, backend_reached=backend_reached)
        or triage(
            outcome(base_f), outcome(base_b), outcome(translated), request_divergences=req, response_divergences=resp
        )
    )
    result = client_crashed(translated, result)
    first = result.first_divergence
    return _result(
        case,
        result,
        first_divergence=_as_json([first])[0] if first else None,
        request_divergences=_as_json(req),
        response_divergences=_as_json(resp),
        deviations=list(translated.deviations),
        runs=dict(runs),
        duration_ms=translated.timings.total_ms,
    )
