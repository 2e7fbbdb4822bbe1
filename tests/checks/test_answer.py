"""The answer's content type: a whole answer is JSON, whatever the run."""

from __future__ import annotations

from harness.checks import Subject, run_checks
from harness.checks.answer import CONTENT_TYPE
from harness.drivers.base import SdkResult
from harness.scenarios import load_scenario
from harness.trace.model import Check
from tests.conftest import REPO

SCENARIO = load_scenario(REPO / "scenarios" / "text-basic.yaml")


def _checks(headers: dict[str, str], *, stream: bool = False) -> list[Check]:
    subject = Subject(
        role="translated",
        client="openai",
        backend="anthropic",
        stream=stream,
        scenario=SCENARIO,
        result=SdkResult(),
        frontend_status=200,
        frontend_chunks=(b"{}",),
        frontend_response_headers=headers,
    )
    return [r for r in run_checks(subject) if isinstance(r, Check) and r.name == CONTENT_TYPE]


def test_json_with_a_charset_passes_and_text_plain_fails() -> None:
    (ok,) = _checks({"content-type": "application/json; charset=utf-8"})
    assert ok.passed
    (bad,) = _checks({"Content-Type": "text/plain"})
    assert (bad.passed, bad.actual) == (False, "text/plain")
    (missing,) = _checks({"x-conformance-trace-id": "t"})
    assert (missing.passed, missing.actual) == (False, None)


def test_streams_and_unrecorded_headers_are_not_judged() -> None:
    assert _checks({"content-type": "text/event-stream"}, stream=True) == []
    assert _checks({}) == []
