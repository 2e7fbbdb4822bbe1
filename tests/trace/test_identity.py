"""A case and a run have one identity each: frozen, hashable, ordered, picklable, and every derived form (case id,
run key, route, cassette path) is a property of them."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from harness.trace import Case, Recording, Run, RunTrace, route_name

CASE = Case("tool-call-parallel", "anthropic", "groq", True)


def test_a_case_knows_its_id_and_its_three_runs() -> None:
    assert CASE.case_id == "tool-call-parallel[anthropic->groq,stream]"
    runs = CASE.runs("openai")
    assert runs["baseline_frontend"] == Run("baseline_frontend", "anthropic", "anthropic", "tool-call-parallel", True)
    assert runs["baseline_backend"] == Run("baseline_backend", "openai", "groq", "tool-call-parallel", True)
    assert runs["translated"] == Run("translated", "anthropic", "groq", "tool-call-parallel", True)


def test_a_run_knows_its_key_mode_route_and_cassette() -> None:
    translated = CASE.runs("openai")["translated"]
    assert translated.key == "translated:anthropic:groq:tool-call-parallel:s"
    assert translated.mode == "translate"
    assert (
        translated.route
        == "tool-call-parallel--groq--translate"
        == route_name("tool-call-parallel", "groq", "translate")
    )
    assert translated.cassette(Path("cassettes")) == Path("cassettes/groq/tool-call-parallel.stream.yaml")
    baseline = CASE.runs("openai")["baseline_backend"]
    assert (baseline.mode, baseline.route) == ("passthrough", "tool-call-parallel--groq--passthrough")
    assert baseline.recording == translated.recording == Recording("groq", "tool-call-parallel", True)


@pytest.mark.parametrize("value", [CASE, CASE.runs("openai")["translated"], Recording("openai", "text-basic", False)])
def test_identities_are_frozen_hashable_and_picklable(value: object) -> None:
    assert pickle.loads(pickle.dumps(value)) == value
    assert hash(pickle.loads(pickle.dumps(value))) == hash(value)
    with pytest.raises(AttributeError):
        value.stream = False  # type: ignore[attr-defined]


def test_runs_order_deterministically() -> None:
    runs = [run for case in (CASE, Case("text-basic", "openai", "anthropic", False)) for run in case.runs("x").values()]
    assert sorted(runs) == sorted(reversed(runs))
    assert sorted(runs)[0].role == "baseline_backend"


def test_a_recording_reads_back_from_its_path() -> None:
    recording = Recording("gemini", "error-rate-limit-429", False)
    assert Recording.from_path(recording.path(Path("/c"))) == recording
    assert recording.relative_path == "gemini/error-rate-limit-429.nonstream.yaml"
    assert Recording.from_path(Path("/c/gemini/notes.txt")) is None
    assert Recording.from_path(Path("/c/gemini/x.other.yaml")) is None


def test_a_trace_is_of_its_run() -> None:
    run = CASE.runs("openai")["baseline_backend"]
    trace = RunTrace.of(run, CASE.case_id, status="error", error="boom")
    assert trace.run == run
    assert (trace.client, trace.upstream, trace.mode, trace.case_id) == ("openai", "groq", "passthrough", CASE.case_id)
