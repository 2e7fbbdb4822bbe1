"""Stored-response chains in scenario files (`steps`): the whole conversation a stateless client sends, which call a
backend request is, and clear errors for a bad chain."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.scenarios import ScenarioError, load_scenario
from tests.conftest import REPO

CHAIN = REPO / "scenarios" / "previous-response-chain.yaml"


def _user(text: str) -> dict[str, object]:
    return {"role": "user", "content": [{"kind": "text", "text": text}]}


def _chain(**changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "id": "tmp-chain",
        "description": "temporary",
        "steps": [{"request": {"messages": [_user("first")]}, "reply": {"content": [{"kind": "text", "text": "one"}]}}],
        "request": {"messages": [_user("second")]},
        "reply": {"kind": "ok", "content": [{"kind": "text", "text": "two"}]},
    }
    return {**data, **changes}


def _error(tmp_path: Path, data: dict[str, object]) -> str:
    path = tmp_path / "tmp-chain.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}: ")
    return str(info.value)


def test_a_stateless_client_sends_the_whole_conversation_and_each_call_is_told_by_its_last_message() -> None:
    chain = load_scenario(CHAIN)
    whole = chain.request_for("m")
    assert [(m.role, m.content[0].text) for m in whole.messages] == [  # type: ignore[union-attr]
        ("user", "My name is Ada. Remember it."),
        ("assistant", "Nice to meet you, Ada. I will remember."),
        ("user", "What is my name?"),
    ]
    first = chain.request_for("m", step=0)
    assert len(first.messages) == 1 and first.max_tokens == whole.max_tokens
    assert chain.step_of(first) == 0
    assert chain.step_of(whole) == 1
    assert chain.step_of(whole.model_copy(update={"messages": whole.messages[-1:]})) == 1  # the new input alone
    assert [r.content[0].text for r in chain.step_replies()] == [  # type: ignore[union-attr]
        "Nice to meet you, Ada. I will remember.",
        "Your name is Ada.",
    ]


def test_a_valid_chain_loads(tmp_path: Path) -> None:
    path = tmp_path / "tmp-chain.yaml"
    path.write_text(yaml.safe_dump(_chain()), encoding="utf-8")
    assert len(load_scenario(path).steps) == 1


def test_a_step_that_ends_without_a_user_message_is_refused(tmp_path: Path) -> None:
    step = {"request": {"messages": [{"role": "assistant", "content": [{"kind": "text", "text": "x"}]}]}, "reply": {}}
    assert "steps[0]: a step's request ends with a user message" in _error(tmp_path, _chain(steps=[step]))


def test_two_calls_ending_with_the_same_message_are_refused(tmp_path: Path) -> None:
    message = _error(tmp_path, _chain(request={"messages": [_user("first")]}))
    assert "each step's last user message must differ" in message


def test_a_chain_needs_an_ok_reply(tmp_path: Path) -> None:
    reply = {"kind": "error", "error": {"kind": "server", "message": "boom"}}
    assert "a chain (steps) is a generate scenario whose reply is ok" in _error(tmp_path, _chain(reply=reply))


def test_an_earlier_step_that_does_not_complete_is_refused(tmp_path: Path) -> None:
    step = {"request": {"messages": [_user("first")]}, "reply": {"truncate_after": 2}}
    assert "steps[0]: an earlier step's reply completes" in _error(tmp_path, _chain(steps=[step], streaming=["stream"]))


def test_an_unknown_key_in_a_step_names_its_place(tmp_path: Path) -> None:
    step = {"request": {"messages": [_user("first")]}, "reply": {}, "previous_response_id": 1}
    assert "steps[0]" in _error(tmp_path, _chain(steps=[step]))


def test_compaction_without_earlier_calls_is_refused(tmp_path: Path) -> None:
    data = _chain(compact=True)
    del data["steps"]
    assert "compact: compaction needs earlier calls (steps) to compact" in _error(tmp_path, data)
