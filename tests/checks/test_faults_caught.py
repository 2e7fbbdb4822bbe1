"""Each issue-21 fault is caught by its own registered check in the translated run, not only by the diff, and the
baselines (the backend's own SDK through the pass-through) pass the same checks: no false alarm."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.checks.support import run_fault


@pytest.mark.parametrize(
    ("fault", "scenario", "stream", "check", "actual"),
    [
        (
            "tool-call-ids-from-name",
            "function-call-outputs-fed-back",
            False,
            "upstream.tool_call_ids_unique",
            [
                "messages[1]: 2 tool calls with id 'call_get_weather'",
                "messages[2]: a second tool result for id 'call_get_weather'",
            ],
        ),
        (
            "fixed-beta-header",
            "text-basic",
            True,
            "upstream.headers",
            [
                "anthropic-beta (beta) 'prompt-caching-2024-07-31,fine-grained-tool-streaming-2025-05-14' added; "
                "the client sent None"
            ],
        ),
        ("stream-options-forwarded", "text-basic", True, "upstream.unknown_fields", ["stream_options"]),
    ],
)
def test_the_fault_fails_its_check_in_the_translated_run_only(
    tmp_path: Path, fault: str, scenario: str, stream: bool, check: str, actual: list[str]
) -> None:
    code, result = run_fault(tmp_path, fault, scenario, stream=stream)
    assert code == 1
    assert result.verdict == "proxy_bug_request"
    failed = {c.name: c.actual for c in result.runs["translated"].checks if not c.passed}
    assert failed[check] == actual
    for role in ("baseline_frontend", "baseline_backend"):
        assert [c.name for c in result.runs[role].checks if not c.passed] == [], role
    assert check in {c.name for c in result.runs["baseline_backend"].checks}


@pytest.mark.parametrize(
    ("fault", "scenario", "frontend", "backend", "stream", "finding"),
    [
        ("thinking-signature-null", "thinking-then-tool", "anthropic", "anthropic", True, "signature: null where"),
        ("error-code-as-integer", "error-server-500", "openai", "anthropic", False, "error.error.code: expected"),
        ("response-fields-missing", "text-basic", "responses", "anthropic", True, "'parallel_tool_calls' is missing"),
        ("error-type-null", "midstream-error", "openai", "anthropic", True, "error.type: null where"),
        ("thinking-start-unsigned", "thinking-then-tool", "anthropic", "anthropic", True, "'signature' is missing"),
        ("events-unnumbered", "text-basic", "responses", "anthropic", True, "'sequence_number' is missing"),
    ],
)
def test_each_gateway_spec_class_is_caught_by_answer_spec(
    tmp_path: Path, fault: str, scenario: str, frontend: str, backend: str, stream: bool, finding: str
) -> None:
    """A26, P7, CR11, A27, R13 and LR15 of docs/gateways.md, each a fault of our proxy: `answer.spec` names it."""
    code, result = run_fault(tmp_path, fault, scenario, frontend=frontend, backend=backend, stream=stream)
    assert code == 1
    assert result.verdict == "proxy_bug_response"
    failed = {c.name: c.actual for c in result.runs["translated"].checks if not c.passed}
    assert any(finding in line for line in failed["answer.spec"]), failed
