"""The kit's guard for client-executed tool calls (`ToolCallPart.call_type`): a codec without
`Capability.CLIENT_TOOL_CALLS` refuses one, streamed or not, rather than send it as a function call."""

from __future__ import annotations

import pytest

from harness import ir
from harness.ir import Capability
from harness.protocols import decode_events, encode_events, registry

PATCH = ir.ToolCallPart(
    id="call_1",
    name="apply_patch",
    arguments={"operation": {"type": "delete_file", "path": "a.md"}},
    arguments_raw='{"operation": {"type": "delete_file", "path": "a.md"}}',
    call_type="apply_patch",
)
ANSWER = ir.Response(id="resp_1", model="m", content=[PATCH], stop_reason=ir.StopReason(kind="tool_use"))
EVENTS: list[ir.StreamEvent] = [
    ir.MessageStart(id="resp_1", model="m"),
    ir.ToolCallStart(index=0, id=PATCH.id, name=PATCH.name, call_type=PATCH.call_type),
    ir.ToolCallDelta(index=0, arguments=PATCH.arguments_raw),
    ir.ToolCallEnd(index=0),
    ir.Done(stop_reason=ir.StopReason(kind="tool_use")),
]
WITHOUT = sorted(n for n in registry.names() if Capability.CLIENT_TOOL_CALLS not in registry.get(n).capabilities)


def test_only_responses_carries_client_calls() -> None:
    assert set(registry.names()) - set(WITHOUT) == {"responses"}


@pytest.mark.parametrize("name", WITHOUT)
def test_a_codec_without_the_capability_refuses_a_client_call(name: str) -> None:
    codec = registry.get(name)
    with pytest.raises(ValueError, match="no form for a 'apply_patch' tool call"):
        codec.encode_response(ANSWER)
    with pytest.raises(ValueError, match="no form for a 'apply_patch' tool call"):
        encode_events(codec, EVENTS)
    plain = PATCH.model_copy(update={"call_type": None})  # the same call as a function call is sent
    assert codec.encode_response(ANSWER.model_copy(update={"content": [plain]})).status == 200


def test_responses_sends_a_client_call_as_its_item() -> None:
    codec = registry.get("responses")
    events = decode_events(codec, [encode_events(codec, EVENTS)])
    start = next(e for e in events if isinstance(e, ir.ToolCallStart))
    assert (start.id, start.name, start.call_type) == ("call_1", "apply_patch", "apply_patch")
    assert codec.decode_response(codec.encode_response(ANSWER).body).content == [PATCH]
