"""The route table: every route's upstream names its scenario in the URL and sends a realistic model of its
backend (a gateway never sees a scenario id as a model); the built-in proxy's config is built from it."""

from __future__ import annotations

import pytest

from harness.protocols import registry
from harness.proxy.local_answers import model_list
from harness.rig import proxy_config, route_table
from harness.rig.routes import parse_model_overrides, upstream_models
from harness.scenarios.loader import load_scenarios
from tests.conftest import REPO

SCENARIOS = [s for s in load_scenarios(REPO / "scenarios") if s.id in ("text-basic", "error-auth-401")]
LISTING = [s for s in load_scenarios(REPO / "scenarios") if s.kind == "models_list"]


def test_every_route_names_its_scenario_in_the_url_and_a_realistic_model() -> None:
    table = route_table(SCENARIOS, ["openai", "gemini"])
    assert len(table) == 2 * 2 * 2
    basic = next(r for r in table if r.name == "text-basic--gemini--translate")
    assert (basic.backend, basic.scenario, basic.upstream_model) == ("gemini", "text-basic", "gemini-2.5-flash")
    assert basic.upstream_base("http://127.0.0.1:8790/") == "http://127.0.0.1:8790/gemini/_s/text-basic"
    scenario_ids = {s.id for s in SCENARIOS}
    assert not {r.upstream_model for r in table} & scenario_ids


def test_upstream_models_default_to_the_facts_and_take_overrides() -> None:
    assert upstream_models(["openai", "groq"]) == {
        "openai": registry.facts("openai").upstream_model,
        "groq": registry.facts("groq").upstream_model,
    }
    assert upstream_models(["openai"], {"openai": "gpt-4.1"}) == {"openai": "gpt-4.1"}
    with pytest.raises(ValueError, match="given for gemini, which is not a backend of this run"):
        upstream_models(["openai"], {"gemini": "gemini-2.5-pro"})


@pytest.mark.parametrize("bad", ["openai", "=gpt", "openai=", " = "])
def test_a_malformed_model_override_names_itself(bad: str) -> None:
    with pytest.raises(ValueError, match="expected BACKEND=MODEL"):
        parse_model_overrides([bad])


def test_the_built_in_proxy_sends_each_route_to_its_scenario_with_the_realistic_model() -> None:
    config = proxy_config(SCENARIOS, ["anthropic"], "http://replay.invalid", models={"anthropic": "claude-x"})
    route = config.route("error-auth-401--anthropic--passthrough")
    assert route is not None
    assert route.upstream.base_url == "http://replay.invalid/anthropic/_s/error-auth-401"
    assert (route.upstream_model, route.upstream.protocol) == ("claude-x", "anthropic")
    assert len(config.upstreams) == 2  # one per (backend, scenario), shared by both modes


def test_only_a_models_list_scenarios_routes_and_names_are_listed() -> None:
    table = route_table([*SCENARIOS, *LISTING], ["openai", "gemini"])
    listed = [r.name for r in table if r.listed]
    assert listed == [r.name for r in route_table(LISTING, ["openai", "gemini"])]
    assert "models-list--gemini--translate" in listed and "conformance-model" in listed
    assert not any(r.listed for r in table if r.scenario in {s.id for s in SCENARIOS})


@pytest.mark.parametrize("shape", ["openai", "gemini"])
def test_the_built_in_proxys_listing_is_the_same_whichever_scenarios_run_beside_it(shape: str) -> None:
    """A models-list case reads the same listing in a one-scenario run as in the full matrix (where it named
    every route, 2,200 of them, and each listing call cost about 40 times as much)."""
    alone = proxy_config(LISTING, ["openai", "gemini"], "http://replay.invalid")
    beside = proxy_config([*SCENARIOS, *LISTING], ["openai", "gemini"], "http://replay.invalid")
    assert len(beside.models) > len(alone.models)
    assert model_list(shape, beside) == model_list(shape, alone)
    assert beside.route("text-basic--openai--translate") is not None  # served, only not listed
