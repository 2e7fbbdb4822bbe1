"""The replay of a stored-response chain: each call answered with its own recording, and a backend that stores
responses answering a continuation only of an id it issued (OpenAI's 400 `previous_response_not_found` else)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness.protocols import HttpRequest, registry
from harness.record import Replayer
from harness.scenarios import load_scenarios
from harness.scenarios.resolve import scenario_path
from tests.conftest import REPO

SCENARIOS = load_scenarios(REPO / "scenarios")
CHAIN = next(s for s in SCENARIOS if s.id == "previous-response-chain")


def _request(backend: str, step: int, stream: bool, **fields: object) -> HttpRequest:
    codec = registry.get(backend)
    http = codec.encode_request(CHAIN.request_for(registry.facts(backend).upstream_model, stream=stream, step=step))
    if fields:  # a continuation: only the new input, and the id it continues
        body = {**json.loads(http.body), **fields}
        http = dataclasses.replace(http, body=json.dumps(body).encode())
    return dataclasses.replace(http, path=scenario_path(CHAIN.id) + http.path)


def _text(backend: str, body: bytes) -> str:
    response = registry.get(backend).decode_response(body)
    return "".join(getattr(p, "text", "") for p in response.content)


@pytest.mark.parametrize("backend", ["anthropic", "gemini", "openai"])
def test_each_call_of_a_stateless_backend_gets_its_own_answer(backend: str) -> None:
    replayer = Replayer(REPO / "cassettes", SCENARIOS)
    first = replayer.reply(backend, _request(backend, 0, False))
    second = replayer.reply(backend, _request(backend, 1, False))
    assert _text(backend, first.body) == "Nice to meet you, Ada. I will remember."
    assert _text(backend, second.body) == "Your name is Ada."


@pytest.mark.parametrize("stream", [False, True])
def test_a_continuation_of_an_issued_id_is_answered_and_of_an_unknown_id_refused_as_openai_does(stream: bool) -> None:
    replayer = Replayer(REPO / "cassettes", SCENARIOS)
    unknown = "resp_" + "0" * 50
    new_input = {"input": [{"role": "user", "content": "What is my name?"}]}
    refused = replayer.reply("responses", _request("responses", 1, stream, previous_response_id=unknown, **new_input))
    assert refused.status == 400
    assert json.loads(refused.body) == {
        "error": {
            "message": f"Previous response with id '{unknown}' not found.",
            "type": "invalid_request_error",
            "param": "previous_response_id",
            "code": "previous_response_not_found",
        }
    }
    first = replayer.reply("responses", _request("responses", 0, stream))
    (issued,) = registry.facts("responses").stored_responses.issued(first.body)  # type: ignore[union-attr]
    assert replayer.issued == {issued}
    second = replayer.reply("responses", _request("responses", 1, stream, previous_response_id=issued, **new_input))
    assert second.status == 200
    assert b'"text":"Your name is Ada."' in second.body.replace(b'": "', b'":"')  # whole, or in response.completed


def test_a_backend_that_stores_nothing_ignores_a_continuation_field() -> None:
    replayer = Replayer(REPO / "cassettes", SCENARIOS)
    reply = replayer.reply("openai", _request("openai", 1, False))
    assert reply.status == 200 and replayer.issued == set()


def test_a_backend_that_compacts_answers_compaction_itself_and_its_decoder_expands_the_item() -> None:
    replayer = Replayer(REPO / "cassettes", SCENARIOS)
    held = [{"role": "user", "content": "My favourite colour is teal."}, {"role": "assistant", "content": "Noted."}]
    body = json.dumps({"model": "gpt-4o-mini", "input": held}).encode()
    path = scenario_path("compaction-continued") + "/v1/responses/compact"
    answer = replayer.reply("responses", HttpRequest("POST", path, {}, {"content-type": "application/json"}, body))
    assert answer.status == 200 and answer.scenario == ""  # no call of the run's scenario
    (item,) = json.loads(answer.body)["output"]
    assert item["type"] == "compaction"
    later = json.dumps({"model": "gpt-4o-mini", "input": [item, {"role": "user", "content": "What colour?"}]})
    decoded = registry.get("responses").decode_request(HttpRequest("POST", "/v1/responses", {}, {}, later.encode()))
    assert [m.role for m in decoded.messages] == ["user", "assistant", "user"]
