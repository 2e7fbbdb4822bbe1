"""answer.raw_fields: the fields the frontend protocol's own encoder writes for the same answer, left out."""

from __future__ import annotations

import json

from harness import ir
from harness.checks import Subject, run_checks
from harness.checks.raw_fields import RAW_FIELDS, key_paths
from harness.drivers.base import SdkResult
from harness.protocols import registry
from harness.scenarios import load_scenario
from harness.trace.model import Deviation
from tests.conftest import REPO

SCENARIO = load_scenario(REPO / "scenarios" / "text-basic.yaml")


def _deviations(body: bytes) -> list[Deviation]:
    subject = Subject(
        role="translated",
        client="openai",
        backend="anthropic",
        stream=False,
        scenario=SCENARIO,
        result=SdkResult(),
        frontend_status=200,
        frontend_chunks=(body,),
        frontend_response_headers={"content-type": "application/json"},
    )
    return [r for r in run_checks(subject) if isinstance(r, Deviation) and r.rule == RAW_FIELDS]


def _ours() -> dict[str, object]:
    response = ir.Response(
        id="chatcmpl-1",
        model="gpt-4o-mini",
        content=[ir.TextPart(text="Hello.")],
        stop_reason=ir.StopReason(kind="end_turn"),
        usage=ir.Usage(input_tokens=3, output_tokens=2),
    )
    body: dict[str, object] = json.loads(registry.get("openai").encode_response(response).body)
    return body


def test_a_chat_choice_without_logprobs_and_refusal_names_both() -> None:
    body = _ours()
    choices = body["choices"]
    assert isinstance(choices, list)
    choice = {k: v for k, v in choices[0].items() if k != "logprobs"}
    choice["message"] = {k: v for k, v in choice["message"].items() if k != "refusal"}
    (found,) = _deviations(json.dumps({**body, "choices": [choice]}).encode())
    assert found.message == "left out: body: choices[*].logprobs; body: choices[*].message.refusal"


def test_the_encoders_own_answer_leaves_nothing_out() -> None:
    assert _deviations(json.dumps(_ours()).encode()) == []


def test_key_paths_generalise_list_indices() -> None:
    assert key_paths({"a": [{"b": 1}, {"c": None}], "d": {}}) == {"a", "a[*].b", "a[*].c", "d"}
