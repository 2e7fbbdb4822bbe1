"""The event sequence every writer relies on: order, known verdicts, and counts that agree with the cases."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from harness.report import Collector, ReportError
from harness.report.model import _plan_order
from harness.runner.run_events import CaseFinished, MatrixFinished
from tests.report.factory import case, sample_cases, sample_events


def test_collects_a_run_in_order() -> None:
    collector = Collector()
    results = [collector.handle(e) for e in sample_events()]
    assert results[:-1] == [None] * 8
    report = results[-1]
    assert report is not None
    assert [c.case_id for c in report.cases] == [c.case_id for c in sample_cases()]
    assert report.frontends == ["anthropic", "openai"]
    assert report.cells()[("anthropic", "gemini")]["baseline_issue"] == 1
    assert [c.case_id for c in report.proxy_bugs()][-1] == "usage[openai->gemini,stream]"


def test_case_before_run_started_is_an_error() -> None:
    with pytest.raises(ReportError, match="CaseFinished before MatrixStarted"):
        Collector().handle(CaseFinished(sample_cases()[0]))


def test_unknown_verdict_is_an_error() -> None:
    # Verdicts are typed: a case result refuses an unknown one where it is made...
    with pytest.raises(ValidationError, match="verdict"):
        case("x", "openai", "gemini", "flaky", "sometimes")
    # ...and the collector still refuses one that was slipped in without validation.
    flaky = case("x", "openai", "gemini", "pass", "sometimes").model_copy(update={"verdict": "flaky"})
    events = sample_events([flaky])
    collector = Collector()
    collector.handle(events[0])
    with pytest.raises(ReportError, match=r"x\[openai->gemini,stream\]: unknown verdict 'flaky'"):
        collector.handle(events[1])


def test_counts_that_disagree_with_the_cases_are_an_error() -> None:
    events = sample_events()
    finished = events[-1]
    assert isinstance(finished, MatrixFinished)
    events[-1] = dataclasses.replace(finished, counts={"pass": 7})
    collector = Collector()
    for event in events[:-1]:
        collector.handle(event)
    with pytest.raises(ReportError, match="MatrixFinished counts"):
        collector.handle(events[-1])


def test_undeclared_axis_values_are_appended_not_dropped() -> None:
    extra = case("text-basic", "gemini", "ollama", "pass", "all three runs agree")
    collector = Collector()
    report = None
    for event in sample_events([extra]):
        report = collector.handle(event)
    assert report is not None
    assert report.frontends == ["anthropic", "openai", "gemini"]
    assert report.backends == ["anthropic", "openai", "gemini", "ollama"]
    assert report.cells()[("gemini", "ollama")]["pass"] == 1


@settings(max_examples=60, deadline=None)
@given(st.permutations(range(7)), st.integers(0, 7), st.booleans())
def test_cases_come_out_in_plan_order_in_any_arrival_order(order: list[int], planned: int, extra: bool) -> None:
    """The plan-order fast path (cases already in plan order) and the sort agree: a case the plan did not announce
    comes after the planned ones, as it came."""
    cases = sample_cases()
    if extra:
        cases.append(case("unplanned", "openai", "openai", "pass", "agree"))
    arrived = [cases[i] for i in order] + cases[7:]
    plan = [c.case_id for c in cases[:planned]]
    rank = {case_id: i for i, case_id in enumerate(plan)}
    expected = sorted(arrived, key=lambda c: rank.get(c.case_id, len(rank)))
    assert [c.case_id for c in _plan_order(plan, arrived)] == [c.case_id for c in expected]
    in_order = sorted(arrived, key=lambda c: rank.get(c.case_id, len(rank)))
    assert [c.case_id for c in _plan_order([c.case_id for c in in_order], in_order)] == [c.case_id for c in in_order]
