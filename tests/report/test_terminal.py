"""Terminal summary as a CI log reads it (no TTY, 80 columns): the transposed matrix with compact cells and a legend,
failing cases grouped with an example and its rerun command, totals; the gate line; and the progress writer."""

from __future__ import annotations

import io

from rich.console import Console

from harness.report import ProgressWriter, TerminalWriter, emit, gate_line
from harness.report.model import VERDICT_INFO, verdict_info
from harness.runner.run_events import CaseFinished, CaseJudged, RunnerEvent
from harness.trace import CaseResult
from tests.report.factory import case, sample_cases, sample_events


def _printed(cases: list[CaseResult] | None = None, width: int = 80) -> str:
    out = io.StringIO()
    writer = TerminalWriter(Console(file=out, width=width, color_system=None))
    emit(sample_events(cases), [writer])
    return out.getvalue()


def test_every_line_fits_80_columns_with_the_longer_axis_down_the_page() -> None:
    text = _printed()
    assert all(len(line) <= 80 for line in text.splitlines() if "rerun:" not in line)
    lines = text.splitlines()
    header = next(line for line in lines if "backend \\ frontend" in line)
    assert header.index("anthropic") < header.index("openai")
    rows = [line.split()[0] for line in lines[lines.index(header) + 2 :][:3]]
    assert rows == ["anthropic", "openai", "gemini"]  # the 3 backends are rows, the 2 frontends columns


def test_cells_count_passes_then_marked_verdicts_explained_by_the_legend() -> None:
    lines = _printed().splitlines()
    openai_row = next(line for line in lines if line.startswith("openai "))
    # anthropic -> openai: a request bug (Q) and a response bug (S); no case openai -> openai.
    assert openai_row.split()[1:] == ["1Q", "1S", "-"]
    gemini_row = next(line for line in lines if line.startswith("gemini "))
    assert gemini_row.split()[1:] == ["1B", "1S", "1u"]
    legend = " ".join(lines[next(i for i, x in enumerate(lines) if x.startswith("cells:")) :][:2])
    assert "Q proxy bug (request)" in legend and "u unsupported" in legend


def test_identical_bugs_are_one_group_with_count_example_and_rerun() -> None:
    same = [
        case("text-basic", f, b, "proxy_bug_response", "translated run fails (text_equals)", stream=s)
        for f in ("anthropic", "openai")
        for b in ("openai", "gemini")
        for s in (True, False)
    ]
    text = _printed(same)
    assert "proxy bug (response): 8 cases in 1 group" in text
    assert text.count(" x proxy bug (response)") == 1
    assert "e.g. text-basic[anthropic->openai,stream]" in text
    assert (
        "rerun: conformance run --scenario text-basic --frontend anthropic --backend openai --streaming stream" in text
    )
    assert "frontends (2): anthropic, openai" in text


def test_groups_show_where_and_why_and_the_known_count() -> None:
    text = _printed()
    assert 'text differs at events[*].text: expected "Hello world", actual "Hello wor"' in text
    assert "translated run fails (text_equals)" in text
    assert "1 known, 0 new" in text  # the usage bug listed in the known-failures file
    assert "backend issue: 1 case in 1 group" in text
    assert "unsupported: " not in text  # counted, not listed


def test_long_divergence_values_are_cut() -> None:
    text = _printed()
    shown = text[text.index("at request.tools[*]") :].split("upstream request differs")[0]
    assert "…" in shown and "actual <missing>" in " ".join(shown.split())


def test_brackets_in_names_are_not_rich_markup() -> None:
    assert "tools-stream[anthropic->openai,stream]" in _printed()


def test_gate_line_says_outcome_exit_code_and_groups() -> None:
    writer = TerminalWriter(Console(file=io.StringIO()), summary=False)
    emit(sample_events(), [writer])
    assert writer.report is not None
    assert gate_line(writer.report) == "gate: FAIL (exit 1): 2 new proxy bugs in 2 groups"
    passing = TerminalWriter(Console(file=io.StringIO()), summary=False)
    emit(sample_events([sample_cases()[0], sample_cases()[-1]]), [passing])
    assert passing.report is not None
    assert gate_line(passing.report) == (
        "gate: PASS (exit 0): no new proxy bugs; 1 known proxy bug(s) accepted by the known-failures file"
    )


def test_quiet_writer_prints_nothing_but_keeps_the_report() -> None:
    out = io.StringIO()
    writer = TerminalWriter(Console(file=out), summary=False)
    emit(sample_events(), [writer])
    assert out.getvalue() == "" and writer.report is not None and len(writer.report.cases) == 7


def test_a_verdict_without_presentation_is_shown_by_its_name() -> None:
    assert "harness_error" in VERDICT_INFO  # presentation may come before the verdict does
    info = verdict_info("brand_new_verdict")
    assert (info.label, info.mark, info.listed) == ("brand new verdict", "br", True)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _judged(events: list[RunnerEvent]) -> list[RunnerEvent]:
    """The events progress counts: each case as it is judged (CaseJudged), not when it is reported in order."""
    return [CaseJudged(e.result) if isinstance(e, CaseFinished) else e for e in events]


def _progress_lines(steps: list[float], cases: int) -> list[str]:
    out, clock = io.StringIO(), _Clock()
    writer = ProgressWriter(Console(file=out, width=80), clock=clock, step=0.25, every_s=30, min_gap_s=5)
    one = sample_cases()[0]
    events = _judged(sample_events([one.model_copy(update={"case_id": f"c{i}"}) for i in range(cases)]))
    writer.handle(events[0])
    for at, event in zip(steps, events[1:-1], strict=True):
        clock.now = at
        writer.handle(event)
    writer.handle(events[-1])
    return out.getvalue().splitlines()


def test_progress_lines_count_cases_at_a_bounded_rate() -> None:
    # 8 cases, one per second: a quarter done at 2 s is too soon after the start (5 s gap); at 6 s (75%) a line.
    lines = _progress_lines([1, 2, 3, 4, 5, 6, 7, 8], 8)
    assert lines == [
        "running 8 cases",
        "[00:05] 5/8 cases (62%), eta 00:03: 5 pass",
        "[00:08] 8/8 cases (100%): 8 pass",
    ]


def test_progress_lines_also_come_with_time_when_cases_are_slow() -> None:
    # 40 cases, one per 10 s: a line every 30 s at most apart, and one as each quarter is crossed.
    lines = _progress_lines([10.0 * (i + 1) for i in range(40)], 40)[1:-1]
    seconds = [int(line[1:3]) * 60 + int(line[4:6]) for line in lines]
    assert seconds == [30, 60, 90, 100, 130, 160, 190, 200, 230, 260, 290, 300, 330, 360, 390]
    assert "[01:40] 10/40 cases (25%), eta 05:00: 10 pass" in lines
    assert all(len(line) <= 80 for line in lines)


def test_progress_draws_a_bar_on_a_terminal() -> None:
    out = io.StringIO()
    writer = ProgressWriter(Console(file=out, width=120, force_terminal=True))
    events = _judged(sample_events())
    for event in events[:3]:
        writer.handle(event)
    assert writer._bar is not None
    writer._bar.refresh()
    writer.handle(events[-1])
    assert "2/7" in out.getvalue()


def test_progress_eta_is_the_pace_since_the_first_case_not_the_start() -> None:
    # A minute of start (a gateway coming up), then a case a second: a quarter in, 75 s are left, not the 4 min 12 s
    # that the start, counted as case time, would say.
    lines = _progress_lines([60.0 + i for i in range(100)], 100)
    assert "[01:24] 25/100 cases (25%), eta 01:15: 25 pass" in lines
