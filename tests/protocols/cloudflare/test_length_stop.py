"""Workers AI's native output has no finish reason, so a cut answer cannot say it was cut: max-tokens-length is
unsupported with the native route on either side (the OpenAI-compatible route, `cloudflare-openai`, says it)."""

from __future__ import annotations

import json

from harness import ir
from harness.ir import Capability
from harness.protocols import encode_events, registry
from tests.protocols.cloudflare.support import CODEC, decode

CUT = ir.Response(
    content=[ir.TextPart(text="One, two, three, four")],
    stop_reason=ir.StopReason(kind="max_tokens"),
    usage=ir.Usage(input_tokens=16, output_tokens=5),
)


def test_native_output_has_no_finish_reason_so_a_length_stop_is_not_carried() -> None:
    # Cloudflare's documented sync output (e.g. .../models/llama-3.1-8b-instruct-fast/sync-output.json) and
    # `AiTextGenerationOutput` in workers-types: `response`, `tool_calls`, `usage`, nothing that says why it ended.
    body = json.loads(CODEC.encode_response(CUT).body)
    assert set(body["result"]) == {"response", "tool_calls", "usage"}
    assert CODEC.decode_response(CODEC.encode_response(CUT).body).stop_reason == ir.StopReason(kind="end_turn")
    events = decode(encode_events(CODEC, [
        ir.MessageStart(), ir.TextStart(index=0), ir.TextDelta(index=0, text="One"), ir.TextEnd(index=0),
        ir.Done(stop_reason=ir.StopReason(kind="max_tokens"), usage=CUT.usage),
    ]))  # fmt: skip
    assert isinstance(events[-1], ir.Done) and events[-1].stop_reason == ir.StopReason(kind="end_turn")
    assert "StopReason.kind:max_tokens" in CODEC.losses
    assert Capability.STOP_MAX_TOKENS not in CODEC.capabilities
    assert Capability.STOP_MAX_TOKENS in registry.get("cloudflare-openai").capabilities
