"""Trace packs: the cases of one scenario and streaming mode that need no triage share one gzip file of JSON lines;
a case that needs triage keeps a file of its own; a pack reads back to the same cases, and a damaged one is a clear
error naming the file (and the line)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from harness.cli import main
from harness.trace import TraceError, bound, pack, read_cases, trace_file, trace_files
from harness.trace.model import CaseResult, Verdict
from harness.trace.pack import pack_line, write_pack
from tests.report.factory import dropped_call


def test_a_pack_reads_back_to_the_same_cases(tmp_path: Path) -> None:
    cases = [
        dropped_call(backend).model_copy(update={"verdict": Verdict.PASS, "reason": "ok"})
        for backend in ("openai", "anthropic")
    ]
    assert {trace_file(c) for c in cases} == {"tool-call-parallel__stream.pack.jsonl.gz"}
    path = write_pack(tmp_path, trace_file(cases[0]), [pack_line(c) for c in cases])
    assert read_cases(path) == cases
    assert trace_files(tmp_path) == [path]


def test_a_huge_pass_is_one_line_within_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--keep-traces all` packs whole passes: one whose trace is past the bound is cut as every trace is, and
    stays one line."""
    for module in (pack, bound):
        monkeypatch.setattr(module, "LARGE_CHARS", 1000)
    monkeypatch.setattr(bound, "MAX_STRING", 1000)
    case = dropped_call().model_copy(update={"verdict": Verdict.PASS, "reason": "x" * 5000})
    line = pack.pack_line(case)
    assert "\n" not in line
    back = CaseResult.model_validate_json(line)
    assert back.cut == ["reason: 4,000 of 5,000 characters cut"] and len(back.reason) < 1100


def test_a_case_that_needs_triage_keeps_a_file_of_its_own() -> None:
    assert trace_file(dropped_call()) == "tool-call-parallel__anthropic-to-openai_stream.json.gz"


def test_a_truncated_pack_is_an_error_naming_it(tmp_path: Path) -> None:
    case = dropped_call().model_copy(update={"verdict": Verdict.PASS})
    line = pack_line(case)
    path = tmp_path / "x.pack.jsonl.gz"
    path.write_bytes(gzip.compress(f"{line}\n{line[:100]}".encode()))
    with pytest.raises(TraceError, match=r"x\.pack\.jsonl\.gz: cannot read trace pack: it ends inside a line"):
        read_cases(path)
    path.write_bytes(gzip.compress(f"{line}\n{{}}\n".encode()))
    with pytest.raises(TraceError, match=r"x\.pack\.jsonl\.gz line 2: case trace invalid"):
        read_cases(path)


def test_a_run_packs_its_passes_and_keeps_a_caught_bug_apart(tmp_path: Path) -> None:
    args = ["run", "-q", "-j", "1", "--frontend", "openai", "--backend", "anthropic,openai", "--scenario",
            "tool-call-parallel,text-basic", "--streaming", "stream", "--reports", str(tmp_path), "--run-id", "r",
            "--hooks", "second-parallel-tool-call-dropped"]  # fmt: skip
    assert main(args) == 1
    folder = tmp_path / "r" / "cases"
    names = [p.name for p in trace_files(folder)]
    assert "tool-call-parallel__openai-to-anthropic_stream.json.gz" in names  # the caught bug: its own file
    [pack] = [name for name in names if name.endswith(".pack.jsonl.gz")]
    passes = read_cases(folder / pack)
    assert pack == "text-basic__stream.pack.jsonl.gz"
    assert [(c.case_id, c.verdict) for c in passes] == [
        ("text-basic[openai->anthropic,stream]", "pass"),
        ("text-basic[openai->openai,stream]", "pass"),
    ]
    assert main(["report", "--run", str(tmp_path / "r"), "--quiet", "--gate"]) == 1  # re-renders from both kinds
