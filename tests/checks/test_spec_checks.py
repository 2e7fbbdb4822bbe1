"""The published-spec checks: what the client received and what went upstream, held to the providers' vendored
specs. Each issue-21 answer fault fails `answer.spec` with the spec's own words, the clean proxy passes both checks
on every run, and a request that breaks the backend's spec fails `upstream.spec`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.checks import spec
from harness.checks.memo import Memo
from harness.checks.spec import ANSWER_SPEC, UPSTREAM_SPEC, _upstream
from harness.checks.subject import Subject
from harness.drivers.base import SdkResult
from harness.protocols.wire_schema import answer_findings, request_findings
from harness.scenarios.loader import load_scenarios
from tests.checks.support import run_fault
from tests.conftest import REPO


@pytest.mark.parametrize(
    ("fault", "frontend", "backend", "scenario", "stream", "finding"),
    [
        ("created-missing-from-chunks", "openai", "anthropic", "text-basic", True,
         "event[0].created: required field 'created' is missing"),
        ("error-in-detail-envelope", "anthropic", "openai", "error-server-500", False,
         "error.type: required field 'type' is missing"),
    ],
)  # fmt: skip
def test_an_answer_the_spec_rejects_is_a_proxy_bug(
    tmp_path: Path, fault: str, frontend: str, backend: str, scenario: str, stream: bool, finding: str
) -> None:
    _, clean = run_fault(tmp_path / "clean", None, scenario, frontend=frontend, backend=backend, stream=stream)
    assert clean.verdict == "pass"
    assert [c.passed for c in clean.runs["translated"].checks if c.name == ANSWER_SPEC] == [True]
    _, result = run_fault(tmp_path / "fault", fault, scenario, frontend=frontend, backend=backend, stream=stream)
    assert (result.verdict, result.reason) == ("proxy_bug_response", "translated run fails (answer.spec)")
    (failed,) = [c for c in result.runs["translated"].checks if c.name == ANSWER_SPEC]
    assert not failed.passed and any(str(a).startswith(finding) for a in failed.actual)


def test_a_request_the_backend_spec_rejects_fails_upstream_spec() -> None:
    scenario = next(s for s in load_scenarios(REPO / "scenarios") if s.id == "text-basic")
    body = {"model": "claude-sonnet-4-5", "max_tokens": "many", "messages": []}
    subject = Subject(
        role="translated", client="openai", backend="anthropic", stream=False, scenario=scenario,
        result=SdkResult(), upstream_body=json.dumps(body).encode(),
    )  # fmt: skip
    (check,) = list(_upstream(subject))
    assert check.name == UPSTREAM_SPEC and not check.passed
    assert any("max_tokens" in str(a) for a in check.actual)


def test_a_request_bodys_findings_are_found_once_and_remembered_per_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spec, "_memo", Memo(spec.MEMO))
    body = {"model": "claude-sonnet-4-5", "max_tokens": "many", "messages": []}
    text = json.dumps(body).encode()
    expected = tuple(request_findings("anthropic", body))
    assert any("max_tokens" in f.path for f in expected)
    assert spec._request_findings("anthropic", text, body) == expected
    assert spec._request_findings("anthropic", text, {"not": "looked at: remembered"}) == expected
    # The same bytes are judged afresh for another backend.
    assert spec._request_findings("openai", text, body) == tuple(request_findings("openai", body))
    monkeypatch.setattr(spec, "_memo", Memo(2))
    for n in range(5):
        spec._request_findings("openai", str(n).encode(), n)
        assert len(spec._memo) <= 2


def test_an_answer_parts_findings_are_found_once_per_protocol_and_way_of_reading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(spec, "_parts", Memo(spec.MEMO))
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": []}  # no `created`
    text = json.dumps(chunk)
    expected = (("event", tuple(answer_findings("openai", "event", chunk))),)
    assert any("created" in f.path for _, found in expected for f in found)
    assert spec._part_findings("openai", "sse", text) == expected
    assert len(spec._parts) == 1
    assert spec._part_findings("openai", "sse", text) == expected and len(spec._parts) == 1  # remembered
    assert spec._part_findings("openai", "json", text) == (("body", tuple(answer_findings("openai", "body", chunk))),)
    assert spec._part_findings("anthropic", "sse", text) == (
        ("event", tuple(answer_findings("anthropic", "event", chunk))),
    )
    assert spec._part_findings("openai", "sse", "not json") is None
