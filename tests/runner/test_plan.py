"""Planning is a function of the options: the same options give the same plan, in a deterministic order, with
the capability gaps named and each distinct run once (baselines shared)."""

from __future__ import annotations

import pickle

import pytest

from harness.runner.plan import MatrixOptions, plan
from harness.trace import Case, Run
from tests.conftest import REPO

OPTIONS = MatrixOptions(
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
    options = MatrixOptions(
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


# What one protocol's wire (or its client) cannot express makes the case unsupported, the party named.
GAPS = [
    ("max-tokens-length", "cloudflare", "openai", "cloudflare frontend lacks stop_max_tokens"),
    ("max-tokens-length", "openai", "cloudflare", "cloudflare backend lacks stop_max_tokens"),
    ("stream-error-first", "ollama", "openai", "ollama frontend lacks stream_error_first"),
    ("stream-error-first", "openai", "ollama", "ollama backend lacks stream_error_first"),
    ("error-not-found-404", "swink", "openai", "swink SDK lacks not_found_error"),
    ("error-not-found-404", "openai", "swink", "swink SDK lacks not_found_error"),
    ("error-overloaded", "swink", "openai", "swink SDK lacks overloaded_error; swink frontend lacks overloaded_error"),
    ("midstream-error", "openai", "swink", "swink backend lacks overloaded_error; swink SDK lacks overloaded_error"),
    ("sampling-params", "swink", "openai", "swink SDK lacks top_p; swink frontend lacks top_p"),
    ("sampling-params", "openai", "swink", "swink backend lacks top_p; swink SDK lacks top_p"),
]


@pytest.mark.parametrize(("scenario", "frontend", "backend", "reason"), GAPS)
def test_a_scenario_a_protocol_cannot_express_is_unsupported_not_a_baseline_issue(
    scenario: str, frontend: str, backend: str, reason: str
) -> None:
    options = MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        frontends=[frontend, "openai"],
        backends=[backend, "openai"],
        only=[scenario],
        streams=(True,),
    )
    matrix = plan(options)
    assert matrix.gaps[Case(scenario, frontend, backend, True)] == reason
    assert matrix.runnable(Case(scenario, "openai", "openai", True))
