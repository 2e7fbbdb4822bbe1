"""Compaction as the translating proxy does it (`harness.protocols.responses.compaction`): lossless, and read back."""

from __future__ import annotations

import json

from harness.protocols import HttpRequest, registry
from harness.protocols.responses.compaction import COMPACT_PATH, SEALED, compact, expand, seal

CONVERSATION = [
    {"type": "message", "role": "user", "content": "Remember: slate."},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "OK."}]},
]


def _decode(items: list[object]) -> object:
    body = json.dumps({"model": "m", "input": items}).encode()
    return registry.get("responses").decode_request(HttpRequest("POST", "/v1/responses", {}, {}, body))


def test_a_compaction_item_decodes_as_the_conversation_it_carries() -> None:
    sealed = {"type": "compaction", "id": "cmp_1", "encrypted_content": seal(CONVERSATION)}
    follow = {"type": "message", "role": "user", "content": "Which word?"}
    assert _decode([sealed, follow]) == _decode([*CONVERSATION, follow])


def test_a_compaction_item_of_another_server_stays_as_it_is() -> None:
    foreign = {"type": "compaction", "id": "cmp_x", "encrypted_content": "gAAAAB-opaque"}
    tampered = {"type": "compaction", "encrypted_content": SEALED + "not base64!"}
    assert expand([foreign, tampered]) == [foreign, tampered]


def test_compact_answers_one_compaction_item_carrying_instructions_and_input() -> None:
    body = json.dumps({"model": "m", "instructions": "Be terse.", "input": CONVERSATION}).encode()
    answer = compact(HttpRequest("POST", COMPACT_PATH, {}, {}, body))
    out = json.loads(answer.body)
    assert answer.status == 200 and out["object"] == "response.compaction"
    [item] = out["output"]
    assert expand([item]) == [{"type": "message", "role": "developer", "content": "Be terse."}, *CONVERSATION]
    assert out["usage"]["total_tokens"] == out["usage"]["input_tokens"] > 0


def test_compact_without_model_is_a_400_naming_it() -> None:
    answer = compact(HttpRequest("POST", COMPACT_PATH, {}, {}, b'{"input": "x"}'))
    assert answer.status == 400 and json.loads(answer.body)["error"]["param"] == "model"
