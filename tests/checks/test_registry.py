"""The check registry: one decorator, one signature; every result name a run can carry has a spec; the judge reads
scope and severity from it; `conformance list checks` prints each check with its scope, severity and why."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.checks import Scope, Severity, all_specs, spec_for
from harness.checks.registry import REGISTRY, CheckSpec, check
from harness.diff.triage import RunOutcome, triage, upstream_failures
from harness.trace.model import Verdict


def test_a_name_registered_twice_with_another_spec_is_refused() -> None:
    spec = REGISTRY.specs["frontend_wire"]
    with pytest.raises(ValueError, match="registered twice"):
        check("frontend_wire", scope=Scope.ANSWER, severity=spec.severity, why=spec.why)(lambda s: [])


def test_families_cover_their_members_and_exact_names_win() -> None:
    spec = spec_for("grammar:duplicate_start")
    assert spec is not None and spec.name == "grammar:*" and spec.scope is Scope.STREAM
    assert CheckSpec("request.*", Scope.SCENARIO, Severity.PROXY_BUG, "w").covers("request.tools")
    assert spec_for("upstream.headers") is not None and spec_for("upstream.headers").scope is Scope.HEADERS  # type: ignore[union-attr]


def test_every_spec_says_why_and_the_wire_rules_come_from_the_protocols() -> None:
    specs = all_specs()
    assert all(len(s.why) >= 40 for s in specs), [s.name for s in specs if len(s.why) < 40]
    rules = [s for s in specs if s.severity is Severity.DEVIATION and s.fn is None and s.scope is Scope.WIRE]
    assert "openai.documented_fields" in {s.name for s in rules}
    assert all("Evidence: " in s.why for s in rules)


def test_a_failed_upstream_check_is_a_request_side_proxy_bug_unless_the_backend_baseline_fails_it_too() -> None:
    ok = RunOutcome(True)
    failed = RunOutcome(False, frozenset({"upstream.headers"}))
    assert upstream_failures(failed) == {"upstream.headers"}
    verdict = triage(ok, ok, failed, request_divergences=[], response_divergences=[])
    assert (verdict.verdict, verdict.reason) == (
        Verdict.PROXY_BUG_REQUEST,
        "the upstream request fails upstream.headers",
    )
    assert triage(ok, failed, failed, request_divergences=[], response_divergences=[]).verdict is Verdict.BACKEND_ISSUE
    # A scenario's own request-field expectation keeps its response-side verdict (unchanged by the registry).
    scenario = RunOutcome(False, frozenset({"request.temperature"}))
    assert (
        triage(ok, ok, scenario, request_divergences=[], response_divergences=[]).verdict is Verdict.PROXY_BUG_RESPONSE
    )


def test_list_checks_prints_name_scope_severity_and_why() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "harness", "list", "checks"], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert set(lines) == {s.name for s in all_specs()}
    assert "request   proxy bug" in lines["upstream.unknown_fields"]
    assert "no false alarm" in lines["start_usage_reported"]
