"""Normalization rules, first divergence, request-side losses and triage verdicts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.diff import RunOutcome, Verdict, apply_losses, compare, request_divergences, triage
from harness.diff import normalize as n
from tests import strategies


def view(events: list[ir.StreamEvent], response: ir.Response | None = None) -> n.View:
    return {
        "events": ir.events_to_json(events),
        "response": ir.to_json(response) if response else None,
        "error": None,
    }


def text_events(chunks: list[str], *, msg_id: str = "msg_1", model: str = "m") -> list[ir.StreamEvent]:
    return [
        ir.MessageStart(id=msg_id, model=model, usage=ir.Usage(input_tokens=3)),
        ir.TextStart(index=0),
        *[ir.TextDelta(index=0, text=c) for c in chunks],
        ir.TextEnd(index=0),
        ir.UsageEvent(usage=ir.Usage(output_tokens=2)),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn", raw="stop")),
    ]


def test_chunking_ids_models_and_raw_stop_values_do_not_diverge() -> None:
    left = view(text_events(["Hel", "lo"], msg_id="msg_A", model="claude"))
    right = view(text_events(["H", "ello"], msg_id="chatcmpl-B", model="gpt"))
    right["events"][-1]["stop_reason"]["raw"] = "end_turn"
    assert compare(left, right) == []


def test_first_divergence_names_the_event_and_both_values() -> None:
    left = view(text_events(["Hello", " world"]))
    right = view(text_events(["Hello", " wor"]))
    found = compare(left, right)
    assert found[0].path == "events[2].text"
    assert found[0].event_index == 2
    assert (found[0].left, found[0].right) == ("Hello world", "Hello wor")


def test_missing_event_is_reported_as_missing() -> None:
    left = view(text_events(["a"]))
    right = view([e for e in text_events(["a"]) if e.kind != "text_end"])
    found = compare(left, right)
    assert found[0].event_index == 3
    assert found[0].path.startswith("events[3]")


def test_tool_call_ids_are_compared_by_order_of_appearance() -> None:
    def events(ids: tuple[str, str]) -> list[ir.StreamEvent]:
        return [
            ir.MessageStart(),
            ir.ToolCallStart(index=0, id=ids[0], name="a"),
            ir.ToolCallEnd(index=0),
            ir.ToolCallStart(index=1, id=ids[1], name="b"),
            ir.ToolCallEnd(index=1),
            ir.Done(stop_reason=ir.StopReason(kind="tool_use")),
        ]

    assert compare(view(events(("toolu_1", "toolu_2"))), view(events(("call_x", "call_y")))) == []
    swapped = compare(view(events(("toolu_1", "toolu_2"))), view(events(("call_x", "call_x"))))
    assert swapped and swapped[0].path == "events[3].id"


def _usage(**figures: int | None) -> ir.Response:
    return ir.Response(content=[ir.TextPart(text="x")], usage=ir.Usage(**figures))


def test_usage_detail_zero_and_absent_are_one_fact() -> None:
    # OpenAI and Anthropic send cached and reasoning counts of 0; Gemini leaves zeros out.
    zeros = _usage(input_tokens=5, output_tokens=1, cache_read_tokens=0, reasoning_tokens=0, cache_write_tokens=0)
    assert compare(view([], _usage(input_tokens=5, output_tokens=1)), view([], zeros)) == []


def test_usage_the_baseline_has_and_the_translation_lacks_is_a_divergence() -> None:
    base = _usage(input_tokens=5, output_tokens=1, cache_read_tokens=2)
    no_cache = compare(view([], base), view([], _usage(input_tokens=5, output_tokens=1)))
    assert [(d.path, d.left, d.right) for d in no_cache] == [("response.usage.cache_read_tokens", 2, 0)]
    no_input = compare(view([], base), view([], _usage(output_tokens=1, cache_read_tokens=2)))
    assert [d.path for d in no_input] == ["response.usage.input_tokens"]
    wrong = compare(view([], base), view([], _usage(input_tokens=0, output_tokens=1, cache_read_tokens=2)))
    assert [d.path for d in wrong] == ["response.usage.input_tokens"]


def _started(input_tokens: int | None) -> list[ir.StreamEvent]:
    usage = None if input_tokens is None else ir.Usage(input_tokens=input_tokens, output_tokens=1)
    return [
        ir.MessageStart(usage=usage),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage(input_tokens=14, output_tokens=9)),
    ]


def test_start_usage_is_compared_as_reported_or_not() -> None:
    real = view(_started(14))
    # A translation that estimates the input count at start (its upstream reports it only at the end) is fine:
    # the exact count is compared in the final usage.
    assert compare(real, view(_started(7))) == []
    zeroed = compare(real, view(_started(0)))
    assert [(d.path, d.left, d.right) for d in zeroed] == [("events[0].start_input_tokens", "<reported>", 0)]
    # Frontends whose SDK shows no start usage compare nothing there.
    assert compare(view(_started(None)), view(_started(None))) == []


def test_start_usage_survives_a_backend_loss_of_start_usage() -> None:
    # OpenAI's wire cannot carry start usage (its loss `MessageStart.usage`); an Anthropic client in front of it
    # still needs a count at message_start. The judge classes the start before applying losses.
    left, right = (n.start_usage_reported(view(_started(count))) for count in (14, 0))
    left, right = apply_losses(left, right, ["MessageStart.usage"], scope="response")
    assert [d.path for d in compare(left, right)] == ["events[0].start_input_tokens"]


@given(strategies.responses(), st.integers(1, 7), st.integers(1, 7))
def test_any_chunking_of_the_same_response_compares_equal(resp: ir.Response, a: int, b: int) -> None:
    left = view(strategies.events_for(resp, chunk=a), resp)
    right = view(strategies.events_for(resp, chunk=b), resp)
    assert compare(left, right) == []


def test_rules_do_not_mutate_their_input() -> None:
    original = view(text_events(["a", "b"]))
    snapshot = repr(original)
    n.apply(original)
    assert repr(original) == snapshot


def request(**kw: object) -> dict[str, object]:
    base = ir.Request(
        model="m",
        messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])],
        tools=[ir.Tool(name="get_weather")],
        temperature=0.2,
    )
    return ir.to_json(base.model_copy(update=kw))


def test_request_side_tools_dropped_is_a_divergence() -> None:
    found = request_divergences(request(), request(tools=[]))
    assert found and found[0].path.startswith("request.tools")


def test_request_side_model_name_and_declared_losses_are_allowed() -> None:
    assert (
        request_divergences(request(), request(model="other", temperature=None), losses=["Request.temperature"]) == []
    )
    assert request_divergences(request(), request(temperature=None)) != []


def test_losses_remove_fields_of_a_part_kind_and_whole_parts() -> None:
    req = ir.to_json(
        ir.Request(
            model="m",
            messages=[
                ir.Message(
                    role="assistant",
                    content=[ir.ThinkingPart(text="t", signature="sig"), ir.TextPart(text="x")],
                ),
                ir.Message(
                    role="user",
                    content=[ir.ImagePart(source=ir.UrlImage(url="https://e/x.png")), ir.TextPart(text="y")],
                ),
            ],
        )
    )
    stripped = apply_losses({"request": req}, {"request": req}, ["ThinkingPart.signature", "ImagePart"])[0]["request"]
    assert stripped["messages"][0]["content"][0] == {"kind": "thinking", "text": "t"}
    assert stripped["messages"][1]["content"] == [{"kind": "text", "text": "y"}]


OK = RunOutcome(ok=True)


def fail(*names: str) -> RunOutcome:
    return RunOutcome(ok=False, failures=frozenset(names))


def test_triage_table() -> None:
    div = compare(view(text_events(["a"])), view(text_events(["b"])))
    assert triage(OK, OK, OK, request_divergences=[], response_divergences=[]).verdict is Verdict.PASS
    got = triage(OK, OK, OK, request_divergences=[], response_divergences=div)
    assert got.verdict is Verdict.PROXY_BUG_RESPONSE and got.first_divergence == div[0]
    assert triage(OK, OK, fail("text"), request_divergences=[], response_divergences=[]).verdict is (
        Verdict.PROXY_BUG_RESPONSE
    )
    assert triage(fail("x"), fail("y"), OK, request_divergences=div, response_divergences=[]).verdict is (
        Verdict.PROXY_BUG_REQUEST
    )
    assert triage(OK, fail("text"), fail("text"), request_divergences=[], response_divergences=div).verdict is (
        Verdict.BACKEND_ISSUE
    )
    assert triage(fail("usage"), OK, OK, request_divergences=[], response_divergences=[]).verdict is (
        Verdict.BASELINE_ISSUE
    )
    got = triage(OK, OK, OK, request_divergences=div, response_divergences=[], unsupported="vision")
    assert got.verdict is Verdict.UNSUPPORTED and "vision" in got.reason
    assert Verdict.PROXY_BUG_REQUEST.is_proxy_bug and not Verdict.BACKEND_ISSUE.is_proxy_bug


def test_scoped_losses_apply_to_their_direction_only() -> None:
    from harness.diff import apply_losses, parse_loss

    assert parse_loss("request.ThinkingPart").scope == "request"
    assert parse_loss("StopReason.kind:stop_sequence").value == "stop_sequence"
    thinking = {"response": {"content": [{"kind": "thinking", "text": "t"}, {"kind": "text", "text": "x"}]}}
    kept, _ = apply_losses(thinking, thinking, ["request.ThinkingPart"], scope="response")
    assert kept == thinking
    dropped, _ = apply_losses(thinking, thinking, ["request.ThinkingPart"], scope="request")
    assert dropped["response"]["content"] == [{"kind": "text", "text": "x"}]


def test_value_losses_apply_only_when_a_side_has_the_value() -> None:
    from harness.diff import apply_losses

    def stop(kind: str) -> dict[str, object]:
        return {"response": {"stop_reason": {"kind": kind}}}

    a, b = apply_losses(stop("stop_sequence"), stop("end_turn"), ["StopReason.kind:stop_sequence"])
    assert a == b == {"response": {"stop_reason": {}}}
    a, b = apply_losses(stop("max_tokens"), stop("end_turn"), ["StopReason.kind:stop_sequence"])
    assert (a, b) == (stop("max_tokens"), stop("end_turn"))


def test_malformed_loss_keys_are_rejected() -> None:
    from harness.diff import LossKeyError, parse_loss

    for key in ("Nope", "TextPart.nope", "TextPart:adjacent", "Message(role=tool)"):
        with pytest.raises(LossKeyError):
            parse_loss(key)


def test_a_cut_off_stream_equals_an_explicit_midstream_error_but_not_a_normal_stop() -> None:
    prefix = text_events(["This reply is"])[:-2]
    cut = view([*prefix, ir.TextEnd(index=0), ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM))])
    explicit = view([*prefix, ir.TextEnd(index=0), ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.SERVER, "cut"))])
    normal = view([*prefix, ir.TextEnd(index=0), ir.Done(stop_reason=ir.StopReason(kind="end_turn"))])
    assert compare(cut, explicit) == []
    assert compare(cut, normal) != []
    http_error = view(
        [*prefix, ir.TextEnd(index=0), ir.ErrorEvent(error=ir.IRError.of(ir.ErrorKind.SERVER, status=500))]
    )
    assert compare(cut, http_error) != []


def test_a_whole_model_loss_matches_the_side_that_has_none() -> None:
    from harness.diff import apply_losses

    with_text_format = {"request": {"messages": [], "response_format": {"kind": "text"}}}
    without = {"request": {"messages": [], "response_format": None}}
    a, b = apply_losses(with_text_format, without, ["ResponseFormatText"])
    assert a == b
    url = {"kind": "image", "source": {"type": "url", "url": "https://e/x.png"}}
    text = {"kind": "text", "text": "look"}
    a, b = apply_losses(
        {"request": {"messages": [{"role": "user", "content": [text, url]}]}},
        {"request": {"messages": [{"role": "user", "content": [text]}]}},
        ["UrlImage"],
    )
    assert a == b
    b64 = {"kind": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}
    a, b = apply_losses(
        {"request": {"messages": [{"role": "user", "content": [text, b64]}]}},
        {"request": {"messages": [{"role": "user", "content": [text]}]}},
        ["UrlImage"],
    )
    assert a != b  # a dropped inline image is still a divergence


def _failed(events: list[ir.StreamEvent] | None, error: ir.IRError) -> n.View:
    out = view(events or [])
    out["events"] = ir.events_to_json(events) if events is not None else None
    out["response"] = {"content": [], "usage": {"input_tokens": 0}} if events else None
    out["error"] = ir.to_json(error)
    return out


def test_a_stream_that_failed_before_content_is_its_error_alone() -> None:
    # Bedrock's lone exception frame reaches an Anthropic client as `event: error` with no message_start; the
    # Anthropic backend's own stream opened the message first. Either way the client got the error and nothing.
    throttled = ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down")
    opened = _failed([ir.MessageStart(id="m"), ir.ErrorEvent(error=throttled)], throttled)
    nothing = _failed(None, throttled)
    assert compare(opened, nothing) == []
    # Content before the error is not nothing: a client that saw text must still see it.
    partial = _failed(
        [ir.MessageStart(), ir.TextStart(index=0), ir.TextDelta(index=0, text="Hi"), ir.TextEnd(index=0),
         ir.ErrorEvent(error=throttled)],
        throttled,
    )  # fmt: skip
    assert compare(partial, nothing) != []
    # Another error is another error.
    assert compare(opened, _failed(None, ir.IRError.of(ir.ErrorKind.AUTH, "no"))) != []


def test_litellm_answers_an_error_first_stream_with_its_http_status() -> None:
    # LiteLLM reads a Gemini stream whose only chunk is a 429 error before sending anything, and answers 429: the
    # client raises RateLimitError where the provider's client raised a stream error. Same error, and earlier.
    throttled = ir.IRError.of(ir.ErrorKind.THROTTLED, "slow down")
    opened = [ir.MessageStart(id="m"), ir.ErrorEvent(error=throttled)]
    stream = {**_failed(opened, throttled), "exception": "stream_error"}
    answered = {**_failed(None, throttled.model_copy(update={"status": 429})), "exception": "rate_limit"}
    assert compare(stream, answered) == []
    # Another kind is another error, and the other way round (an HTTP 401 sent as a 200 stream) loses the status.
    server = {**_failed(None, ir.IRError.of(ir.ErrorKind.SERVER, "x").model_copy(update={"status": 500})),
              "exception": "server_error"}  # fmt: skip
    assert compare(stream, server) != []
    auth = ir.IRError.of(ir.ErrorKind.AUTH, "no")
    http_401 = {**_failed(None, auth.model_copy(update={"status": 401})), "exception": "auth"}
    as_stream = {**_failed([ir.MessageStart(id="m"), ir.ErrorEvent(error=auth)], auth), "exception": "stream_error"}
    assert [d.path for d in compare(http_401, as_stream)] == ["error.status", "exception"]


def test_an_empty_text_block_is_no_content_and_the_blocks_after_it_are_renumbered() -> None:
    thinking = [ir.ThinkingStart(index=1), ir.ThinkingDelta(index=1, text="hm"), ir.ThinkingEnd(index=1, signature="s")]
    answer = [ir.TextStart(index=2), ir.TextDelta(index=2, text="No."), ir.TextEnd(index=2)]
    done = ir.Done(stop_reason=ir.StopReason(kind="end_turn"))
    with_empty = [ir.MessageStart(), ir.TextStart(index=0), ir.TextEnd(index=0), *thinking, *answer, done]
    parts = [ir.ThinkingPart(text="hm", signature="s"), ir.TextPart(text="No.")]
    left = view(with_empty, ir.Response(content=[ir.TextPart(text=""), *parts]))
    shifted = [
        ir.MessageStart(),
        *[e.model_copy(update={"index": e.index - 1}) for e in [*thinking, *answer] if hasattr(e, "index")],
        done,
    ]
    right = view(shifted, ir.Response(content=parts))
    assert compare(left, right) == []
    # The signature moved to the answer, or the reasoning became text: still divergences.
    wrong = [*shifted[:3], ir.ThinkingEnd(index=0), *shifted[4:]]
    assert compare(left, view(wrong, ir.Response(content=parts))) != []
    as_text = view(shifted, ir.Response(content=[ir.TextPart(text="hm"), ir.TextPart(text="No.")]))
    assert compare(left, as_text) != []
    # Without an empty block, indexes are compared as sent.
    plain = view(shifted)
    renumbered = view([e.model_copy(update={"index": e.index + 5}) if hasattr(e, "index") else e for e in shifted])
    assert compare(plain, renumbered) != []
