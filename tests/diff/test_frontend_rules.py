"""The normalization rules a frontend protocol declares (`facts.Frontend.opaque_signatures`, `concurrent_blocks`),
met gating the Responses gateways (docs/gateways.md: LR7, LR12, CR9). Each test beside a rule shows the real bug
in the same area is still a divergence, and that frontends which do not declare the rule are not excused."""

from __future__ import annotations

from harness import ir
from harness.diff import response_divergences
from harness.diff.normalize import blocks_in_order, opaque_signatures
from harness.protocols import registry
from harness.trace import Case, RunTrace, SdkView

SIGNATURE = "c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0LTAwMQ=="
# LiteLLM 1.106.2's encrypted_content for an Anthropic upstream: its own JSON of the thinking blocks.
LITELLM_BLOB = '[{"type":"thinking","thinking":"17 times 23 is 391.","signature":"' + SIGNATURE + '"}]'


def _thinking(signature: str | None) -> ir.Response:
    return ir.Response(
        id="resp_1",
        model="m",
        content=[ir.ThinkingPart(text="17 times 23 is 391.", signature=signature), ir.TextPart(text="391")],
        stop_reason=ir.StopReason(kind="end_turn"),
        usage=ir.Usage(input_tokens=10, output_tokens=3),
    )


def _pair(frontend: str, left: SdkView, right: SdkView, stream: bool = False) -> tuple[RunTrace, RunTrace]:
    case = Case("thinking-with-signature", frontend, "anthropic", stream)
    runs = case.runs("anthropic")
    baseline = RunTrace.of(runs["baseline_frontend"], case.case_id, sdk=left)
    translated = RunTrace.of(runs["translated"], case.case_id, sdk=right)
    return baseline, translated


def test_responses_frontend_declares_both_rules_and_chat_and_anthropic_neither() -> None:
    for name, declared in (("responses", True), ("openai", False), ("anthropic", False)):
        frontend = registry.facts(name).frontend
        assert frontend is not None
        assert (frontend.opaque_signatures, frontend.concurrent_blocks) == (declared, declared)


# --- LR7: LiteLLM's encrypted_content is its own blob; the field is opaque to a Responses client ---------------


def test_lr7_litellm_encrypted_content_blob_is_compared_by_presence() -> None:
    baseline, translated = _pair(
        "responses", SdkView(response=_thinking(SIGNATURE)), SdkView(response=_thinking(LITELLM_BLOB))
    )
    assert response_divergences(baseline, translated) == []


def test_lr7_encrypted_content_missing_where_the_baseline_has_one_still_diverges() -> None:
    for lost in (None, ""):
        baseline, translated = _pair(
            "responses", SdkView(response=_thinking(SIGNATURE)), SdkView(response=_thinking(lost))
        )
        (found,) = response_divergences(baseline, translated)
        assert (found.path, found.left, found.right) == ("response.content[0].signature", "<present>", lost)


def test_lr7_a_signature_on_frontends_that_read_it_is_still_compared_by_value() -> None:
    baseline, translated = _pair(
        "anthropic", SdkView(response=_thinking(SIGNATURE)), SdkView(response=_thinking(LITELLM_BLOB))
    )
    (found,) = response_divergences(baseline, translated)
    assert (found.path, found.left, found.right) == ("response.content[0].signature", SIGNATURE, LITELLM_BLOB)


def test_lr7_streamed_thinking_end_signature_is_compared_by_presence() -> None:
    def events(signature: str | None) -> list[ir.StreamEvent]:
        return [
            ir.MessageStart(id="r", model="m"),
            ir.ThinkingStart(index=0),
            ir.ThinkingDelta(index=0, text="17 times 23 is 391."),
            ir.ThinkingEnd(index=0, signature=signature),
            ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage(input_tokens=10, output_tokens=3)),
        ]

    view = opaque_signatures({"events": ir.events_to_json(events(LITELLM_BLOB)), "response": None})
    assert view["events"][3]["signature"] == "<present>"
    same = _pair("responses", SdkView(events=events(SIGNATURE)), SdkView(events=events(LITELLM_BLOB)), stream=True)
    assert response_divergences(*same) == []
    lost = _pair("responses", SdkView(events=events(SIGNATURE)), SdkView(events=events(None)), stream=True)
    assert {d.path for d in response_divergences(*lost)} == {"events[3].signature", "response.content[0].signature"}


# --- LR12 / CR9: output items streamed concurrently (a second item added before the first is done) ------------


def _calls(*, interleaved: bool, tokyo: str = 'yo"}') -> list[ir.StreamEvent]:
    """Two parallel calls, as api.openai.com streams them or as codex-rosetta 0.1.0 does (both ends at the end)."""
    first = [
        ir.ToolCallStart(index=0, id="call_1", name="get_weather"),
        ir.ToolCallDelta(index=0, arguments='{"city":"Paris"}'),
    ]
    second = [
        ir.ToolCallStart(index=1, id="call_2", name="get_weather"),
        ir.ToolCallDelta(index=1, arguments='{"city":"Tok'),
    ]
    second.append(ir.ToolCallDelta(index=1, arguments=tokyo))
    ends: list[ir.StreamEvent] = [ir.ToolCallEnd(index=0), ir.ToolCallEnd(index=1)]
    body = [*first, *second, *ends] if interleaved else [*first, ends[0], *second, ends[1]]
    done = ir.Done(stop_reason=ir.StopReason(kind="tool_use"), usage=ir.Usage(input_tokens=85, output_tokens=38))
    return [ir.MessageStart(id="r", model="m"), *body, done]


def test_cr9_interleaved_output_items_compare_as_items_one_after_another() -> None:
    baseline, translated = _pair(
        "responses", SdkView(events=_calls(interleaved=False)), SdkView(events=_calls(interleaved=True)), stream=True
    )
    assert response_divergences(baseline, translated) == []


def test_cr9_blocks_in_order_keeps_events_of_no_block_in_place_and_each_blocks_own_order() -> None:
    events = ir.events_to_json(
        [
            ir.MessageStart(id="r", model="m"),
            ir.TextStart(index=0),
            ir.ToolCallStart(index=1, id="c", name="f"),
            ir.TextDelta(index=0, text="a"),
            ir.ToolCallDelta(index=1, arguments="{}"),
            ir.TextDelta(index=0, text="b"),
            ir.TextEnd(index=0),
            ir.ToolCallEnd(index=1),
            ir.Done(stop_reason=ir.StopReason(kind="tool_use")),
        ]
    )
    kinds = [(e["kind"], e.get("index"), e.get("text")) for e in blocks_in_order({"events": events})["events"]]
    assert kinds == [
        ("message_start", None, None),
        ("text_start", 0, None),
        ("text_delta", 0, "a"),
        ("text_delta", 0, "b"),
        ("text_end", 0, None),
        ("tool_call_start", 1, None),
        ("tool_call_delta", 1, None),
        ("tool_call_end", 1, None),
        ("done", None, None),
    ]


def test_cr9_interleaved_items_with_other_content_still_diverge() -> None:
    baseline, translated = _pair(
        "responses",
        SdkView(events=_calls(interleaved=False)),
        SdkView(events=_calls(interleaved=True, tokyo='yo", "unit": "celsius"}')),
        stream=True,
    )
    assert response_divergences(baseline, translated) != []


def test_cr9_interleaved_blocks_on_a_frontend_that_does_not_declare_them_still_diverge() -> None:
    baseline, translated = _pair(
        "anthropic", SdkView(events=_calls(interleaved=False)), SdkView(events=_calls(interleaved=True)), stream=True
    )
    found = response_divergences(baseline, translated)
    assert found and found[0].path.startswith("events[")


# --- LiteLLM's reasoning_tokens estimate where the Anthropic upstream reported no count -------------------------


def _usage_pair(baseline_count: int | None, proxy_count: int, upstream_count: int | None) -> tuple[RunTrace, RunTrace]:
    def response(count: int | None) -> ir.Response:
        usage = ir.Usage(input_tokens=90, output_tokens=40, reasoning_tokens=count)
        return ir.Response(id="r", model="m", content=[ir.TextPart(text="391")], usage=usage)

    baseline, translated = _pair(
        "responses", SdkView(response=response(baseline_count)), SdkView(response=response(proxy_count))
    )
    return baseline, translated.model_copy(update={"upstream_response": response(upstream_count)})


def test_litellm_reasoning_tokens_estimate_with_no_upstream_count_is_not_held_against_a_baseline_without_one() -> None:
    # thinking-then-tool[responses->anthropic,nonstream]: the scenario scripts no count (the baseline says 0), the
    # Anthropic upstream reports none, LiteLLM 1.106.2 says 12 (its count of the thinking text).
    assert response_divergences(*_usage_pair(0, 12, None)) == []


def test_reasoning_tokens_against_a_known_count_or_an_upstream_count_still_diverge() -> None:
    (known,) = response_divergences(*_usage_pair(48, 12, None))
    assert (known.path, known.left, known.right) == ("response.usage.reasoning_tokens", 48, 12)
    (changed,) = response_divergences(*_usage_pair(0, 12, 7))
    assert (changed.path, changed.left, changed.right) == ("response.usage.reasoning_tokens", 0, 12)
