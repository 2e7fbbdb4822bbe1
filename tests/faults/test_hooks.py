"""Fault hooks in isolation: per-request state never leaks between requests (even interleaved), protocol-specific
faults leave other protocols alone, and the byte-level edits rewrite only what they mean to."""

from __future__ import annotations

from harness import ir
from harness.faults import hooks
from harness.faults.wire_edits import DROP, edit_sse
from harness.proxy import HookContext, TranslateHooks

OPENAI_TO_ANTHROPIC = HookContext("openai", "anthropic", stream=True, upstream_key="PLANTED-TEST-KEY-k1")
ANTHROPIC_TO_GEMINI = HookContext("anthropic", "gemini", stream=True)


def _run(bound: TranslateHooks, events: list[ir.StreamEvent]) -> list[ir.StreamEvent]:
    return [out for event in events for out in bound.on_upstream_event(event)]


def _call(index: int, call_id: str, arguments: list[str]) -> list[ir.StreamEvent]:
    fragments: list[ir.StreamEvent] = [ir.ToolCallDelta(index=index, arguments=a) for a in arguments]
    return [ir.ToolCallStart(index=index, id=call_id, name="get_weather"), *fragments, ir.ToolCallEnd(index=index)]


def test_second_parallel_call_is_dropped_per_request() -> None:
    first, second = _call(0, "a", ['{"city":"Paris"}']), _call(1, "b", ['{"city":"Rome"}'])
    bound = hooks.SECOND_PARALLEL_CALL_DROPPED.bind(OPENAI_TO_ANTHROPIC)
    assert _run(bound, [*first, *second]) == first
    # A new request starts counting again: its only call is its first.
    assert _run(hooks.SECOND_PARALLEL_CALL_DROPPED.bind(OPENAI_TO_ANTHROPIC), second) == second


def test_interleaved_requests_keep_their_own_buffered_text() -> None:
    a = hooks.TEXT_BUFFERED.bind(OPENAI_TO_ANTHROPIC)
    b = hooks.TEXT_BUFFERED.bind(OPENAI_TO_ANTHROPIC)
    out_a: list[ir.StreamEvent] = []
    out_b: list[ir.StreamEvent] = []
    for text_a, text_b in (("one ", "uno "), ("two", "dos")):
        out_a += a.on_upstream_event(ir.TextDelta(index=0, text=text_a))
        out_b += b.on_upstream_event(ir.TextDelta(index=0, text=text_b))
    assert out_a == out_b == []
    assert list(a.on_upstream_event(ir.TextEnd(index=0))) == [
        ir.TextDelta(index=0, text="one two"),
        ir.TextEnd(index=0),
    ]
    assert list(b.on_upstream_event(ir.TextEnd(index=0))) == [
        ir.TextDelta(index=0, text="uno dos"),
        ir.TextEnd(index=0),
    ]


def test_fragments_are_released_at_the_end_with_neighbours_swapped() -> None:
    bound = hooks.TOOL_FRAGMENTS_REORDERED.bind(OPENAI_TO_ANTHROPIC)
    out = _run(bound, _call(0, "a", ['{"ci', 'ty":', '"Pa', 'ris"}', ""]))
    assert [e.arguments for e in out if isinstance(e, ir.ToolCallDelta)] == ['ty":', '{"ci', 'ris"}', '"Pa', ""]
    assert isinstance(out[-1], ir.ToolCallEnd)


def test_whole_arguments_arriving_with_the_name_are_lost_but_fragments_survive() -> None:
    whole = _call(0, "a", ['{"city":"Paris"}'])
    fragmented = _call(0, "a", ['{"city":', '"Paris"}'])
    assert _run(hooks.ARGUMENTS_LOST_WITH_NAME.bind(ANTHROPIC_TO_GEMINI), whole) == [whole[0], whole[2]]
    assert _run(hooks.ARGUMENTS_LOST_WITH_NAME.bind(ANTHROPIC_TO_GEMINI), fragmented) == fragmented


def test_midstream_error_becomes_a_stop_after_closing_open_blocks() -> None:
    bound = hooks.MIDSTREAM_ERROR_AS_STOP.bind(OPENAI_TO_ANTHROPIC)
    error = ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded"))
    out = _run(bound, [ir.MessageStart(), ir.TextStart(index=0), ir.TextDelta(index=0, text="Hi"), error])
    assert out[-2:] == [ir.TextEnd(index=0), ir.Done(stop_reason=ir.StopReason(kind="end_turn", raw="stop"))]


def test_protocol_specific_faults_leave_other_protocols_alone() -> None:
    assert hooks.DONE_APPENDED_TO_ANTHROPIC.bind(ANTHROPIC_TO_GEMINI).on_frontend_end() == b"data: [DONE]\n\n"
    assert hooks.DONE_APPENDED_TO_ANTHROPIC.bind(OPENAI_TO_ANTHROPIC).on_frontend_end() == b""
    result = ir.ToolResultPart(tool_call_id="call_1", name="get_weather", content=[ir.TextPart(text="18C")])
    request = ir.Request(model="m", messages=[ir.Message(role="tool", content=[result])])
    renamed = hooks.GEMINI_FUNCTION_RESPONSE_NAME.bind(ANTHROPIC_TO_GEMINI).on_upstream_request(request)
    part = renamed.messages[0].content[0]
    assert isinstance(part, ir.ToolResultPart) and part.name == "function"
    assert hooks.GEMINI_FUNCTION_RESPONSE_NAME.bind(OPENAI_TO_ANTHROPIC).on_upstream_request(request) == request


def test_key_echo_uses_the_key_the_proxy_holds_and_nothing_without_one() -> None:
    error = ir.IRError.of(ir.ErrorKind.AUTH, "invalid x-api-key", status=401)
    echoed = hooks.UPSTREAM_KEY_ECHOED.bind(OPENAI_TO_ANTHROPIC).on_error(error)
    assert echoed.message == "invalid x-api-key (request headers: {'authorization': 'Bearer PLANTED-TEST-KEY-k1'})"
    assert hooks.UPSTREAM_KEY_ECHOED.bind(ANTHROPIC_TO_GEMINI).on_error(error) == error


def test_rate_limit_becomes_a_500_without_retry_after() -> None:
    error = ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down", status=429, retry_after=7)
    mapped = hooks.RATE_LIMIT_AS_SERVER_ERROR.on_error(error)
    assert (mapped.kind, mapped.status, mapped.retry_after) == (ir.ErrorKind.SERVER, 500, None)


def test_split_character_is_corrupted_only_when_split() -> None:
    data = "ça 🚀".encode()
    assert hooks.MULTIBYTE_SPLIT_CORRUPTED.on_upstream_bytes(data) == data
    assert hooks.MULTIBYTE_SPLIT_CORRUPTED.on_upstream_bytes(data[:5]) == "ça \ufffd".encode()


def test_sse_edits_rewrite_or_drop_json_events_and_keep_the_rest() -> None:
    chunk = b'event: message_start\ndata: {"usage":{"input_tokens":9}}\n\ndata: {"choices":[]}\n\ndata: [DONE]\n\n'

    def edit(name: str, data: object) -> object:
        if name == "message_start":
            return {"usage": {"input_tokens": 0}}
        return DROP

    assert edit_sse(chunk, edit) == b'event: message_start\ndata: {"usage":{"input_tokens":0}}\n\ndata: [DONE]\n\n'


def test_zeroed_usage_leaves_only_output_tokens_in_message_delta() -> None:
    bound = hooks.ZEROED_START_USAGE.bind(HookContext("anthropic", "openai", stream=True))
    start = b'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":14}}}\n\n'
    delta = b'event: message_delta\ndata: {"type":"message_delta","usage":{"input_tokens":14,"output_tokens":9}}\n\n'
    assert b'"usage":{"input_tokens":0,"output_tokens":0}' in bound.on_frontend_bytes(start)
    assert bound.on_frontend_bytes(delta).endswith(b'"usage":{"output_tokens":9}}\n\n')


def test_edit_frames_rewrites_headers_and_payloads_with_fresh_crcs() -> None:
    from harness.faults.wire_edits import edit_frames
    from harness.protocols import registry
    from harness.wire.eventstream import iter_messages

    encoder = registry.get("bedrock").stream_encoder()
    error = ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down")
    body = encoder.encode(ir.MessageStart()) + encoder.encode(ir.ErrorEvent(error=error))
    assert edit_frames(body, lambda headers, payload: (headers, payload)) == body  # unchanged, byte for byte

    def retype(headers: dict[str, object], payload: object) -> tuple[dict[str, object], object]:
        headers[":exception-type"] = "modelStreamErrorException"
        return headers, {"message": "changed é"}

    (message,) = iter_messages([edit_frames(body, retype)])  # CRCs checked by the decoder
    assert message.headers[":exception-type"] == "modelStreamErrorException"
    assert message.payload == '{"message":"changed é"}'.encode()
    assert edit_frames(body, lambda h, p: DROP) == b""
