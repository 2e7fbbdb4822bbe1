"""A refusal through translate mode: Responses to Responses, the upstream's refusal part reached the client as
plain `output_text` with status `completed`, which its SDK reads as end_turn. The refusal now stays a refusal
part, streamed and not."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from harness import ir
from harness.protocols import decode_events, registry
from harness.stream import accumulate
from tests.proxy.client import proxy
from tests.proxy.upstreams import ScriptedUpstream, config
from tests.strategies import events_for

pytestmark = pytest.mark.anyio

REFUSAL = ir.Response(
    id="resp_1",
    model="up-model",
    content=[ir.TextPart(text="I can't help with that.")],
    stop_reason=ir.StopReason(kind="refusal"),
    usage=ir.Usage(input_tokens=9, output_tokens=6),
)


@dataclass
class RefusingUpstream(ScriptedUpstream):
    """Streams its reply's text as a refusal block, as OpenAI types a refusal from its first event."""

    def stream_chunks(self, reply: ir.Response, request: ir.Request | None = None) -> list[bytes]:
        encoder = self.codec.stream_encoder(request=request)
        events = [ir.TextStart(index=e.index, refusal=True) if isinstance(e, ir.TextStart) else e
                  for e in events_for(reply, chunk=4)]  # fmt: skip
        chunks = [encoder.encode(e) for e in events] + [encoder.close()]
        return [c for c in chunks if c]


@pytest.mark.parametrize("stream", [True, False])
async def test_a_refusal_through_responses_to_responses_stays_a_refusal(stream: bool) -> None:
    upstream = "responses"
    frontend = registry.get("responses")
    request = ir.Request(
        model="front-model", messages=[ir.Message(role="user", content=[ir.TextPart(text="Help me.")])], stream=stream
    )
    wire = frontend.encode_request(request)
    up = RefusingUpstream(upstream, REFUSAL)
    async with proxy(config(("front-model", "translate", upstream, "up-model")), up.transport()) as p:
        response = await p.client.post(wire.path, params=wire.query, headers=wire.headers, content=wire.body)
    assert response.status_code == 200
    if stream:
        events = decode_events(frontend, [response.content])
        assert ir.TextStart(index=0, refusal=True) in events
        answer = accumulate(events).response
        assert b"response.refusal.delta" in response.content and b"output_text" not in response.content
    else:
        answer = frontend.decode_response(response.content)
        assert b'"type":"refusal"' in response.content
    assert answer.stop_reason == ir.StopReason(kind="refusal", raw="completed")
    assert [p.text for p in answer.content if isinstance(p, ir.TextPart)] == ["I can't help with that."]
