"""The runner end to end on the committed cassettes: verdicts, determinism under workers, a broken adapter
caught with the right verdict and first divergence, the known-failures gate, socket mode, missing cassettes."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from harness import ir
from harness.proxy import TranslateHooks
from harness.runner.engine import Engine
from harness.runner.known import load_known, write_known
from harness.runner.plan import MatrixOptions
from harness.trace import read_cases, trace_files
from harness.trace.model import CaseResult
from tests.conftest import REPO
from tests.runner import hooks


def options(tmp_path: Path, **kw: object) -> MatrixOptions:
    base = MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        reports=tmp_path / "reports",
        frontends=["openai", "anthropic"],
        backends=["openai", "anthropic"],
        only=["text-basic", "tool-call-parallel"],
        known=tmp_path / "known.toml",
        run_id="t",
        keep_traces="all",  # these tests read whole traces back
    )
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def run(opts: MatrixOptions) -> tuple[int, list[CaseResult]]:
    engine = Engine(opts)
    finished = engine.run()
    return finished.exit_code, engine.results


def test_clean_matrix_passes_and_writes_a_trace_per_case(tmp_path: Path) -> None:
    code, results = run(options(tmp_path))
    assert code == 0
    assert len(results) == 2 * 2 * 2 * 2
    assert {r.verdict for r in results} == {"pass"}, [(r.case_id, r.reason) for r in results if r.verdict != "pass"]
    ids = [r.case_id for r in results]
    assert ids[0] == "text-basic[anthropic->anthropic,stream]"
    assert "tool-call-parallel[openai->anthropic,nonstream]" in ids
    translated = results[1].runs["translated"]
    assert translated.mode == "translate" and translated.frontend_request and translated.upstream_request
    files = trace_files(tmp_path / "reports" / "t" / "cases")
    assert sorted(c.case_id for path in files for c in read_cases(path)) == sorted(ids)
    assert len(files) == 2 * 2  # clean passes: one pack per scenario and streaming mode


def test_parallel_run_reports_exactly_what_a_serial_run_does(tmp_path: Path) -> None:
    drop_second_call = TranslateHooks(on_upstream_event=hooks.drop_second_block)
    _, serial = run(options(tmp_path / "a", hooks=drop_second_call))
    _, parallel = run(options(tmp_path / "b", hooks=drop_second_call, jobs=3))
    assert [(r.case_id, r.verdict, r.reason, r.first_divergence) for r in serial] == [
        (r.case_id, r.verdict, r.reason, r.first_divergence) for r in parallel
    ]
    assert {r.verdict for r in serial} == {"pass", "proxy_bug_response"}


def test_tools_dropped_upstream_is_a_request_side_proxy_bug(tmp_path: Path) -> None:
    hooks = TranslateHooks(on_upstream_request=lambda r: r.model_copy(update={"tools": []}))
    code, results = run(options(tmp_path, hooks=hooks, only=["tool-call-parallel"]))
    assert code == 1
    assert {r.verdict for r in results} == {"proxy_bug_request"}
    first = results[0].first_divergence
    assert first is not None and first.path.startswith("request.tools")


def test_corrupted_text_is_a_response_side_proxy_bug_pointing_at_the_text(tmp_path: Path) -> None:
    def corrupt(event: ir.StreamEvent) -> tuple[ir.StreamEvent, ...]:
        if isinstance(event, ir.TextDelta):
            return (event.model_copy(update={"text": event.text.upper()}),)
        return (event,)

    # The event hook acts on streamed exchanges, so only streamed cases can see the corruption.
    hooks = TranslateHooks(on_upstream_event=corrupt)
    code, results = run(options(tmp_path, hooks=hooks, only=["text-basic"], streams=(True,)))
    assert code == 1
    assert {r.verdict for r in results} == {"proxy_bug_response"}
    stream_case = next(r for r in results if r.stream)
    assert stream_case.first_divergence is not None
    assert stream_case.first_divergence.path.endswith(".text")
    assert stream_case.first_divergence.event_index is not None
    assert "text_equals" in stream_case.reason


def test_known_failures_keep_the_gate_green_and_fixed_cases_are_listed(tmp_path: Path) -> None:
    hooks = TranslateHooks(on_upstream_request=lambda r: r.model_copy(update={"tools": []}))
    opts = options(tmp_path, hooks=hooks, only=["tool-call-parallel"])
    code, results = run(opts)
    assert code == 1
    update = write_known(opts.known, results, {})
    assert update.added == [r.case_id for r in results] and update.count == len(results)
    assert (update.removed, update.changed, update.kept) == ([], [], [])
    assert set(load_known(opts.known)) == {r.case_id for r in results}
    code, _ = run(options(tmp_path, hooks=hooks, only=["tool-call-parallel"], run_id="t2"))
    assert code == 0
    clean = Engine(options(tmp_path, only=["tool-call-parallel"], run_id="t3"))
    finished = clean.run()
    assert finished.exit_code == 0 and sorted(finished.fixed) == sorted(r.case_id for r in results)


def test_socket_mode_gives_the_same_verdicts_serial_and_in_workers(tmp_path: Path) -> None:
    _, in_process = run(options(tmp_path / "a", only=["text-basic"]))
    _, socket = run(options(tmp_path / "b", only=["text-basic"], socket=True))
    assert [(r.case_id, r.verdict) for r in socket] == [(r.case_id, r.verdict) for r in in_process]
    _, socket = run(options(tmp_path / "c", only=["text-basic"], socket=True, jobs=2))
    assert [(r.case_id, r.verdict) for r in socket] == [(r.case_id, r.verdict) for r in in_process]


def test_a_missing_cassette_is_an_error_run_that_says_how_to_record_it(tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    shutil.copytree(REPO / "cassettes" / "openai", cassettes / "openai")
    shutil.copytree(REPO / "cassettes" / "anthropic", cassettes / "anthropic")
    (cassettes / "anthropic" / "text-basic.stream.yaml").unlink()
    _, results = run(options(tmp_path, cassettes=cassettes, only=["text-basic"]))
    case = next(r for r in results if r.case_id == "text-basic[openai->anthropic,stream]")
    translated = case.runs["translated"]
    assert translated.status == "error"
    assert "conformance record --backend anthropic --scenario text-basic" in (translated.error or "")
    assert case.verdict == "harness_error"


def test_cases_needing_a_missing_capability_are_unsupported_with_the_reason(tmp_path: Path) -> None:
    _, results = run(options(tmp_path, frontends=["openai"], backends=["anthropic"], only=["json-object"]))
    assert {r.verdict for r in results} == {"unsupported"}
    assert "anthropic frontend lacks json_object" not in results[0].reason
    assert "anthropic backend lacks json_object" in results[0].reason


def test_unknown_scenario_or_protocol_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match="unknown scenario 'tool-call-singel' \\(did you mean 'tool-call-single'\\?\\)"
    ):
        Engine(options(tmp_path, only=["tool-call-singel"]))
    with pytest.raises(ValueError, match="backend 'zzz': unknown protocol; backends: anthropic, "):
        Engine(options(tmp_path, backends=["zzz"]))
    with pytest.raises(ValueError, match="frontend 'groq': a backend-only profile of openai"):
        Engine(options(tmp_path, frontends=["groq"]))
