"""The Responses reference backend answers as api.openai.com does (docs/shape.md measures it against the
corpus): OpenAI's id forms, times, service tiers, message phases, `obfuscation` and headers."""

from __future__ import annotations

import json
import re
from typing import Any

from harness import ir
from harness.protocols.reference import body_reply, error_reply, stream_reply
from harness.wire.http import HttpRequest
from tests import strategies
from tests.protocols.responses.support import CODEC, sse_payloads

REQUEST = ir.Request(model="gpt-5.5", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])])
CALL = ir.ToolCallPart(id="toolu_1", name="multiply", arguments={"a": 2}, arguments_raw='{"a":2}')
ANSWER = ir.Response(
    id="anything",
    model="gpt-5.5-2026-04-23",
    content=[ir.TextPart(text="Let me multiply."), CALL],
    stop_reason=ir.StopReason(kind="tool_use"),
    usage=ir.Usage(input_tokens=20, output_tokens=7),
)
RESPONSE_ID = re.compile(r"resp_[0-9a-f]{16}(?P<time>[0-9a-f]{10})[0-9a-f]{4}81[0-9a-f]{18}")


def _stream(response: ir.Response = ANSWER, request: ir.Request = REQUEST) -> list[dict[str, Any]]:
    reply = stream_reply(CODEC, request, strategies.events_for(response, chunk=3), seed="s")
    return [d for _, d in sse_payloads(b"".join(reply.chunks))]


def test_ids_have_openais_forms_and_items_share_the_responses_prefix() -> None:
    data = _stream()
    created = data[0]["response"]
    found = RESPONSE_ID.fullmatch(str(created["id"]))
    assert found is not None and int(found["time"], 16) == created["created_at"]
    items = [d["item"] for d in data if d["type"] == "response.output_item.added"]
    assert [i["id"][:3] for i in items] == ["msg", "fc_"]
    assert all(i["id"].split("_", 1)[1][:26] == created["id"][5:31] for i in items)
    assert re.fullmatch(r"call_[0-9A-Za-z]{24}", items[1]["call_id"])


def test_service_tier_and_times_say_asked_while_in_progress_and_served_when_done() -> None:
    data = _stream()
    created, completed = data[0]["response"], data[-1]["response"]
    assert (created["service_tier"], completed["service_tier"]) == ("auto", "default")
    assert created["completed_at"] is None and completed["completed_at"] > completed["created_at"]
    assert created["moderation"] is None and created["prompt_cache_retention"] == "24h"


def test_a_message_before_a_tool_call_is_commentary_the_last_one_the_final_answer() -> None:
    added = [d["item"] for d in _stream() if d["type"] == "response.output_item.added"]
    assert added[0]["phase"] == "commentary" and "phase" not in added[1]
    answer = ANSWER.model_copy(update={"content": [ir.TextPart(text="Done.")], "stop_reason": None})
    final = _stream(answer)[-1]["response"]
    assert final["output"][0]["phase"] == "final_answer"


def test_deltas_carry_obfuscation_padding_them_to_sixteen_characters() -> None:
    deltas = [d for d in _stream() if str(d["type"]).endswith(".delta")]
    assert {str(d["type"]) for d in deltas} == {
        "response.output_text.delta",
        "response.function_call_arguments.delta",
    }
    assert all(len(str(d["delta"])) + len(str(d["obfuscation"])) == 16 for d in deltas)
    body = b'{"model":"m","input":"hi","stream":true,"stream_options":{"include_obfuscation":false}}'
    request = CODEC.decode_request(HttpRequest("POST", "/v1/responses", body=body))
    assert not any("obfuscation" in d for d in _stream(request=request))


def test_a_whole_body_adds_billing_and_the_headers_are_openais() -> None:
    out = body_reply(CODEC, REQUEST, ANSWER, seed="s")
    body = json.loads(out.body)
    assert body["billing"] == {"payer": "developer"} and body["service_tier"] == "default"
    assert RESPONSE_ID.fullmatch(body["id"])
    assert re.fullmatch(r"req_[0-9a-f]{32}", out.headers["x-request-id"])
    assert out.headers["openai-version"] == "2020-10-01" and out.headers["openai-processing-ms"].isdigit()
    error = error_reply(CODEC, ir.IRError.of(ir.ErrorKind.NOT_FOUND, "no such model"), seed="s")
    assert error.status == 404 and error.headers["x-request-id"].startswith("req_")
    assert json.loads(error.body)["error"]["message"] == "no such model"
