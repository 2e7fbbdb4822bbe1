"""Expectations evaluated on hand-built SDK results: each check passes or fails with concrete values."""

from __future__ import annotations

from typing import Any

import pytest

from harness import ir
from harness.drivers.base import SdkResult
from harness.ir.tool_schema import tools_without_empties
from harness.scenarios import Capability, CheckResult, Scenario, SdkException, evaluate, evaluate_upstream
from harness.scenarios import load_scenarios as _load
from tests.conftest import REPO

SCENARIOS = {s.id: s for s in _load(REPO / "scenarios")}


def _by_name(results: list[CheckResult]) -> dict[str, CheckResult]:
    return {r.name: r for r in results}


def _done(stop: ir.StopKind, usage: ir.Usage | None = None) -> ir.Done:
    return ir.Done(stop_reason=ir.StopReason(kind=stop), usage=usage)


def test_text_basic_passes_on_a_matching_response() -> None:
    response = ir.Response(
        content=[ir.TextPart(text="Hello! How can I help you today?")],
        stop_reason=ir.StopReason(kind="end_turn", raw="stop"),
        usage=ir.Usage(input_tokens=14, output_tokens=9),
    )
    results = evaluate(SCENARIOS["text-basic"], SdkResult(response=response))
    assert [(r.name, r.passed) for r in results] == [
        ("stop_reason", True),
        ("text_equals", True),
        ("usage_present", True),
        ("no_error", True),
    ]


def test_text_basic_fails_with_both_values_when_the_text_differs() -> None:
    response = ir.Response(content=[ir.TextPart(text="Hello!")], stop_reason=ir.StopReason(kind="max_tokens"))
    checks = _by_name(evaluate(SCENARIOS["text-basic"], SdkResult(response=response)))
    assert checks["text_equals"] == CheckResult(
        name="text_equals", passed=False, expected="Hello! How can I help you today?", actual="Hello!"
    )
    assert (checks["stop_reason"].passed, checks["stop_reason"].actual) == (False, "max_tokens")
    assert checks["usage_present"].actual == {"input_tokens": None, "output_tokens": None}


def test_parallel_tool_calls_from_a_stream() -> None:
    events: list[ir.StreamEvent] = [
        ir.MessageStart(usage=ir.Usage(input_tokens=85)),
        ir.ToolCallStart(index=0, id="a", name="get_weather"),
        ir.ToolCallDelta(index=0, arguments='{"city":'),
        ir.ToolCallDelta(index=0, arguments='"Paris"}'),
        ir.ToolCallEnd(index=0),
        ir.ToolCallStart(index=1, id="b", name="get_weather"),
        ir.ToolCallDelta(index=1, arguments='{"city":"Tokyo"}'),
        ir.ToolCallEnd(index=1),
        _done("tool_use", ir.Usage(output_tokens=38)),
    ]
    checks = _by_name(evaluate(SCENARIOS["tool-call-parallel"], SdkResult(events=events)))
    assert all(c.passed for c in checks.values()), checks
    assert checks["tool_calls"].actual == [
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "get_weather", "arguments": {"city": "Tokyo"}},
    ]


def test_tool_calls_in_the_wrong_order_fail() -> None:
    calls = [
        ir.ToolCallPart(id="b", name="get_weather", arguments={"city": "Tokyo"}),
        ir.ToolCallPart(id="a", name="get_weather", arguments={"city": "Paris"}),
    ]
    response = ir.Response(content=calls, stop_reason=ir.StopReason(kind="tool_use"))
    checks = _by_name(evaluate(SCENARIOS["tool-call-parallel"], SdkResult(response=response)))
    assert checks["tool_calls"].passed is False


def test_tool_choice_none_fails_when_a_call_arrives() -> None:
    response = ir.Response(
        content=[ir.ToolCallPart(id="a", name="get_weather", arguments={"city": "Paris"})],
        stop_reason=ir.StopReason(kind="tool_use"),
    )
    checks = _by_name(evaluate(SCENARIOS["tool-choice-none"], SdkResult(response=response)))
    assert (checks["tool_calls"].passed, checks["tool_calls"].expected) == (False, [])


def test_stop_sequence_accepts_end_turn_too() -> None:
    for kind in ("stop_sequence", "end_turn"):
        response = ir.Response(content=[ir.TextPart(text="1, 2, 3, ")], stop_reason=ir.StopReason(kind=kind))
        assert all(r.passed for r in evaluate(SCENARIOS["stop-sequence"], SdkResult(response=response)))


def test_rate_limit_checks_kind_status_retry_after_and_exception() -> None:
    error = ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down", status=429, retry_after=7.0)
    seen = SdkResult(
        error=error, exception_class="openai.RateLimitError", exception=SdkException.RATE_LIMIT, retry_after=7.0
    )
    checks = _by_name(evaluate(SCENARIOS["error-rate-limit-429"], seen))
    assert list(checks) == ["error.kind", "error.status", "error.retry_after", "error.exception"]
    assert all(c.passed for c in checks.values())
    assert checks["error.exception"].actual == {"neutral": "rate_limit", "class": "openai.RateLimitError"}


def test_litellm_answers_an_error_first_stream_with_429_which_is_the_same_error() -> None:
    # LiteLLM reads a Gemini stream whose only chunk is a 429 error and answers 429: google-genai raises its
    # ClientError (rate_limit) where the provider's own stream raised a stream error. Both are admitted.
    error = ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down")
    for exception in (SdkException.STREAM_ERROR, SdkException.RATE_LIMIT):
        seen = SdkResult(error=error, exception_class="x", exception=exception)
        checks = _by_name(evaluate(SCENARIOS["stream-error-first"], seen))
        assert checks["error.exception"].passed, exception
    seen = SdkResult(error=error, exception_class="x", exception=SdkException.SERVER_ERROR)
    checks = _by_name(evaluate(SCENARIOS["stream-error-first"], seen))
    assert (checks["error.exception"].passed, checks["error.exception"].expected) == (
        False, ["stream_error", "rate_limit"]
    )  # fmt: skip


def test_missing_retry_after_fails_unless_the_sdk_cannot_surface_it() -> None:
    error = ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down", status=429)
    seen = SdkResult(error=error, exception=SdkException.RATE_LIMIT)
    assert _by_name(evaluate(SCENARIOS["error-rate-limit-429"], seen))["error.retry_after"].passed is False
    without = evaluate(SCENARIOS["error-rate-limit-429"], seen, capabilities={Capability.TOOLS})
    assert "error.retry_after" not in _by_name(without)
    assert all(r.passed for r in without)


def test_overloaded_accepts_529_and_503() -> None:
    for status in (529, 503):
        error = ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded", status=status)
        seen = SdkResult(error=error, exception=SdkException.OVERLOADED)
        assert all(r.passed for r in evaluate(SCENARIOS["error-overloaded"], seen))
    wrong = SdkResult(error=ir.IRError.of(ir.ErrorKind.SERVER, "x", status=500), exception=SdkException.SERVER_ERROR)
    checks = _by_name(evaluate(SCENARIOS["error-overloaded"], wrong))
    assert [c.passed for c in checks.values()] == [False, False, False]


def test_success_expected_but_error_seen() -> None:
    seen = SdkResult(error=ir.IRError.of(ir.ErrorKind.SERVER, "boom", status=500))
    checks = _by_name(evaluate(SCENARIOS["text-basic"], seen))
    assert checks["no_error"].passed is False
    assert checks["no_error"].actual["kind"] == "server"


def test_midstream_error_from_the_stream_and_partial_text() -> None:
    error = ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded")
    events: list[ir.StreamEvent] = [
        ir.MessageStart(),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="Partial "),
        ir.TextDelta(index=0, text="answer t"),
        ir.TextEnd(index=0),
        ir.ErrorEvent(error=error),
    ]
    seen = SdkResult(events=events, error=error, exception=SdkException.STREAM_ERROR)
    assert all(r.passed for r in evaluate(SCENARIOS["midstream-error"], seen))


def test_truncated_stream_passes_on_malformed_stream_and_fails_on_a_clean_end() -> None:
    start: list[ir.StreamEvent] = [
        ir.MessageStart(),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="This reply is"),
    ]
    bad = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "no end")
    cut = SdkResult(events=[*start, ir.TextEnd(index=0), ir.ErrorEvent(error=bad)])
    assert all(r.passed for r in evaluate(SCENARIOS["truncated-stream"], cut))
    dressed_up = SdkResult(events=[*start, ir.TextEnd(index=0), _done("end_turn")])
    assert _by_name(evaluate(SCENARIOS["truncated-stream"], dressed_up))["error.kind"].passed is False


def test_thinking_signature_is_skipped_for_sdks_without_signatures() -> None:
    response = ir.Response(
        content=[ir.ThinkingPart(text="17 times 20 is 340"), ir.TextPart(text="17 \u00d7 23 = 391.")],
        stop_reason=ir.StopReason(kind="end_turn"),
        usage=ir.Usage(input_tokens=45, output_tokens=60),
    )
    scenario = SCENARIOS["thinking-with-signature"]
    assert _by_name(evaluate(scenario, SdkResult(response=response)))["thinking_signature"].passed is False
    checks = evaluate(scenario, SdkResult(response=response), capabilities={Capability.THINKING})
    assert "thinking_signature" not in _by_name(checks)
    assert all(c.passed for c in checks)


def test_json_schema_checks_parse_and_validate() -> None:
    scenario = SCENARIOS["json-schema"]
    good = ir.Response(
        content=[ir.TextPart(text='{"city":"Tokyo","country":"Japan","population":13960000}')],
        stop_reason=ir.StopReason(kind="end_turn"),
    )
    assert all(c.passed for c in evaluate(scenario, SdkResult(response=good)))
    bad = good.model_copy(update={"content": [ir.TextPart(text='{"city":"Tokyo","population":"many"}')]})
    checks = _by_name(evaluate(scenario, SdkResult(response=bad)))
    assert checks["text_is_json"].passed is True
    assert checks["text_matches_schema"].passed is False
    assert checks["text_matches_schema"].actual == [
        "'country' is a required property",
        "'many' is not of type 'integer'",
    ]


def test_cache_usage() -> None:
    usage = ir.Usage(input_tokens=2100, output_tokens=9, cache_read_tokens=2048)
    response = ir.Response(content=[ir.TextPart(text="x")], stop_reason=ir.StopReason(kind="end_turn"), usage=usage)
    assert all(c.passed for c in evaluate(SCENARIOS["usage-with-cache"], SdkResult(response=response)))
    no_cache = response.model_copy(update={"usage": ir.Usage(input_tokens=2100, output_tokens=9)})
    checks = _by_name(evaluate(SCENARIOS["usage-with-cache"], SdkResult(response=no_cache)))
    assert (checks["cache_read_present"].passed, checks["cache_read_present"].actual) == (False, None)


def test_models_list() -> None:
    seen = SdkResult(models=["conformance-model", "conformance-model-mini", "other"])
    assert [(c.name, c.passed) for c in evaluate(SCENARIOS["models-list"], seen)] == [
        ("models_contain", True),
        ("models_contain", True),
        ("no_error", True),
    ]
    assert not evaluate(SCENARIOS["models-list"], SdkResult(models=["conformance-model"]))[1].passed


def test_models_list_check_keeps_the_listing_only_when_a_name_is_missing() -> None:
    listing = ["conformance-model", *(f"route-{i}" for i in range(500))]
    found, missing, _ = evaluate(SCENARIOS["models-list"], SdkResult(models=listing))
    assert (found.passed, found.actual) == (True, "conformance-model")  # not 501 names in every passing trace
    assert (missing.passed, missing.expected, missing.actual) == (False, "conformance-model-mini", listing)


@pytest.mark.parametrize(("temperature", "passed"), [(0.3, True), (0.30000000001, True), (0.6, False), (None, False)])
def test_upstream_request_fields(temperature: float | None, passed: bool) -> None:
    scenario: Scenario = SCENARIOS["sampling-params"]
    upstream = scenario.request_for("backend-model").model_copy(update={"temperature": temperature})
    checks = _by_name(evaluate_upstream(scenario, upstream))
    assert list(checks) == ["request.temperature", "request.top_p", "request.max_tokens"]
    assert checks["request.temperature"].passed is passed
    assert checks["request.top_p"].passed and checks["request.max_tokens"].passed


def test_a_scenario_naming_no_request_field_checks_none_without_dumping_a_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scenario: Scenario = SCENARIOS["text-basic"]
    assert not scenario.expect.request_fields
    upstream = scenario.request_for("backend-model")

    def dumped(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a request was dumped for no field")

    monkeypatch.setattr(type(scenario), "request_for", dumped)
    assert evaluate_upstream(scenario, upstream) == []


def test_upstream_tools_check_treats_empty_defs_as_absent() -> None:
    # Portkey 1.15.2 adds `"$defs": {}` to tool schemas; JSON Schema gives it the meaning of its absence, and the
    # request diff already agrees. A schema that lost its properties or its `required` still fails.
    scenario: Scenario = SCENARIOS["tool-call-single"]
    sent = scenario.request_for("backend-model")

    def tools_check(parameters: dict[str, Any]) -> CheckResult:
        tools = [t.model_copy(update={"parameters": parameters}) for t in sent.tools]
        return _by_name(evaluate_upstream(scenario, sent.model_copy(update={"tools": tools})))["request.tools"]

    params = sent.tools[0].parameters
    assert params["required"] == ["city"]
    assert tools_check({**params, "$defs": {}}).passed
    assert not tools_check({**params, "required": []}).passed
    emptied = tools_check({"type": "object", "properties": {}})
    assert not emptied.passed
    assert emptied.actual[0]["parameters"] == {"type": "object"}


def test_tool_schemas_without_empties_drop_only_empty_keywords() -> None:
    bare = {"type": "object", "properties": {"tz": {"type": "string", "properties": {}}}, "required": [], "$defs": {}}
    assert tools_without_empties([{"name": "t", "parameters": bare}]) == [
        {"name": "t", "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}}
    ]
    kept = {"type": "object", "properties": {"required": {"type": "array"}}, "required": ["required"]}
    assert tools_without_empties([{"name": "t", "parameters": kept}])[0]["parameters"] == kept
