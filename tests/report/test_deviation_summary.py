"""The terminal summarises wire deviations by rule (issue 23: Portkey's gate printed 2,362 lines, almost all
per-chunk warnings): one line per rule with its case and occurrence counts and one example."""

from __future__ import annotations

from harness.report.terminal import deviation_lines
from harness.trace.model import Deviation
from tests.report.factory import text_bug, tools_bug


def test_deviations_are_one_line_per_rule_with_counts_and_an_example() -> None:
    chunk = Deviation(rule="openai.created_present", message="chunk 3 has no created")
    tier = Deviation(rule="responses.service_tier", message="x" * 400)
    first = text_bug().model_copy(update={"deviations": [chunk] * 40 + [tier]})
    second = tools_bug().model_copy(update={"deviations": [chunk] * 2})
    lines = [line.plain for line in deviation_lines([first, second])]
    assert lines[0] == f"  openai.created_present: 2 cases, 42 times; e.g. {first.case_id}: chunk 3 has no created"
    assert lines[1].startswith(f"  responses.service_tier: 1 case, 1 time; e.g. {first.case_id}: xxx")
    assert lines[1].endswith("x…")
    assert len(lines) == 2
