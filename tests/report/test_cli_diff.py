"""`conformance diff`: two case traces (or run traces) compared on their SDK views, first divergence first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest

from harness.cli import main
from harness.trace import read_trace_bytes, write_case
from tests.report.factory import sample_cases


@pytest.fixture
def cases_dir(tmp_path: Path) -> Path:
    for case in sample_cases():
        write_case(case, tmp_path)
    return tmp_path


def _file(folder: Path, stem: str) -> str:
    return str(folder / f"{stem}.json.gz")


def test_translated_runs_that_diverge_exit_1_with_the_first_divergence(
    cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _file(cases_dir, "text-basic__openai-to-anthropic_stream")
    bad = _file(cases_dir, "text-basic__anthropic-to-openai_stream")
    assert main(["diff", good, bad]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("(translated): 2 divergence(s)")
    assert lines[1] == '1. events[2].text (stream event 2): "Hello world" != "Hello wor"  [values_changed]'
    assert lines[2] == '2. response.content[0].text: "Hello world" != "Hello wor"  [values_changed]'


def test_roles_picked_per_side_and_json_output(cases_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _file(cases_dir, "text-basic__anthropic-to-openai_stream")
    assert main(["diff", bad, bad, "--left-role", "baseline_frontend", "--json"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert found[0] == {
        "path": "events[2].text",
        "left": "Hello world",
        "right": "Hello wor",
        "event_index": 2,
        "change": "values_changed",
    }


def test_same_view_after_normalization_exits_0(cases_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = _file(cases_dir, "text-basic__openai-to-anthropic_stream")
    # The two baselines of a case differ only in ids/models/chunking, which the normalization rules remove.
    assert main(["diff", case, case, "--left-role", "baseline_frontend", "--right-role", "baseline_backend"]) == 0
    assert capsys.readouterr().out.endswith("(baseline_backend): no divergences\n")


def test_run_trace_files_and_raw_mode(cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(read_trace_bytes(Path(_file(cases_dir, "text-basic__anthropic-to-openai_stream"))))
    left, right = tmp_path / "left.json", tmp_path / "right.json"
    left.write_text(json.dumps(data["runs"]["baseline_frontend"]), encoding="utf-8")
    right.write_text(json.dumps(data["runs"]["translated"]), encoding="utf-8")
    assert main(["diff", str(left), str(right), "--json"]) == 1
    normalized = json.loads(capsys.readouterr().out)
    assert main(["diff", str(left), str(right), "--json", "--raw"]) == 1
    raw = json.loads(capsys.readouterr().out)
    # Without normalization the deltas are compared one by one: " world" vs " wor" is at event 3.
    assert normalized[0]["path"] == "events[2].text"
    assert raw[0]["path"] == "events[3].text"


def test_unreadable_inputs_exit_2(cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unsupported = _file(cases_dir, "thinking__openai-to-gemini_nonstream")
    assert main(["diff", unsupported, unsupported]) == 2
    assert "has no translated run (it has: none)" in capsys.readouterr().err
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2]", encoding="utf-8")
    assert main(["diff", str(junk), str(junk)]) == 2
    assert "not a trace" in capsys.readouterr().err
    missing = tmp_path / "nope.json"
    assert main(["diff", str(missing), str(junk)]) == 2
    assert "cannot read trace" in capsys.readouterr().err
    invalid = tmp_path / "invalid.json"
    invalid.write_text('{"role": "translated"}', encoding="utf-8")
    assert main(["diff", str(invalid), str(invalid)]) == 2
    assert "run trace invalid" in capsys.readouterr().err


def test_role_choices_are_the_trace_roles() -> None:
    # The CLI spells the roles out to keep `--help` light; they must stay the trace model's roles.
    from harness.cli.diff import ROLES
    from harness.report.model import ROLES as REPORT_ROLES
    from harness.trace.model import RunRole

    assert set(ROLES) == set(get_args(RunRole))
    assert ROLES == REPORT_ROLES
