"""Terminal summary (matrix table, proxy bugs with first divergence, gate) and the progress helper."""

from __future__ import annotations

import io

from rich.console import Console

from harness.report import TerminalWriter, emit, progress
from tests.report.factory import sample_cases, sample_events


def _printed(width: int = 160) -> str:
    out = io.StringIO()
    emit(sample_events(), [TerminalWriter(Console(file=out, width=width, color_system=None))])
    return out.getvalue()


def test_matrix_rows_columns_and_cell_counts() -> None:
    text = _printed()
    lines = text.splitlines()
    header = next(line for line in lines if "frontend \\ backend" in line)
    assert header.index("anthropic") < header.index("openai") < header.index("gemini")
    anthropic_row = next(line for line in lines if line.startswith("│ anthropic"))
    assert "1 bug:req 1 bug:resp" in anthropic_row
    assert "1 baseline" in anthropic_row
    openai_row = next(line for line in lines if line.startswith("│ openai"))
    assert "1 pass 1 backend" in openai_row
    assert "1 bug:resp 1 unsup" in openai_row


def test_proxy_bugs_listed_with_first_divergence_and_gate() -> None:
    text = _printed()
    assert "proxy bugs (3):" in text
    assert "proxy_bug_response text-basic[anthropic->openai,stream]" in text
    assert 'first divergence at events[2].text: "Hello world" != "Hello wor"' in text
    assert "usage[openai->gemini,stream] (known: gemini usage arrives late (issue 12))" in text
    assert "7 cases in 3.2s: 1 pass, 1 proxy_bug_request, 2 proxy_bug_response" in text
    assert text.rstrip().endswith("gate: FAIL (2 new proxy bug(s))")


def test_long_divergence_values_are_cut_on_the_terminal() -> None:
    text = _printed(width=400)
    line = next(x for x in text.splitlines() if "first divergence at request.tools[0]" in x)
    assert "…" in line and "!= <missing>" in line


def test_brackets_in_names_are_not_rich_markup() -> None:
    # Case ids contain `[...]`, which rich would otherwise swallow as a style tag.
    assert "tools-stream[anthropic->openai,stream]" in _printed()


def test_passing_run_prints_gate_pass() -> None:
    out = io.StringIO()
    passing = [c for c in sample_cases() if c.verdict == "pass"]
    emit(sample_events(passing), [TerminalWriter(Console(file=out, width=120, color_system=None))])
    assert "proxy bugs (" not in out.getvalue()
    assert "gate: PASS (no new proxy bugs)" in out.getvalue()


def test_progress_counts_cases_and_bugs_and_stays_silent_off_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, width=120)
    assert not console.is_terminal
    cases = sample_cases()
    with progress(len(cases), console) as handle:
        for case in cases:
            handle.advance(case)
        task = handle.progress.tasks[0]
        assert (task.completed, task.total) == (7, 7)
        assert task.fields["bugs"] == 3
        assert task.fields["latest"] == "usage[openai->gemini,stream]"
    assert out.getvalue() == ""


def test_progress_draws_on_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=True)
    with progress(2, console) as handle:
        handle.advance(sample_cases()[1])
        handle.progress.refresh()
    assert "1/2" in out.getvalue()
    assert "1 proxy bugs" in out.getvalue()
