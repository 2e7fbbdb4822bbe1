"""`conformance selftest`: the bounded CI form catches every catalogued fault on its witness cases with the
expected verdict and first divergence; the clean run is clean; a fault that changes nothing escapes and fails
the command; the case spread is deterministic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.faults import catalog
from harness.faults.fault import Fault, Scope
from harness.faults.selftest import spread
from harness.proxy import TranslateHooks
from harness.trace import Case
from tests.conftest import REPO

# fault -> (verdict of its witness case, text its first divergence (or reason) must contain)
EXPECTED: dict[str, tuple[str, str]] = {
    "tools-dropped-on-stream": ("proxy_bug_request", 'request.tools[0]: {"name": "get_weather"'),
    "tool-call-ids-from-name": ("proxy_bug_request", 'request.messages[1].content[1].id: "<call:1>" -> "<call:0>"'),
    "fixed-beta-header": ("proxy_bug_request", "the upstream request fails upstream.headers"),
    # The Anthropic spec rejects the unknown field too (upstream.spec), beside the field table.
    "stream-options-forwarded": (
        "proxy_bug_request",
        "the upstream request fails upstream.spec, upstream.unknown_fields",
    ),
    "created-missing-from-chunks": ("proxy_bug_response", "translated run fails (answer.spec)"),
    "error-in-detail-envelope": ("proxy_bug_response", "translated run fails (answer.spec)"),
    "thinking-signature-null": ("proxy_bug_response", "translated run fails (answer.spec)"),
    "error-code-as-integer": ("proxy_bug_response", "translated run fails (answer.spec)"),
    "response-fields-missing": ("proxy_bug_response", "translated run fails (answer.spec)"),
    "error-type-null": ("proxy_bug_response", "translated run fails (answer.spec)"),
    "thinking-start-unsigned": ("proxy_bug_response", "translated run fails (answer.spec)"),
    "events-unnumbered": ("proxy_bug_response", "translated run fails (answer.spec, frontend_wire)"),
    "system-as-assistant-turn": ("proxy_bug_request", 'request.messages[0].content[0].text: "How is the sea today?"'),
    "text-sent-again-at-stop": ("proxy_bug_response", 'events[2].text: "1, 2, 3, " -> "1, 2, 3, 1, 2, 3, "'),
    "gemini-function-response-name-hardcoded": (
        "proxy_bug_request",
        'request.messages[2].content[0].name: "get_weather" -> "function"',
    ),
    "second-parallel-tool-call-dropped": ("proxy_bug_response", 'events[3]: {"kind": "tool_call_start", "index": 1'),
    "arguments-lost-with-name": (
        "proxy_bug_response",
        'response.content[0].arguments: {"city": "Paris", "unit": "celsius"} -> {}',
    ),
    "duplicate-message-start": ("proxy_bug_response", "frontend_wire, grammar:duplicate_start"),
    "delta-without-block-start": ("proxy_bug_response", "response: "),
    # The start's 0 is the first divergence now (start_usage_reported); the final usage fails usage_present too.
    "zeroed-usage-in-message-start": ("proxy_bug_response", 'events[0].start_input_tokens: "<reported>" -> 0'),
    "zero-input-at-message-start": ("proxy_bug_response", 'events[0].start_input_tokens: "<reported>" -> 0'),
    "thinking-as-text": ("proxy_bug_response", 'events[1].kind: "thinking_start" -> "text_start"'),
    "done-appended-to-anthropic-stream": ("proxy_bug_response", "translated run fails (frontend_wire)"),
    "length-mapped-to-stop": ("proxy_bug_response", 'response.stop_reason.kind: "max_tokens" -> "end_turn"'),
    "usage-chunk-dropped": ("proxy_bug_response", "usage: "),
    "tool-fragments-reordered": (
        "proxy_bug_response",
        'arguments: {"city": "São Paulo", "unit": "fahrenheit"} -> null',
    ),
    "text-buffered-until-end": ("proxy_bug_response", "translated run fails (stream.text_not_buffered)"),
    "midstream-error-as-stop": ("proxy_bug_response", '"kind": "error", "error": {"kind": "overloaded"'),
    "rate-limit-as-server-error": ("proxy_bug_response", 'error.kind: "throttled" -> "server"'),
    "system-prompt-dropped": ("proxy_bug_request", 'request.system: "You are a pirate.'),
    "temperature-dropped": ("proxy_bug_request", "request.temperature: 0.3 -> null"),
    "image-dropped": ("proxy_bug_request", 'request.messages[0].content[1]: {"kind": "image"'),
    "file-sent-as-image": ("proxy_bug_request", 'request.messages[0].content[1]: {"kind": "file"'),
    "multibyte-split-corrupted": ("proxy_bug_response", "\ufffd"),
    "upstream-key-echoed": ("proxy_bug_response", "the proxy leaked its upstream key (translated run"),
    # The faults found by gating real gateways (docs/gateways.md).
    "error-status-flattened-to-500": ("proxy_bug_response", 'error.kind: "auth" -> "server"'),
    "overloaded-as-server-error": ("proxy_bug_response", 'error.kind: "overloaded" -> "server"'),
    "retry-after-dropped": ("proxy_bug_response", "translated run fails (answer.retry_after, error.retry_after)"),
    "stream-error-sent-as-200": ("proxy_bug_response", "error.status: 401 -> null"),
    "midstream-error-kind-lost": ("proxy_bug_response", 'events[4].error.kind: "overloaded" -> "server"'),
    "gemini-stream-error-openai-shaped": ("proxy_bug_response", 'error: {"kind": "overloaded"'),
    "truncated-stream-as-stop": ("proxy_bug_response", '-> {"kind": "done", "stop_reason": {"kind": "end_turn"}'),
    "stream-usage-zeroed": ("proxy_bug_response", "events[4].usage.input_tokens: 14 -> 0"),
    "tool-schema-emptied": ("proxy_bug_request", "request.tools[0].parameters.properties: "),
    "file-part-dropped": ("proxy_bug_request", 'request.messages[0].content[1]: {"kind": "file"'),
    "file-data-url-as-base64": ("proxy_bug_request", "request.messages[0].content[1].data: "),
    "nested-tool-schema-flattened": (
        "proxy_bug_request",
        "request.tools[0].parameters.properties.guests.items.properties: ",
    ),
    "json-mode-dropped": ("proxy_bug_request", 'request.response_format: {"kind": "json_object"} -> null'),
    "thinking-config-dropped": ("proxy_bug_request", 'request.thinking: {"enabled": true, "budget_tokens": 2048}'),
    "tool-choice-specific-widened": ("proxy_bug_request", 'request.tool_choice.kind: "tool" -> "required"'),
    "empty-arguments-call-dropped": ("proxy_bug_response", 'events[1]: {"kind": "tool_call_start"'),
    "cached-tokens-dropped": ("proxy_bug_response", "response.usage.cache_read_tokens: 2048 -> 0"),
    "thinking-signature-dropped": ("proxy_bug_response", "response.content[0].signature: "),
    "empty-text-before-tool-call": ("proxy_bug_response", '-> {"kind": "text", "text": ""}'),
    "parallel-calls-share-index": ("proxy_bug_response", 'events[2].kind: "tool_call_start" -> "tool_call_end"'),
    "tool-result-name-dropped": ("proxy_bug_request", 'request.messages[2].content[0].name: "get_weather" -> null'),
    "tool-calls-reported-as-stop": ("proxy_bug_response", 'response.stop_reason.kind: "tool_use" -> "end_turn"'),
    "max-tokens-dropped": ("proxy_bug_request", "request.max_tokens: 64 -> null"),
    "sampling-params-dropped": ("proxy_bug_request", "request.top_p: 0.9 -> null"),
    "system-as-user-turn": ("proxy_bug_request", '-> "You are a pirate. Answer in one short sentence."'),
    "tool-choice-dropped": ("proxy_bug_request", 'request.tool_choice: {"kind": "required"} -> null'),
    "tool-result-blocks-stringified": ("proxy_bug_request", '-> "[{\\"type\\":\\"text\\"'),
    "responses-sequence-number-from-one": ("proxy_bug_response", "translated run fails (frontend_wire)"),
    "responses-sequence-number-missing": ("proxy_bug_response", "translated run fails (answer.spec, frontend_wire)"),
    "responses-sequence-number-gap": ("proxy_bug_response", "translated run fails (frontend_wire)"),
    "responses-sequence-number-repeated": ("proxy_bug_response", "translated run fails (frontend_wire)"),
    "responses-completed-missing": ("proxy_bug_response", '-> {"kind": "error", "error": {'),
    "responses-output-index-mismatch": (
        "proxy_bug_response",
        '-> {"kind": "error", "error": {"kind": "malformed_stream"',
    ),
    "responses-item-id-mismatch": ("proxy_bug_response", "translated run fails (frontend_wire)"),
    "responses-incomplete-as-completed": ("proxy_bug_response", "translated run fails (frontend_wire)"),
    "responses-reasoning-items-dropped": ("proxy_bug_request", 'request.messages[1].content[0]: {"kind": "thinking"'),
    "responses-previous-response-id-dropped": (
        "proxy_bug_request",
        'request.messages[0].content[0].text: "My name is Ada. Remember it." -> "What is my name?"',
    ),
}
_CUT = 'events[4]: {"kind": "done", "stop_reason": {"kind": "end_turn"}, "usage -> {"kind": "error"'
# The faults of Bedrock, Workers AI and swink (issue 16).
EXPECTED.update(
    {
        "bedrock-tool-input-dropped": (
            "proxy_bug_response",
            'response.content[0].arguments: {"city": "Paris", "unit": "celsius"} -> {}',
        ),
        "bedrock-metadata-usage-lost": ("proxy_bug_response", "events[4].usage.input_tokens: 14 -> 0"),
        "bedrock-errors-by-status": ("proxy_bug_response", 'error.kind: "auth" -> "permission"'),
        "bedrock-exception-type-generic": ("proxy_bug_response", 'error.kind: "throttled" -> "server"'),
        "cloudflare-usage-summed": ("proxy_bug_response", "events[4].usage.input_tokens: 21 -> 84"),
        "cloudflare-final-usage-dropped": (
            "proxy_bug_response",
            'events[4].usage: {"cache_read_tokens": 0} -> null',
        ),
        "cloudflare-done-missing": ("proxy_bug_response", _CUT),
        "cloudflare-tool-call-first-fragment-only": (
            "proxy_bug_response",
            'response.content[0].arguments: {"city": "São Paulo", "unit": "fahrenheit"} -> null',
        ),
        "swink-done-dropped": ("proxy_bug_response", _CUT),
        "swink-done-as-openai-done": ("proxy_bug_response", _CUT),
        "swink-content-index-per-type": ("proxy_bug_response", 'events[4]: {"kind": "text_start", "index": 1'),
        "swink-thinking-signature-dropped": (
            "proxy_bug_response",
            'events[3].signature: "c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0LTAwMQ==" -> null',
        ),
    }
)


def _selftest(tmp: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code = main(
        [
            "selftest",
            "--scenarios",
            str(REPO / "scenarios"),
            "--cassettes",
            str(REPO / "cassettes"),
            "--reports",
            str(tmp),
            "--run-id",
            "t",
            "-q",
            *args,
        ]
    )
    report = tmp / "selftest-t" / "selftest.json"
    return code, json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}


def test_quick_selftest_catches_every_fault_on_its_witnesses(tmp_path: Path) -> None:
    code, report = _selftest(tmp_path, "--quick")
    assert report["clean"]["proxy_bugs"] == []
    assert set(report["clean"]["verdicts"]) == {"pass"}
    seen = {}
    for fault in report["faults"]:
        (case,) = fault["cases_run"]
        verdict = next(iter(fault["verdicts"])) if len(fault["verdicts"]) == 1 else fault["verdicts"]
        fragment = EXPECTED[fault["name"]][1]
        seen[fault["name"]] = (verdict, fragment if fragment in (fault["first_divergence"] or "") else fault)
        assert fault["catching_cases"] == [case]
    assert seen == EXPECTED
    assert report["score"] == {"caught": len(EXPECTED), "total": len(EXPECTED)}
    assert code == 0 and report["exit_code"] == 0


def test_a_fault_that_changes_nothing_escapes_and_fails_the_selftest(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    noop = Fault(
        "noop",
        "changes nothing (test only)",
        "no bug",
        "nothing",
        TranslateHooks(),
        Scope(("text-basic",)),
        (Case("text-basic", "openai", "anthropic", True),),
    )
    monkeypatch.setattr(catalog, "FAULTS", (*catalog.FAULTS, noop))
    code, report = _selftest(tmp_path, "--quick", "--fault", "noop,length-mapped-to-stop")
    assert code == 1
    assert report["score"] == {"caught": 1, "total": 2}
    by_name = {f["name"]: f for f in report["faults"]}
    assert by_name["noop"]["caught"] is False and by_name["noop"]["verdicts"] == {"pass": 1}
    assert by_name["length-mapped-to-stop"]["catching_cases"] == ["max-tokens-length[openai->anthropic,nonstream]"]


def test_unknown_fault_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _selftest(tmp_path, "--fault", "nope")
    assert (code, report) == (2, {})
    assert "no fault named 'nope'" in capsys.readouterr().err


def test_spread_starts_with_the_chosen_cases_and_then_covers_new_ground() -> None:
    witness = Case("text-basic", "openai", "anthropic", True)
    candidates = [
        Case("text-basic", "openai", "anthropic", False),
        Case("text-basic", "openai", "openai", True),
        Case("text-basic", "gemini", "ollama", False),
        witness,
    ]
    assert spread(candidates, 2, [witness]) == [witness, Case("text-basic", "gemini", "ollama", False)]
    # openai->openai adds a backend; openai->anthropic nonstream adds nothing new, so it comes last.
    assert spread(candidates, 10, [witness]) == [witness, candidates[2], candidates[1], candidates[0]]
