"""Slim traces: a clean pass or an unsupported case drops its runs' wire, requests and events but keeps what the
report shows of it (verdict, checks, statuses, timings, time to first token); anything that needs triage is kept
whole; `conformance run` keeps them so by default and whole with `--keep-traces all`."""

from __future__ import annotations

from pathlib import Path

from harness.cli import main
from harness.report.timeline import first_token_ms
from harness.trace import read_cases
from harness.trace.model import Verdict
from harness.trace.slim import SlimRuns, needs_triage, slim
from tests.report.factory import dropped_call, text_bug


def test_what_needs_triage_is_kept_whole() -> None:
    bug = dropped_call()
    passing = bug.model_copy(update={"verdict": Verdict.PASS, "reason": "ok"})
    assert needs_triage(bug) and needs_triage(text_bug())
    assert not needs_triage(passing)
    assert not needs_triage(passing.model_copy(update={"verdict": Verdict.UNSUPPORTED}))
    for verdict in (Verdict.BACKEND_ISSUE, Verdict.BASELINE_ISSUE, Verdict.HARNESS_ERROR):
        assert needs_triage(passing.model_copy(update={"verdict": verdict}))


def test_a_slim_case_keeps_what_the_report_shows() -> None:
    whole = dropped_call().model_copy(update={"verdict": Verdict.PASS})
    thin = slim(whole)
    for role, run in whole.runs.items():
        kept = thin.runs[role]
        assert kept.upstream_events is None and kept.frontend_request is None and kept.wire.frontend == ""
        assert (kept.status, kept.checks, kept.timings.total_ms) == (run.status, run.checks, run.timings.total_ms)
        assert first_token_ms(kept) == first_token_ms(run) is not None
    assert len(thin.model_dump_json()) < len(whole.model_dump_json()) / 2


def test_run_keeps_passing_cases_slim_unless_asked(tmp_path: Path) -> None:
    args = ["run", "-q", "-j", "1", "--frontend", "anthropic", "--backend", "openai", "--scenario", "text-basic",
            "--streaming", "stream", "--reports", str(tmp_path)]  # fmt: skip
    assert main([*args, "--run-id", "slim"]) == 0
    assert main([*args, "--run-id", "whole", "--keep-traces", "all"]) == 0
    name = "text-basic__stream.pack.jsonl.gz"  # a clean pass is packed with its unit's other cases
    [thin], [whole] = read_cases(tmp_path / "slim" / "cases" / name), read_cases(tmp_path / "whole" / "cases" / name)
    assert thin.verdict == whole.verdict == "pass"
    assert thin.runs["translated"].wire.frontend == "" and whole.runs["translated"].wire.frontend != ""
    assert (tmp_path / "slim" / "cases" / name).stat().st_size < (tmp_path / "whole" / "cases" / name).stat().st_size


def test_a_run_shared_by_several_cases_is_slimmed_once() -> None:
    whole = dropped_call().model_copy(update={"verdict": Verdict.PASS})
    other = whole.model_copy(update={"case_id": "other"})  # the same run objects, as a unit's cases share baselines
    done: SlimRuns = {}
    first, second = slim(whole, done), slim(other, done)
    assert first == slim(whole) and second.runs == slim(other).runs
    for role in whole.runs:
        assert first.runs[role] is second.runs[role]
    assert len(done) == len(whole.runs)
