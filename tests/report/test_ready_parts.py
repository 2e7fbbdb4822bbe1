"""junit.xml and summary.json take the text of each settled case (a pass or unsupported case without wire
deviations) from its unit's work, made where the unit was judged: the files must be byte for byte what rendering
every case at the end gives, under `strict` or not, with failing, known, deviating and settled cases mixed."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.report import ReportError, build_summary, emit, file_writers, validate_summary
from harness.report.groups import settled
from harness.report.junit import render_junit, unit_testcases
from harness.report.model import Collector, MatrixReport, parse_ready, ready_part
from harness.report.summary import render_summary, summary_text, unit_entries
from harness.runner.run_events import MatrixFinished, MatrixStarted, RunnerEvent, UnitDone, UnitWork, UnitWriter
from harness.trace import CaseResult
from harness.trace.model import Deviation
from tests.report.factory import case, known_bug, sample_cases, sample_events, text_bug

_DEVIATION = Deviation(rule="openai.created_present", message="chunk 3 has no <created> & \x01")


def _cases() -> list[CaseResult]:
    """Every verdict, a known bug, settled cases of both kinds, and passes and bugs with wire deviations."""
    odd = "reason with <markup> & \x00 control \u2028 line separator"
    return [
        *sample_cases(),
        case("plain", "anthropic", "openai", "pass", odd),
        case("plain", "anthropic", "gemini", "pass", "agree", stream=False),
        case("plain", "openai", "gemini", "pass", "agree").model_copy(update={"deviations": [_DEVIATION]}),
        case("thinking", "anthropic", "gemini", "unsupported", "no", runs={}).model_copy(
            update={"deviations": [_DEVIATION]}
        ),
        case("thinking", "anthropic", "openai", "unsupported", "declared", known="listed, now unsupported", runs={}),
        case("usage", "openai", "anthropic", "pass", "agree", known="was a bug (fixed)"),
        text_bug().model_copy(update={"case_id": "deviating-bug", "deviations": [_DEVIATION] * 2}),
        known_bug().model_copy(update={"case_id": "known-again"}),
    ]


def _report(cases: list[CaseResult], strict: bool) -> MatrixReport:
    collector = Collector()
    *head, end = sample_events(cases)
    for event in head:
        collector.handle(event)
    assert isinstance(end, MatrixFinished)
    report = collector.handle(MatrixFinished(**{**end.__dict__, "strict": strict}))
    assert report is not None
    return report


def _units(cases: list[CaseResult]) -> list[list[CaseResult]]:
    units: dict[tuple[str, bool], list[CaseResult]] = {}
    for c in cases:
        units.setdefault((c.scenario, c.stream), []).append(c)
    return list(units.values())


def _ready(report: MatrixReport, work: UnitWork) -> dict[str, str]:
    """What `work` made of each unit of the report's cases, by case id."""
    return {case_id: text for unit in _units(report.cases) for case_id, text in parse_ready(work(unit, {})).items()}


@pytest.mark.parametrize("strict", [False, True])
def test_junit_with_ready_testcases_is_the_whole_render(strict: bool) -> None:
    report = _report(_cases(), strict)
    ready = _ready(report, unit_testcases)
    assert set(ready) == {c.case_id for c in report.cases if settled(c)}
    assert len(ready) >= 6 and len(ready) < len(report.cases)
    assert render_junit(report, ready) == render_junit(report)
    if strict:  # a deviating pass fails under strict, so it is never taken ready
        assert 'type="wire_deviation"' in render_junit(report, ready)


@pytest.mark.parametrize("strict", [False, True])
def test_summary_with_ready_lines_is_the_whole_render(strict: bool) -> None:
    report = _report(_cases(), strict)
    ready = _ready(report, unit_entries)
    data = build_summary(report)
    validate_summary(data)
    assert render_summary(report, ready) == render_summary(report) == summary_text(data)


def test_a_ready_line_is_validated_as_written() -> None:
    """A ready line of a shape no other entry has is parsed back and checked: here a verdict the schema lacks."""
    report = _report(_cases(), False)
    ready = parse_ready(unit_entries(report.cases))
    case_id = report.cases[0].case_id
    shape, line = ready[case_id].split("\n", 1)
    ready[case_id] = shape.replace("'pass'", "'bogus'") + "\n" + line.replace('"pass"', '"bogus"')
    with pytest.raises(ReportError, match="summary invalid at cases/0/verdict"):
        render_summary(report, ready)


def test_ready_parts_hold_any_text() -> None:
    entries = [("a[x->y,stream]", "line\nwith\tcontrol \x01"), ("b", ""), ("c", "\u2028 \ud800")]
    assert parse_ready(ready_part(entries)) == dict(entries)
    assert parse_ready("") == {}


def _events_with_units(writers: list[object], cases: list[CaseResult], strict: bool) -> list[RunnerEvent]:
    """The events of a run whose units' parts the writers' own unit work made, as the engine sends them."""
    started, *finished, end = sample_events(cases)
    assert isinstance(started, MatrixStarted) and isinstance(end, MatrixFinished)
    work = dict(w.unit_work(started) for w in writers if isinstance(w, UnitWriter))
    units = [
        UnitDone(unit[0].scenario, unit[0].stream, {key: make(unit, {}) for key, make in work.items()})
        for unit in _units(cases)
    ]
    return [started, *units, *finished, MatrixFinished(**{**end.__dict__, "strict": strict})]


@pytest.mark.parametrize("strict", [False, True])
def test_the_writers_write_the_same_files_with_and_without_unit_parts(tmp_path: Path, strict: bool) -> None:
    cases = _cases()
    made = tmp_path / "made"
    writers = file_writers(made)
    emit(_events_with_units(list(writers), cases, strict), writers)
    whole = tmp_path / "whole"
    *events, end = sample_events(cases)
    assert isinstance(end, MatrixFinished)
    emit([*events, MatrixFinished(**{**end.__dict__, "strict": strict})], file_writers(whole))
    for name in ("junit.xml", "summary.json"):
        assert (made / name).read_bytes() == (whole / name).read_bytes(), name
