"""Triage: the verdict of one case from its three runs, by this table (README.md, "Verdicts", says what each
verdict means for a user):

| baseline(F) | baseline(B) | translated | verdict |
|---|---|---|---|
| ok | ok | ok, no unexplained divergence | pass |
| ok | ok | fails a check, or diverges | proxy bug (response side) |
| any | any | upstream request IR differs from frontend IR | proxy bug (request side) |
| any | any | fails a registered check of the upstream request or its headers | proxy bug (request side) |
| any | fails the same way | fails | backend issue |
| fails | ok | ok | baseline issue (frontend's own backend) |
| declared unsupported capability | | | unsupported (not a failure) |
| any run could not complete (harness or setup) | | | harness error (exit 2, never known) |

A request-side verdict does not hide the response side: when the rest of the table would also call the case a
response-side proxy bug, the reason names both (the case keeps both divergence lists).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.checks import Severity, spec_for
from harness.diff.compare import Divergence
from harness.diff.headline import headline
from harness.trace.model import Verdict


@dataclass(frozen=True)
class RunOutcome:
    """What triage needs to know of one run."""

    ok: bool
    """Every check passed and nothing broke (no exception, no grammar violation)."""
    failures: frozenset[str] = frozenset()
    """Names of the failed checks (and `grammar:<rule>` / `exception:<class>` for other breakage)."""


@dataclass(frozen=True)
class Triage:
    """A verdict with the reason a person can act on."""

    verdict: Verdict
    """The outcome."""
    reason: str
    """Why, in one sentence."""
    first_divergence: Divergence | None = None
    """The divergence that heads it, if one decided it: the most specific one (`harness.diff.headline`), not
    necessarily the first in stream order."""
    divergences: list[Divergence] = field(default_factory=list)
    """All divergences that decided it."""


def _names(failures: frozenset[str]) -> str:
    return ", ".join(sorted(failures)) or "no named check"


def triage(
    baseline_frontend: RunOutcome,
    baseline_backend: RunOutcome,
    translated: RunOutcome,
    *,
    request_divergences: list[Divergence],
    response_divergences: list[Divergence],
    unsupported: str | None = None,
) -> Triage:
    """The verdict for one case. `unsupported` names the missing capability when the case cannot run."""
    if unsupported:
        return Triage(Verdict.UNSUPPORTED, f"declared unsupported: {unsupported}")
    if request_divergences:
        first = headline(request_divergences) or request_divergences[0]
        reason = f"upstream request differs from the client's request at {first.path}"
        rest = _response_side(baseline_frontend, baseline_backend, translated, response_divergences)
        if rest.verdict is Verdict.PROXY_BUG_RESPONSE:
            reason += f"; the response side fails too: {rest.reason}"
        return Triage(Verdict.PROXY_BUG_REQUEST, reason, first, request_divergences)
    upstream = upstream_failures(translated) - baseline_backend.failures
    if upstream:
        reason = f"the upstream request fails {_names(upstream)}"
        others = RunOutcome(not translated.failures - upstream, translated.failures - upstream)
        other = _response_side(baseline_frontend, baseline_backend, others, response_divergences)
        if other.verdict is Verdict.PROXY_BUG_RESPONSE:
            reason += f"; the response side fails too: {other.reason}"
        return Triage(Verdict.PROXY_BUG_REQUEST, reason)
    return _response_side(baseline_frontend, baseline_backend, translated, response_divergences)


def upstream_failures(run: RunOutcome) -> frozenset[str]:
    """The run's failed checks that judge the request the proxy sent upstream (registered as `upstream`, with
    proxy-bug severity)."""
    out = set()
    for name in run.failures:
        spec = spec_for(name)
        if spec is not None and spec.upstream and spec.severity is Severity.PROXY_BUG:
            out.add(name)
    return frozenset(out)


def _response_side(
    baseline_frontend: RunOutcome,
    baseline_backend: RunOutcome,
    translated: RunOutcome,
    response_divergences: list[Divergence],
) -> Triage:
    if not translated.ok and not baseline_backend.ok and translated.failures & baseline_backend.failures:
        same = translated.failures & baseline_backend.failures
        return Triage(Verdict.BACKEND_ISSUE, f"the backend's own baseline fails the same way ({_names(same)})")
    if not baseline_frontend.ok:
        if translated.ok or translated.failures <= baseline_frontend.failures:
            return Triage(
                Verdict.BASELINE_ISSUE,
                f"the frontend's own baseline fails ({_names(baseline_frontend.failures)})",
            )
        extra = translated.failures - baseline_frontend.failures
        return Triage(Verdict.PROXY_BUG_RESPONSE, f"translated run fails checks the baseline passes ({_names(extra)})")
    if not translated.ok:
        return Triage(
            Verdict.PROXY_BUG_RESPONSE,
            f"translated run fails ({_names(translated.failures)})",
            headline(response_divergences),
            response_divergences,
        )
    if response_divergences:
        first = headline(response_divergences) or response_divergences[0]
        return Triage(
            Verdict.PROXY_BUG_RESPONSE,
            f"translated run diverges from the frontend baseline at {first.path}",
            first,
            response_divergences,
        )
    if not baseline_backend.ok:
        return Triage(
            Verdict.PASS, f"translation holds; the backend's baseline fails ({_names(baseline_backend.failures)})"
        )
    return Triage(Verdict.PASS, "all three runs agree")
