"""Planning is a function of the options: the same options give the same plan, in a deterministic order, with
the capability gaps named and each distinct run once (baselines shared)."""

from __future__ import annotations

import pickle

from harness.runner.plan import RunOptions, plan
from harness.trace import Case, Run
from tests.conftest import REPO

OPTIONS = RunOptions(
    scenarios=REPO / "scenarios",
    cassettes=REPO / "cassettes",
    frontends=["anthropic", "openai"],
    backends=["openai", "ollama"],
    only=["text-basic", "tool-choice-required"],
)


def test_the_same_options_plan_the_same_matrix() -> None:
    one, two = plan(OPTIONS), plan(OPTIONS)
    assert one.cases == two.cases and dict(one.gaps) == dict(two.gaps) and list(one.runs) == list(two.runs)
    assert pickle.loads(pickle.dumps(one.cases)) == one.cases
    assert one.cases[:2] == (
        Case("text-basic", "anthropic", "ollama", True),
        Case("text-basic", "anthropic", "ollama", False),
    )


def test_gaps_are_named_and_only_runnable_cases_have_runs() -> None:
    matrix = plan(OPTIONS)
    gap = matrix.gaps[Case("tool-choice-required", "openai", "ollama", True)]
    assert gap == "ollama backend lacks tool_choice; ollama SDK lacks tool_choice"
    assert not matrix.runnable(Case("tool-choice-required", "openai", "ollama", True))
    assert matrix.runnable(Case("text-basic", "openai", "ollama", True))
    assert not matrix.runnable(Case("text-basic", "gemini", "ollama", True))  # not in this matrix
    assert Run("translated", "openai", "ollama", "tool-choice-required", True) not in matrix.runs


def test_baselines_are_planned_once_for_every_case_that_needs_them() -> None:
    matrix = plan(OPTIONS)
    baseline = Run("baseline_frontend", "openai", "openai", "text-basic", True)
    assert matrix.runs[baseline] == "text-basic[openai->ollama,stream]"  # the first case that needs it
    assert len(matrix.runs) == len(set(matrix.runs))
    assert matrix.run_backends == ["anthropic", "ollama", "openai"]


def test_a_stream_only_party_makes_a_non_streamed_case_unsupported_with_the_reason() -> None:
    options = RunOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        frontends=["swink", "openai"],
        backends=["openai", "swink"],
        only=["text-basic"],
    )
    matrix = plan(options)
    reason = "swink has no non-streamed form (its only answer is a stream)"
    assert matrix.gaps[Case("text-basic", "swink", "openai", False)] == reason
    assert matrix.gaps[Case("text-basic", "openai", "swink", False)] == reason
    assert matrix.gaps[Case("text-basic", "swink", "swink", False)] == reason  # named once
    assert matrix.gaps[Case("text-basic", "swink", "openai", True)] is None
    assert matrix.gaps[Case("text-basic", "openai", "openai", False)] is None
    assert all(run.stream for run in matrix.runs if "swink" in (run.client, run.backend))
