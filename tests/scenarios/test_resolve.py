"""Which scenario a backend request belongs to: named by the URL (`/_s/<scenario>`), by a scenario-id model, or
by content. The URL wins, so routes can send realistic model names, even where several scenarios share their
content (the error scenarios all ask the same question)."""

from __future__ import annotations

import pytest

from harness.scenarios.loader import load_scenarios
from harness.scenarios.resolve import NoScenarioError, resolve, scenario_path, split_scenario
from tests.conftest import REPO

SCENARIOS = load_scenarios(REPO / "scenarios")


@pytest.mark.parametrize(
    ("path", "named", "rest"),
    [
        ("/_s/text-basic/v1/chat/completions", "text-basic", "/v1/chat/completions"),
        ("/openai/_s/text-basic/v1/chat/completions", "text-basic", "/openai/v1/chat/completions"),
        ("/_s/text-basic", "text-basic", "/"),
        (
            "/_s/tool-call-single/v1beta/models/gemini-2.5-flash:generateContent",
            "tool-call-single",
            "/v1beta/models/gemini-2.5-flash:generateContent",
        ),
        ("/v1/chat/completions", None, "/v1/chat/completions"),
        ("/_s//v1/messages", None, "/_s//v1/messages"),
    ],
)
def test_the_scenario_segments_come_off_wherever_they_sit(path: str, named: str | None, rest: str) -> None:
    assert split_scenario(path) == (named, rest)


def test_scenario_path_and_split_are_inverse() -> None:
    assert split_scenario(scenario_path("error-auth-401") + "/v1/messages") == ("error-auth-401", "/v1/messages")


def test_the_url_names_the_scenario_where_the_content_is_shared_and_the_model_realistic() -> None:
    request = next(s for s in SCENARIOS if s.id == "error-rate-limit-429").request_for("gpt-4o-mini")
    assert resolve(request, SCENARIOS, named="error-rate-limit-429").id == "error-rate-limit-429"
    with pytest.raises(NoScenarioError, match="several scenarios share this content"):
        resolve(request, SCENARIOS)


def test_a_url_naming_an_unknown_scenario_is_a_clear_miss() -> None:
    request = SCENARIOS[0].request_for("gpt-4o-mini")
    with pytest.raises(NoScenarioError, match="names scenario 'no-such', which is not loaded"):
        resolve(request, SCENARIOS, named="no-such")


def test_a_scenario_id_model_and_unique_content_still_resolve() -> None:
    basic = next(s for s in SCENARIOS if s.id == "text-basic")
    assert resolve(basic.request_for("error-auth-401"), SCENARIOS).id == "error-auth-401"
    assert resolve(basic.request_for("gpt-4o-mini"), SCENARIOS).id == "text-basic"


def test_a_real_recording_with_shared_content_belongs_to_the_scenario_its_cassette_is_replayed_for() -> None:
    # A real provider's recorded request names no scenario (its URL is the provider's) and carries a real model;
    # imported captures often share a prompt. The incoming request's scenario settles it when it is among them.
    request = next(s for s in SCENARIOS if s.id == "error-rate-limit-429").request_for("claude-sonnet-4-5")
    assert resolve(request, SCENARIOS, prefer="error-overloaded").id == "error-overloaded"
    with pytest.raises(NoScenarioError, match="several scenarios share this content"):
        resolve(request, SCENARIOS, prefer="text-basic")  # not one of those sharing it: no guess
