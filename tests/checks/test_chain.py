"""The checks of a stored-response chain, each verdict that can fail (`harness.checks.chain`)."""

from __future__ import annotations

import dataclasses
import json

from harness import ir
from harness.checks import Subject, run_checks, spec_for
from harness.checks.chain import HISTORY, UNKNOWN_ID, turns
from harness.drivers.base import ChainCall, SdkResult
from harness.scenarios import Scenario, load_scenario
from harness.trace.model import Check
from tests.conftest import REPO

CHAIN = load_scenario(REPO / "scenarios" / "previous-response-chain.yaml")
UNKNOWN = "resp_" + "0" * 50


def _subject(
    upstream: ir.Request | None,
    *,
    backend: str = "anthropic",
    body: bytes = b"{}",
    chain: list[ChainCall] | None = None,
) -> Subject:
    result = SdkResult(chain=chain or [])
    return Subject(
        role="translated",
        client="responses",
        backend=backend,
        stream=False,
        scenario=CHAIN,
        result=result,
        upstream_request=upstream,
        upstream_body=body,
    )


def _named(subject: Subject, name: str) -> list[Check]:
    return [r for r in run_checks(subject) if isinstance(r, Check) and r.name == name]


def _new_input_only(scenario: Scenario) -> ir.Request:
    whole = scenario.request_for("claude-sonnet-4-5")
    return whole.model_copy(update={"messages": whole.messages[-1:]})


def test_the_whole_conversation_upstream_passes() -> None:
    (result,) = _named(_subject(CHAIN.request_for("claude-sonnet-4-5")), HISTORY)
    assert result.passed, result.actual


def test_the_new_input_alone_upstream_is_a_request_side_proxy_bug_naming_the_missing_turns() -> None:
    (result,) = _named(_subject(_new_input_only(CHAIN)), HISTORY)
    assert not result.passed
    assert result.actual == {
        "sent": ["user: What is my name?"],
        "missing": ["user: My name is Ada. Remember it.", "assistant: Nice to meet you, Ada. I will remember."],
    }
    spec = spec_for(HISTORY)
    assert spec is not None and spec.upstream


def test_a_rebuilt_answer_that_differs_from_the_stored_one_fails() -> None:
    whole = CHAIN.request_for("m")
    changed = [*whole.messages[:1], ir.Message(role="assistant", content=[ir.TextPart(text="Hi.")]), whole.messages[2]]
    (result,) = _named(_subject(whole.model_copy(update={"messages": changed})), HISTORY)
    assert not result.passed
    assert result.actual["missing"] == ["assistant: Nice to meet you, Ada. I will remember."]


def test_a_continuation_sent_to_a_backend_that_stores_responses_is_not_held_to_the_whole_conversation() -> None:
    body = json.dumps({"previous_response_id": "resp_1", "input": "What is my name?"}).encode()
    subject = _subject(_new_input_only(CHAIN), backend="responses", body=body)
    assert _named(subject, HISTORY) == []
    # The same request without the continuation is held to it.
    assert not _named(_subject(_new_input_only(CHAIN), backend="responses"), HISTORY)[0].passed


def test_an_unknown_id_answered_is_a_proxy_bug() -> None:
    answered = ChainCall(previous_response_id=UNKNOWN, unknown=True, response_id="resp_x", text="Nice to meet you")
    (result,) = _named(_subject(None, chain=[answered]), UNKNOWN_ID)
    assert not result.passed
    assert "answered (response resp_x" in str(result.actual)


def test_an_unknown_id_refused_passes() -> None:
    error = ir.IRError.of(ir.ErrorKind.INVALID_REQUEST, "Previous response with id 'x' not found.", status=400)
    refused = ChainCall(previous_response_id=UNKNOWN, unknown=True, error=error)
    (result,) = _named(_subject(None, chain=[refused]), UNKNOWN_ID)
    assert result.passed, result.actual
    assert "HTTP 400" in str(result.actual)


def test_a_scenario_of_one_call_has_no_chain_checks() -> None:
    plain = load_scenario(REPO / "scenarios" / "multi-turn.yaml")
    subject = _subject(plain.request_for("m"))
    subject = dataclasses.replace(subject, scenario=plain)
    assert _named(subject, HISTORY) == [] and _named(subject, UNKNOWN_ID) == []


def test_turns_reads_text_and_tool_calls_whatever_the_part_layout() -> None:
    call = ir.ToolCallPart(id="c1", name="f", arguments={"a": 1}, arguments_raw='{"a":1}')
    split = ir.Message(role="assistant", content=[ir.TextPart(text="a"), ir.TextPart(text="b"), call])
    assert turns([split]) == [("assistant", "abcall f({'a': 1})")]
