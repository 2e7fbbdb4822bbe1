"""`conformance report`: re-render a run from its case traces through the same writers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.report import ReportError, emit, events_for_run, file_writers
from harness.report.rerender import UNKNOWN_SUT
from harness.runner.run_events import CaseFinished, MatrixFinished, MatrixStarted
from harness.trace import write_case
from tests.report.factory import RUN_ID, sample_cases, sample_events


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A run folder as the runner leaves it: case traces and the three report files."""
    folder = tmp_path / RUN_ID
    for case in sample_cases():
        write_case(case, folder / "cases")
    emit(sample_events(), file_writers(folder))
    return folder


def _texts(folder: Path) -> dict[str, str]:
    return {name: (folder / name).read_text(encoding="utf-8") for name in ("index.html", "junit.xml", "summary.json")}


def test_rerender_reproduces_the_runners_reports_byte_for_byte(run_dir: Path) -> None:
    before = _texts(run_dir)
    # summary.json stays as the run left it (it holds the run's duration and order, which the case traces do not);
    # the re-render's own goes beside it.
    for name in ("index.html", "junit.xml"):
        (run_dir / name).write_text("stale", encoding="utf-8")
    assert main(["report", "--run", str(run_dir), "--quiet"]) == 0
    assert _texts(run_dir) == before
    assert (run_dir / "summary.rerender.json").read_text(encoding="utf-8") == before["summary.json"]


def test_a_rerender_never_overwrites_the_runs_summary(run_dir: Path) -> None:
    original = (run_dir / "summary.json").read_text(encoding="utf-8")
    (next((run_dir / "cases").iterdir())).unlink()  # one trace fewer than the summary knows: no plan to say so
    assert main(["report", "--run", str(run_dir), "--quiet"]) == 0
    assert (run_dir / "summary.json").read_text(encoding="utf-8") == original
    assert json.loads((run_dir / "summary.rerender.json").read_text(encoding="utf-8")) != json.loads(original)


def test_traces_that_are_not_the_plan_are_refused_with_exit_2(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    planned = [c.case_id for c in sample_cases()]
    (run_dir / "plan.json").write_text(json.dumps({"run_id": RUN_ID, "options": [], "case_ids": planned}), "utf-8")
    assert main(["report", "--run", str(run_dir), "--quiet", "--gate"]) == 1  # all there: the run's own gate
    # A run killed before it finished (or traces deleted since): the gate must not pass on what is left.
    traces = sorted((run_dir / "cases").iterdir())
    traces[0].unlink()
    capsys.readouterr()
    assert main(["report", "--run", str(run_dir), "--quiet", "--gate"]) == 2
    err = capsys.readouterr().err
    assert f"1 of the {len(planned)} planned cases have no trace" in err and "did not finish" in err
    # A trace the run never planned is refused too.
    (run_dir / "plan.json").write_text(json.dumps({"run_id": RUN_ID, "options": [], "case_ids": planned[1:]}), "utf-8")
    for case in sample_cases():
        write_case(case, run_dir / "cases")
    assert main(["report", "--run", str(run_dir), "--quiet", "--gate"]) == 2
    assert "were not planned" in capsys.readouterr().err


def test_events_keep_run_order_and_facts_from_the_previous_summary(run_dir: Path) -> None:
    events = events_for_run(run_dir)
    started, finished = events[0], events[-1]
    assert isinstance(started, MatrixStarted) and isinstance(finished, MatrixFinished)
    assert started.run_id == RUN_ID and started.sut == "built-in proxy"
    assert list(started.backends) == ["anthropic", "openai", "gemini"]
    cases = [e.result.case_id for e in events[1:-1] if isinstance(e, CaseFinished)]
    assert cases == [c.case_id for c in sample_cases()]
    assert finished.duration_s == 3.25
    assert finished.exit_code == 1
    assert list(finished.new_proxy_bugs) == [
        "text-basic[anthropic->openai,stream]",
        "tools-stream[anthropic->openai,stream]",
    ]


def test_without_a_summary_order_and_duration_come_from_the_cases(run_dir: Path) -> None:
    (run_dir / "summary.json").unlink()
    events = events_for_run(run_dir)
    started, finished = events[0], events[-1]
    assert isinstance(started, MatrixStarted) and isinstance(finished, MatrixFinished)
    assert started.sut == UNKNOWN_SUT
    assert started.run_id == RUN_ID  # the folder name
    assert list(started.backends) == ["anthropic", "gemini", "openai"]
    assert list(started.case_ids) == sorted(c.case_id for c in sample_cases())
    assert finished.duration_s == pytest.approx(7 * 0.040)
    assert main(["report", "--run", str(run_dir), "--quiet"]) == 0
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))  # none to keep: written anew
    assert summary["counts"]["proxy_bug_response"] == 2
    assert summary["exit_code"] == 1


def test_gate_flag_returns_the_runs_exit_code(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--run", str(run_dir), "--gate"]) == 1
    captured = capsys.readouterr()
    assert "gate: FAIL (exit 1): 2 new proxy bugs in 2 groups" in captured.out
    assert f"wrote {run_dir / 'index.html'}" in captured.err


def test_missing_or_invalid_traces_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--run", str(tmp_path), "--quiet"]) == 2
    assert f"no case traces in {tmp_path / 'cases'}" in capsys.readouterr().err
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "bad.json").write_text('{"case_id": 3}', encoding="utf-8")
    with pytest.raises(ReportError, match=r"bad\.json"):
        events_for_run(tmp_path)
    assert main(["report", "--run", str(tmp_path), "--quiet", "--gate"]) == 2
