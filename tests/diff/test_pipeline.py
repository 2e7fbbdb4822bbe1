"""One comparison pipeline: the verdict, the report's "compared" pane and `conformance diff` show exactly the same
normalized view, so a divergence a declared loss excuses is excused in all three."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.cli import main
from harness.diff import UnknownLossesError, compared_views, judge, response_divergences, sdk_view
from harness.diff import normalize as n
from harness.report.html_case import Pack
from harness.trace import Case, CaseResult, Run, RunTrace, SdkView, Verdict, write_case
from harness.trace.writer import case_file_name
from tests import strategies

# Ollama's wire has no stop-sequence stop kind (`StopReason.kind:stop_sequence` in its losses): an Anthropic client
# that stopped on a sequence against its own backend sees `end_turn` through an Ollama backend.
CASE = Case("stop-sequence", "anthropic", "ollama", False)


def _trace(run: Run, stop: str, text: str = "Once upon a") -> RunTrace:
    response = ir.Response(
        id="msg_1",
        model="m",
        content=[ir.TextPart(text=text)],
        stop_reason=ir.StopReason(kind=stop),
        usage=ir.Usage(input_tokens=10, output_tokens=3),
    )
    return RunTrace.of(run, CASE.case_id, sdk=SdkView(response=response))


def _runs(translated_text: str = "Once upon a") -> dict[str, RunTrace]:
    runs = CASE.runs("ollama")
    return {
        "baseline_frontend": _trace(runs["baseline_frontend"], "stop_sequence"),
        "baseline_backend": _trace(runs["baseline_backend"], "end_turn"),
        "translated": _trace(runs["translated"], "end_turn", translated_text),
    }


def _details(result: CaseResult) -> dict[str, Any]:
    """What the HTML report's case view gets for the case (its pack, decoded)."""
    pack = Pack("r", [])
    pack.add(result)
    return pack.payload()


def _diff_exit(result: CaseResult, folder: Path) -> int:
    path = write_case(result, folder)
    assert path.name == f"{case_file_name(result.case_id)}.json.gz"
    return main(["diff", str(path), str(path), "--left-role", "baseline_frontend", "--right-role", "translated"])


def test_a_divergence_a_loss_excuses_is_excused_by_the_verdict_the_report_and_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = _runs()
    # The raw views do differ: without the losses the stop kinds diverge.
    raw = response_divergences(runs["baseline_frontend"], runs["translated"], losses=False)
    assert [d.path for d in raw] == ["response.stop_reason.kind"]

    result = judge(CASE, runs)
    assert result.verdict is Verdict.PASS and result.response_divergences == []

    data = _details(result)
    compared = data["cases"][result.case_id]["compared"]
    left, right = (data["views"][compared[role]] for role in ("baseline_frontend", "translated"))
    assert left == right
    assert (left, right) == compared_views(runs["baseline_frontend"], runs["translated"])
    assert "kind" not in left["response"]["stop_reason"]  # the loss took the field off both sides

    assert _diff_exit(result, tmp_path) == 0
    assert capsys.readouterr().out.endswith("(translated): no divergences\n")


def test_a_divergence_no_loss_excuses_shows_the_same_in_all_three(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = _runs(translated_text="Once upon")
    result = judge(CASE, runs)
    assert result.verdict is Verdict.PROXY_BUG_RESPONSE
    assert [d.path for d in result.response_divergences] == ["response.content[0].text"]

    data = _details(result)
    compared = data["cases"][result.case_id]["compared"]
    left, right = (data["views"][compared[role]] for role in ("baseline_frontend", "translated"))
    assert (left["response"]["content"][0]["text"], right["response"]["content"][0]["text"]) == (
        "Once upon a",
        "Once upon",
    )

    assert _diff_exit(result, tmp_path) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == ['1. response.content[0].text: "Once upon a" != "Once upon"  [values_changed]']


def test_a_streamed_run_is_compared_on_its_accumulated_response() -> None:
    run = Run("translated", "openai", "openai", "text-basic", True)
    events = [
        ir.MessageStart(id="m1", model="m"),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="Hel"),
        ir.TextDelta(index=0, text="lo"),
        ir.TextEnd(index=0),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage(input_tokens=1, output_tokens=2)),
    ]
    view = sdk_view(RunTrace.of(run, "c", sdk=SdkView(events=events)))
    assert view["response"]["content"] == [{"kind": "text", "text": "Hello"}]
    assert json.dumps(view)  # plain JSON data


def test_two_runs_that_saw_nothing_compare_as_the_whole_pipeline_compares_them() -> None:
    # A slim run (a clean pass kept without its SDK view) is compared by a shortcut: the same views, for every
    # pair of protocols, with and without rules and losses, and with checks that admit several values.
    from harness.diff.pipeline import _compared_views
    from harness.protocols import registry
    from harness.trace import Check

    admitted = [Check(name="error.status", passed=True, expected=[529, 503], actual=529)]
    names = registry.names()
    for frontend in names:
        for backend in names:
            for stream in (False, True):
                reference = RunTrace.of(Run("baseline_frontend", frontend, frontend, "s", stream), "c")
                compared = RunTrace.of(Run("translated", frontend, backend, "s", stream), "c", checks=admitted)
                for rules, losses in ((n.DEFAULT_RULES, True), ((), False), ((), True), (n.DEFAULT_RULES, False)):
                    fast = compared_views(reference, compared, rules=rules, losses=losses)
                    assert fast == _compared_views(reference, compared, rules=rules, losses=losses)
                    assert fast == ({"response": None, "events": None, "error": None, "exception": None},) * 2


def test_two_runs_that_saw_nothing_through_an_unknown_protocol_still_cannot_be_compared() -> None:
    reference = RunTrace.of(Run("baseline_frontend", "openai", "openai", "s", False), "c")
    compared = RunTrace.of(Run("translated", "openai", "no-such-wire", "s", False), "c")
    with pytest.raises(UnknownLossesError, match="no-such-wire"):
        compared_views(reference, compared)
    assert compared_views(reference, compared, rules=(), losses=False)[1]["response"] is None


def test_the_report_shows_the_views_the_judge_compared_and_only_for_the_runs_it_compared() -> None:
    from harness.diff import Compared
    from harness.trace.slim import slim

    kept: dict[str, Compared] = {}
    result = judge(CASE, _runs(), keep=kept)
    handed = kept[CASE.case_id]
    assert handed.of(result) is handed.views
    assert handed.views == compared_views(result.runs["baseline_frontend"], result.runs["translated"])
    with_views, without = Pack("r", []), Pack("r", [])
    with_views.add(result, handed)
    without.add(result)
    assert with_views.payload() == without.payload()
    # A case whose runs are no longer those compared (slimmed, or read back) builds its own views.
    assert handed.of(slim(result)) is None
    stale = Compared(result.runs["baseline_frontend"], _runs()["translated"], ({"stale": 1}, {"stale": 2}))
    assert stale.of(result) is None
    stale_pack = Pack("r", [])
    stale_pack.add(result, stale)
    assert stale_pack.payload() == without.payload()


_SHUFFLED = st.lists(st.tuples(st.sampled_from(["usage", "provider", "swap", "empty"]), st.integers(0, 60)), max_size=6)


def _stirred(events: list[ir.StreamEvent], steps: list[tuple[str, int]]) -> list[ir.StreamEvent]:
    """The events with usage and provider events put between deltas, neighbours swapped (blocks interleaved, as
    a stream with concurrent blocks has them) and empty deltas added."""
    out = list(events)
    for what, at in steps:
        place = at % (len(out) + 1)
        if what == "usage":
            out.insert(place, ir.UsageEvent(usage=ir.Usage(input_tokens=at, output_tokens=1)))
        elif what == "provider":
            out.insert(place, ir.ProviderEvent(protocol="responses", type="x", data={"n": at}))
        elif what == "empty":
            out.insert(place, ir.TextDelta(index=at % 3, text=""))
        elif place + 1 < len(out):
            out[place], out[place + 1] = out[place + 1], out[place]
    return out


@given(strategies.responses(), strategies.responses(), st.integers(1, 4), _SHUFFLED, _SHUFFLED, st.data())
def test_joining_delta_runs_first_gives_the_views_the_rules_alone_give(
    a: ir.Response,
    b: ir.Response,
    chunk: int,
    stir_a: list[tuple[str, int]],
    stir_b: list[tuple[str, int]],
    data: st.DataObject,
) -> None:
    # `joined_view` hands the pipeline each run of deltas joined; the rules would join them later all the same.
    from unittest import mock

    from harness.diff import pipeline

    frontend = data.draw(st.sampled_from(["anthropic", "openai", "responses", "gemini", "ollama"]))
    backend = data.draw(st.sampled_from(["anthropic", "openai", "responses", "gemini", "bedrock"]))
    runs = Case("text-basic", frontend, backend, True).runs(backend)
    events_a = _stirred(strategies.events_for(a, chunk=chunk), stir_a)
    events_b = _stirred(strategies.events_for(b, chunk=chunk + 1), stir_b)
    reference = RunTrace.of(runs["baseline_frontend"], "c", sdk=SdkView(response=a, events=events_a))
    compared = RunTrace.of(runs["translated"], "c", sdk=SdkView(response=b, events=events_b))
    fast = compared_views(reference, compared)
    with (
        mock.patch.object(pipeline, "joined_view", pipeline.sdk_view),
        mock.patch.object(pipeline, "delta_runs_joined", lambda view: view),
    ):
        slow = compared_views(reference, compared)
    assert fast == slow
    assert json.dumps(fast) == json.dumps(slow)  # the same order of keys and events too


def test_joining_delta_runs_waits_for_blocks_put_in_order() -> None:
    # Responses' concurrent blocks are put in order first, which moves block 1's deltas past the provider event;
    # deltas joined before that would take one slot fewer and leave the provider event elsewhere.
    from unittest import mock

    from harness.diff import pipeline

    events: list[ir.StreamEvent] = [
        ir.MessageStart(id="r", model="m"),
        ir.TextStart(index=0),
        ir.TextStart(index=1),
        ir.TextDelta(index=1, text="a"),
        ir.TextDelta(index=1, text="b"),
        ir.ProviderEvent(protocol="responses", type="x", data=None),
        ir.TextDelta(index=0, text="c"),
        ir.TextEnd(index=0),
        ir.TextEnd(index=1),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn")),
    ]
    response = ir.Response(id="r", model="m", content=[ir.TextPart(text="c"), ir.TextPart(text="ab")])
    runs = Case("text-basic", "responses", "openai", True).runs("openai")
    reference = RunTrace.of(runs["baseline_frontend"], "c", sdk=SdkView(response=response, events=events))
    compared = RunTrace.of(runs["translated"], "c", sdk=SdkView(response=response, events=events[:-1]))
    fast = compared_views(reference, compared)
    with (
        mock.patch.object(pipeline, "joined_view", pipeline.sdk_view),
        mock.patch.object(pipeline, "delta_runs_joined", lambda view: view),
    ):
        assert fast == compared_views(reference, compared)
    kinds = [(e["kind"], e.get("text")) for e in fast[0]["events"]]
    assert kinds[3:7] == [("text_end", None), ("text_start", None), ("provider_event", None), ("text_delta", "ab")]


@given(strategies.responses(), st.integers(1, 4), _SHUFFLED)
def test_delta_runs_joined_on_the_events_are_those_joined_on_their_json(
    response: ir.Response, chunk: int, stir: list[tuple[str, int]]
) -> None:
    from harness.diff.pipeline import joined_events_json

    events = _stirred(strategies.events_for(response, chunk=chunk), stir)
    slow = n.delta_runs_joined({"events": ir.events_to_json(events)})["events"]
    assert json.dumps(joined_events_json(events)) == json.dumps(slow)
