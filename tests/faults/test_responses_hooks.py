"""The Responses API faults in isolation: each rewrites a real Responses stream the way its bug does (the codec's
decoder then refuses it, which is how the selftest catches it), keeps per-request state apart, and leaves clients
of other protocols alone."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import ir
from harness.checks.wire import frontend_wire
from harness.faults import responses_hooks as rh
from harness.protocols import DecodeError, decode_events, encode_events, registry
from harness.proxy import HookContext, TranslateHooks

CODEC = registry.get("responses")
RESPONSES_TO_OPENAI = HookContext("responses", "openai", stream=True)
OPENAI_TO_ANTHROPIC = HookContext("openai", "anthropic", stream=True)
SIGNATURE = "ZW5jcnlwdGVk"

STREAM: list[ir.StreamEvent] = [
    ir.MessageStart(id="resp_1", model="m"),
    ir.ThinkingStart(index=0),
    ir.ThinkingDelta(index=0, text="Rain?"),
    ir.ThinkingEnd(index=0, signature=SIGNATURE),
    ir.TextStart(index=1),
    ir.TextDelta(index=1, text="Take "),
    ir.TextDelta(index=1, text="one."),
    ir.TextEnd(index=1),
    ir.ToolCallStart(index=2, id="call_1", name="get_weather"),
    ir.ToolCallDelta(index=2, arguments='{"city":'),
    ir.ToolCallDelta(index=2, arguments='"Oslo"}'),
    ir.ToolCallEnd(index=2),
    ir.Done(stop_reason=ir.StopReason(kind="max_tokens"), usage=ir.Usage(input_tokens=5, output_tokens=9)),
]


def _chunks(hooks: TranslateHooks, context: HookContext = RESPONSES_TO_OPENAI) -> list[bytes]:
    """The stream as the proxy writes it, one chunk per IR event, through the bound hooks."""
    bound = hooks.bind(context)
    encoder = CODEC.stream_encoder()
    out = []
    for event in STREAM:
        for passed in bound.on_upstream_event(event):
            data = encoder.encode(passed) + (encoder.close() if passed.kind in ir.TERMINAL_KINDS else b"")
            if data:
                out.append(bound.on_frontend_bytes(data))
    return out


def _payloads(chunks: list[bytes]) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in b"".join(chunks).decode().splitlines() if line.startswith("data: ")]


def test_the_clean_stream_decodes_and_is_numbered_from_zero() -> None:
    chunks = _chunks(TranslateHooks())
    assert [d["sequence_number"] for d in _payloads(chunks)] == list(range(len(_payloads(chunks))))
    done = decode_events(CODEC, chunks)[-1]
    assert isinstance(done, ir.Done)
    assert done.stop_reason == ir.StopReason(kind="max_tokens", raw="max_output_tokens")


BROKEN = {
    "responses-sequence-number-from-one": (rh.SEQUENCE_FROM_ONE, "the first event is numbered 1, not 0"),
    # Numbered on output_item.done only (LiteLLM): the first event says the stream numbers none, then one is.
    "responses-sequence-number-missing": (
        rh.SEQUENCE_MISSING,
        r"response\.output_item\.done\.sequence_number: \d+ in a stream whose first event had none",
    ),
    "responses-sequence-number-gap": (rh.SEQUENCE_GAP, "sequence_number: 2 after 0"),
    "responses-sequence-number-repeated": (rh.SEQUENCE_REPEATED, "sequence_number: 0 after 0"),
    "responses-output-index-mismatch": (rh.OUTPUT_INDEX_MISMATCH, "output_index: 0 names no open output item"),
    "responses-incomplete-as-completed": (
        rh.INCOMPLETE_AS_COMPLETED,
        "response.completed carries a response whose status is 'incomplete'",
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_wire_fault_makes_the_stream_one_the_decoder_refuses(name: str) -> None:
    hooks, message = BROKEN[name]
    with pytest.raises(DecodeError, match=message):
        decode_events(CODEC, _chunks(hooks))


def test_fresh_item_ids_decode_by_output_index_but_fail_frontend_wire() -> None:
    # The decoder ties events by output_index (Copilot rotates ids); the proxy's rotation is still a defect.
    chunks = _chunks(rh.ITEM_ID_MISMATCH)
    assert decode_events(CODEC, chunks)[-1].kind == "done"
    check = frontend_wire("responses", chunks)
    assert not check.passed and "responses.ids_kept" in str(check.actual)
    assert frontend_wire("responses", _chunks(TranslateHooks())).passed


def test_litellm_keeps_sequence_number_on_output_item_done_only() -> None:
    kept = [d["type"] for d in _payloads(_chunks(rh.SEQUENCE_MISSING)) if "sequence_number" in d]
    assert set(kept) == {"response.output_item.done"}


def test_repeated_numbers_follow_the_upstream_events_not_the_events_written() -> None:
    numbers = [d["sequence_number"] for d in _payloads(_chunks(rh.SEQUENCE_REPEATED))]
    assert numbers[:2] == [0, 0]  # created and in_progress, both written for message_start
    assert numbers == sorted(numbers) and len(set(numbers)) < len(numbers)


def test_a_missing_completed_is_a_stream_without_its_terminal_event() -> None:
    chunks = _chunks(rh.COMPLETED_MISSING)
    # max_tokens ends with response.incomplete, which this fault leaves; a stop ends with response.completed.
    assert decode_events(CODEC, chunks)[-1].kind == "done"
    stop = STREAM[-1].model_copy(update={"stop_reason": ir.StopReason(kind="end_turn")})
    bound = rh.COMPLETED_MISSING.bind(RESPONSES_TO_OPENAI)
    body = bound.on_frontend_bytes(encode_events(CODEC, [*STREAM[:-1], stop]))
    assert b"response.completed" not in body
    last = decode_events(CODEC, [body])[-1]
    assert isinstance(last, ir.ErrorEvent) and last.error.kind == ir.ErrorKind.MALFORMED_STREAM


def test_a_cut_whole_response_is_reported_completed() -> None:
    bound = rh.INCOMPLETE_AS_COMPLETED.bind(HookContext("responses", "openai", stream=False))
    cut = ir.Response(content=[ir.TextPart(text="One, two")], stop_reason=ir.StopReason(kind="max_tokens"))
    body = json.loads(CODEC.encode_response(bound.on_upstream_response(cut)).body)
    assert (body["status"], body["incomplete_details"]) == ("completed", None)


def test_reasoning_items_are_dropped_both_ways() -> None:
    bound = rh.REASONING_ITEMS_DROPPED.bind(RESPONSES_TO_OPENAI)
    thinking = ir.ThinkingPart(text="Rain?", signature=SIGNATURE)
    call = ir.ToolCallPart(id="call_1", name="get_weather", arguments={"city": "Oslo"})
    request = ir.Request(
        model="m",
        messages=[
            ir.Message(role="user", content=[ir.TextPart(text="Umbrella?")]),
            ir.Message(role="assistant", content=[thinking, call]),
            ir.Message(role="assistant", content=[ir.RedactedThinkingPart(data=SIGNATURE)]),
        ],
    )
    sent = bound.on_upstream_request(request)
    assert [m.content for m in sent.messages] == [request.messages[0].content, [call]]
    answer = ir.Response(content=[thinking, ir.TextPart(text="Yes.")])
    assert bound.on_upstream_response(answer).content == [ir.TextPart(text="Yes.")]
    assert [e.kind for e in STREAM if bound.on_upstream_event(e)][:3] == ["message_start", "text_start", "text_delta"]


ALL = [*(hooks for hooks, _ in BROKEN.values()), rh.COMPLETED_MISSING, rh.REASONING_ITEMS_DROPPED]


@pytest.mark.parametrize("hooks", ALL)
def test_clients_of_other_protocols_are_left_alone(hooks: TranslateHooks) -> None:
    assert hooks.bind(OPENAI_TO_ANTHROPIC) == TranslateHooks()


def test_interleaved_requests_keep_their_own_numbering() -> None:
    a, b = (rh.SEQUENCE_REPEATED.bind(RESPONSES_TO_OPENAI) for _ in range(2))
    encoder = CODEC.stream_encoder()
    first, second = encoder.encode(STREAM[0]), encoder.encode(STREAM[1])
    written = [a.on_frontend_bytes(first), b.on_frontend_bytes(first), a.on_frontend_bytes(second)]
    written.append(b.on_frontend_bytes(second))
    assert [[d["sequence_number"] for d in _payloads([w])] for w in written] == [[0, 0], [0, 0], [1, 1], [1, 1]]
