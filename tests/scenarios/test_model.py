"""The scenario model's conveniences: request_for, derived tool-argument text, error defaults."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness import ir
from harness.scenarios import DEFAULT_MODEL, MidstreamError, ReplyError, ReplyOk, Scenario

BASE = {
    "id": "x",
    "description": "d",
    "request": {"messages": [{"role": "user", "content": [{"kind": "text", "text": "hi"}]}], "temperature": 0.5},
    "reply": {"kind": "ok"},
}


def test_request_for_gives_a_plain_ir_request_with_model_and_stream() -> None:
    scenario = Scenario.model_validate(BASE)
    assert scenario.request.model == DEFAULT_MODEL
    request = scenario.request_for("gpt-test", stream=True)
    assert type(request) is ir.Request
    assert (request.model, request.stream, request.temperature) == ("gpt-test", True, 0.5)
    assert request.messages == [ir.Message(role="user", content=[ir.TextPart(text="hi")])]
    assert scenario.request_for().model == DEFAULT_MODEL


def test_request_for_keeps_the_json_schema_alias() -> None:
    data = {**BASE, "request": {"response_format": {"kind": "json_schema", "schema": {"type": "object"}}}}
    request = Scenario.model_validate(data).request_for("m")
    assert isinstance(request.response_format, ir.ResponseFormatJsonSchema)
    assert request.response_format.schema_ == {"type": "object"}


def test_arguments_raw_is_derived_from_the_arguments() -> None:
    reply = ReplyOk.model_validate(
        {"content": [{"kind": "tool_call", "id": "c", "name": "f", "arguments": {"city": "São Paulo"}}]}
    )
    call = reply.content[0]
    assert isinstance(call, ir.ToolCallPart)
    assert call.arguments_raw == '{"city":"São Paulo"}'


def test_explicit_arguments_raw_wins() -> None:
    reply = ReplyOk.model_validate(
        {"content": [{"kind": "tool_call", "id": "c", "name": "f", "arguments": {"a": 1}, "arguments_raw": '{"a": 1}'}]}
    )
    assert reply.content[0].arguments_raw == '{"a": 1}'  # type: ignore[union-attr]


def test_errors_get_retryable_from_their_kind_unless_written() -> None:
    assert ReplyError.model_validate({"error": {"kind": "throttled"}}).error.retryable is True
    assert ReplyError.model_validate({"error": {"kind": "auth"}}).error.retryable is False
    written = MidstreamError.model_validate({"after_events": 2, "error": {"kind": "server", "retryable": False}})
    assert written.error.retryable is False


def test_reply_cannot_both_fail_midstream_and_truncate() -> None:
    with pytest.raises(ValidationError, match="either midstream_error or truncate_after"):
        ReplyOk.model_validate(
            {"truncate_after": 2, "midstream_error": {"after_events": 2, "error": {"kind": "server"}}}
        )


def test_streaming_mode_listed_twice_is_rejected() -> None:
    with pytest.raises(ValidationError, match="streaming lists a mode twice"):
        Scenario.model_validate({**BASE, "streaming": ["stream", "stream"]})


def test_text_matches_schema_needs_a_schema() -> None:
    with pytest.raises(ValidationError, match="needs a json_schema response_format"):
        Scenario.model_validate({**BASE, "expect": {"text_matches_schema": True}})


def test_scenarios_are_frozen() -> None:
    scenario = Scenario.model_validate(BASE)
    with pytest.raises(ValidationError):
        scenario.id = "y"  # type: ignore[misc]
