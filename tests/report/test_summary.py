"""summary.json: counts by verdict and by matrix cell, the gate, the case list; valid against its schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness.report import ReportError, build_summary, summary_schema, validate_summary
from harness.report.model import Collector
from harness.report.summary import summary_text
from harness.trace import DivergenceJSON
from tests.report.factory import RUN_ID, case, sample_events, tools_bug


@pytest.fixture(scope="module")
def summary(report_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((report_dir / "summary.json").read_text(encoding="utf-8"))
    return data


def test_schema_is_a_valid_json_schema() -> None:
    schema = summary_schema()
    jsonschema.validators.validator_for(schema).check_schema(schema)


def test_summary_validates_against_its_schema(summary: dict[str, Any]) -> None:
    validate_summary(summary)


def test_counts_by_verdict(summary: dict[str, Any]) -> None:
    assert summary["run_id"] == RUN_ID
    assert summary["total"] == 7
    assert summary["counts"] == {
        "pass": 1,
        "proxy_bug_request": 1,
        "proxy_bug_response": 2,
        "backend_issue": 1,
        "baseline_issue": 1,
        "unsupported": 1,
        "harness_error": 0,
    }


def test_cells_cover_the_whole_matrix_with_counts(summary: dict[str, Any]) -> None:
    cells = {(c["frontend"], c["backend"]): c for c in summary["cells"]}
    assert len(cells) == 6  # 2 frontends x 3 backends, empty cells included
    bug_cell = cells[("anthropic", "openai")]
    assert bug_cell["total"] == 2
    assert bug_cell["counts"]["proxy_bug_request"] == 1
    assert bug_cell["counts"]["proxy_bug_response"] == 1
    assert cells[("anthropic", "anthropic")]["total"] == 0
    assert cells[("openai", "anthropic")]["counts"] | {} == {
        "pass": 1,
        "proxy_bug_request": 0,
        "proxy_bug_response": 0,
        "backend_issue": 1,
        "baseline_issue": 0,
        "unsupported": 0,
        "harness_error": 0,
    }


def test_gate_new_bugs_duration(summary: dict[str, Any]) -> None:
    assert summary["exit_code"] == 1
    assert summary["new_proxy_bugs"] == [
        "text-basic[anthropic->openai,stream]",
        "tools-stream[anthropic->openai,stream]",
    ]
    assert summary["fixed"] == []
    assert summary["duration_s"] == 3.25


def test_cases_in_run_order_with_first_divergence_path(summary: dict[str, Any]) -> None:
    by_id = {c["case_id"]: c for c in summary["cases"]}
    assert [c["case_id"] for c in summary["cases"]][:2] == [
        "text-basic[openai->anthropic,stream]",
        "text-basic[anthropic->openai,stream]",
    ]
    bug = by_id["tools-stream[anthropic->openai,stream]"]
    assert bug["verdict"] == "proxy_bug_request"
    assert bug["first_divergence"] == "request.tools[0]"
    assert bug["trace"] == "cases/tools-stream__anthropic-to-openai_stream.json.gz"
    assert by_id["usage[openai->gemini,stream]"]["known"] == "gemini usage arrives late (issue 12)"
    assert by_id["text-basic[openai->anthropic,stream]"]["first_divergence"] is None


def test_schema_rejects_an_unknown_verdict_and_a_missing_count(summary: dict[str, Any]) -> None:
    bad = copy.deepcopy(summary)
    bad["cases"][0]["verdict"] = "flaky"
    with pytest.raises(ReportError, match="cases/0/verdict"):
        validate_summary(bad)
    bad = copy.deepcopy(summary)
    del bad["counts"]["unsupported"]
    with pytest.raises(ReportError, match="counts"):
        validate_summary(bad)


def test_failing_cases_are_grouped_by_verdict_and_cause(summary: dict[str, Any]) -> None:
    groups = summary["groups"]
    assert [(g["verdict"], g["first_divergence"], g["count"], g["new"]) for g in groups] == [
        ("proxy_bug_request", "request.tools[*]", 1, 1),
        ("proxy_bug_response", "events[*].text", 1, 1),
        ("proxy_bug_response", "response.usage.output_tokens", 1, 0),  # the known one
        ("backend_issue", None, 1, 1),
        ("baseline_issue", None, 1, 1),
    ]
    assert [g["title"] for g in groups] == [
        "upstream request: tool call lost at request.tools[*]",
        "text differs at events[*].text",
        "usage count differs at response.usage.output_tokens",
        groups[3]["reason"],  # a verdict no divergence decided is titled by its reason, never "(no divergence)"
        groups[4]["reason"],
    ]
    assert not any("no divergence" in g["title"] for g in groups)
    by_case = {c["case_id"]: c["group"] for c in summary["cases"]}
    assert by_case["text-basic[openai->anthropic,stream]"] is None  # a pass is in no group
    assert {g["id"] for g in groups} == {v for v in by_case.values() if v is not None}


def test_one_bug_across_cells_and_event_indices_is_one_group_of_eight() -> None:
    """The same cut text at events[3] on one backend and events[5] on another is one group."""
    same = [
        case(
            "text-basic",
            f,
            b,
            "proxy_bug_response",
            "translated run fails (text_equals)",
            stream=s,
            first=DivergenceJSON(path=f"events[{3 if b == 'openai' else 5}].text", left="Hello", right="Hel"),
        )
        for f in ("anthropic", "openai")
        for b in ("openai", "gemini")
        for s in (True, False)
    ]
    collector = Collector()
    reports = [collector.handle(e) for e in sample_events([*same, tools_bug()])]
    report = reports[-1]
    assert report is not None
    groups = build_summary(report)["groups"]
    assert [(g["count"], g["first_divergence"]) for g in groups] == [(1, "request.tools[*]"), (8, "events[*].text")]
    top = groups[1]  # request bugs come first (report order), then response bugs
    assert (top["example"], top["frontends"], top["backends"], top["scenarios"]) == (
        "text-basic[anthropic->openai,stream]",
        ["anthropic", "openai"],
        ["openai", "gemini"],
        ["text-basic"],
    )
    assert top["rerun"] == (
        "conformance run --scenario text-basic --frontend anthropic --backend openai --streaming stream"
    )
    assert len(top["cases"]) == 8


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"duration_ms": -1.0}, "cases/500/duration_ms"),
        ({"extra": "x"}, "cases/500"),
        ({"stream": "yes"}, "cases/500/stream"),
        ({"groups": [1]}, "cases/500/groups/0"),
        ({"verdict": "flaky"}, "cases/500/verdict"),
    ],
)
def test_a_bad_entry_among_many_alike_is_found(summary: dict[str, Any], change: dict[str, Any], where: str) -> None:
    """Case entries are checked once per shape: one that differs from hundreds of valid ones only in what the
    schema constrains is still checked, and named."""
    bad = copy.deepcopy(summary)
    first = bad["cases"][0]
    bad["cases"] = [{**first, "case_id": f"c{i}", "reason": f"r{i}", "duration_ms": float(i)} for i in range(1000)]
    validate_summary(bad)
    bad["cases"][500] = {**bad["cases"][500], **change}
    with pytest.raises(ReportError, match=where):
        validate_summary(bad)


def test_the_file_lists_one_case_a_line_under_an_indented_head(report_dir: Path, summary: dict[str, Any]) -> None:
    lines = (report_dir / "summary.json").read_text(encoding="utf-8").splitlines()
    start = lines.index('  "cases": [')
    entries = lines[start + 1 : -2]
    assert [json.loads(line.strip().rstrip(",")) for line in entries] == summary["cases"]
    assert all(line.startswith("    {") for line in entries)
    assert lines[-2:] == ["  ]", "}"]
    assert lines[1].startswith('  "schema_version": ')


@pytest.mark.parametrize(
    "data",
    [
        {"a": 1, "cases": [{"x": 'é\n"', "y": [1, 2]}, {"x": "b"}]},
        {"a": {"b": [1]}, "cases": []},
        {"cases": [{"x": 1}]},
        {"a": 1},
    ],
)
def test_summary_text_reads_back_as_the_same_data(data: dict[str, Any]) -> None:
    assert json.loads(summary_text(data)) == data
