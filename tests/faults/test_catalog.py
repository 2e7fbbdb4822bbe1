"""The catalog's own rules: at least the twenty faults of issue 8, kebab-case names, witnesses inside each fault's
scope, every fault selectable by name in a proxy config."""

from __future__ import annotations

import re

import pytest

from harness.faults import FAULTS, Fault, by_name, catalog_hooks
from harness.faults.gateway_catalog import GATEWAY_FAULTS
from harness.proxy import ModelRoute, ProxyConfig, TranslateHooks, UpstreamConfig, create_app
from harness.scenarios.loader import load_scenarios
from harness.scenarios.model import Scenario
from tests.conftest import REPO

ISSUE_8 = {
    "tools-dropped-on-stream",
    "gemini-function-response-name-hardcoded",
    "second-parallel-tool-call-dropped",
    "arguments-lost-with-name",
    "duplicate-message-start",
    "delta-without-block-start",
    "zeroed-usage-in-message-start",
    "thinking-as-text",
    "done-appended-to-anthropic-stream",
    "length-mapped-to-stop",
    "usage-chunk-dropped",
    "tool-fragments-reordered",
    "text-buffered-until-end",
    "midstream-error-as-stop",
    "rate-limit-as-server-error",
    "system-prompt-dropped",
    "temperature-dropped",
    "image-dropped",
    "multibyte-split-corrupted",
    "upstream-key-echoed",
}


ISSUE_12 = {"zero-input-at-message-start"}
"""Faults added with the faithful reference backends (a gateway only the real wire shows)."""


# The Responses API's (issue 15): each only where a Responses client can see it.
ISSUE_15 = {
    "responses-sequence-number-from-one",
    "responses-sequence-number-missing",
    "responses-sequence-number-gap",
    "responses-sequence-number-repeated",
    "responses-completed-missing",
    "responses-output-index-mismatch",
    "responses-item-id-mismatch",
    "responses-incomplete-as-completed",
    "responses-reasoning-items-dropped",
    "responses-previous-response-id-dropped",
}


ISSUE_16 = {
    "bedrock-tool-input-dropped",
    "bedrock-metadata-usage-lost",
    "bedrock-errors-by-status",
    "bedrock-exception-type-generic",
    "cloudflare-usage-summed",
    "cloudflare-final-usage-dropped",
    "cloudflare-done-missing",
    "cloudflare-tool-call-first-fragment-only",
    "swink-done-dropped",
    "swink-done-as-openai-done",
    "swink-content-index-per-type",
    "swink-thinking-signature-dropped",
}


def test_catalog_has_every_fault_of_issue_8_and_of_the_gateway_gates_once() -> None:
    names = [f.name for f in FAULTS]
    assert len(names) == len(set(names))
    assert set(names) >= ISSUE_8 | ISSUE_12 | ISSUE_15 | ISSUE_16
    assert names[-len(GATEWAY_FAULTS) :] == [f.name for f in GATEWAY_FAULTS]
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", n) for n in names)


def test_catalog_has_the_responses_faults_of_issue_15_for_responses_clients_only() -> None:
    responses = {f.name: f for f in FAULTS if f.name in ISSUE_15}
    assert set(responses) == ISSUE_15
    assert all(f.scope.frontends == ("responses",) for f in responses.values())


def test_catalog_has_the_faults_of_issue_16_each_on_its_protocol() -> None:
    by = {f.name: f for f in FAULTS}
    assert set(by) >= ISSUE_16
    for name in ISSUE_16:
        protocol = name.split("-")[0]
        scope = by[name].scope
        # Each acts on its own protocol's wire: the side it lives on names it.
        assert protocol in (scope.frontends or ()) or protocol in (scope.backends or ()), name


def test_each_gateway_fault_names_the_gateway_bug_it_models() -> None:
    for fault in GATEWAY_FAULTS:
        gateway = (
            r"(LiteLLM proxy|Portkey AI Gateway|claude-code-router|nullplatform LLM Gateway|MLflow AI Gateway) [0-9.]+"
        )
        assert re.search(gateway, fault.models), fault.name
        assert re.search(r"\((A|P|R|NP|ML)[0-9]+", fault.models), fault.name  # its id in docs/gateways.md


@pytest.fixture(scope="module")
def scenarios() -> dict[str, Scenario]:
    return {s.id: s for s in load_scenarios(REPO / "scenarios")}


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.name)
def test_fault_is_described_and_its_witnesses_lie_in_its_scope(fault: Fault, scenarios: dict[str, Scenario]) -> None:
    assert fault.description and fault.models and fault.caught_by
    assert isinstance(fault.hooks, TranslateHooks)
    assert fault.witnesses
    for w in fault.witnesses:
        assert w.scenario in fault.scope.scenarios
        assert fault.scope.frontends is None or w.frontend in fault.scope.frontends
        assert fault.scope.backends is None or w.backend in fault.scope.backends
        assert w.stream in fault.scope.streams
        assert ("stream" if w.stream else "nonstream") in scenarios[w.scenario].streaming
    assert all(s in scenarios for s in fault.scope.scenarios)


def test_faults_are_selectable_by_name_in_a_proxy_config() -> None:
    upstream = UpstreamConfig(name="u", protocol="openai", base_url="http://upstream.invalid")
    routes = tuple(
        ModelRoute(name=f"m{i}", mode="translate", upstream=upstream, upstream_model="m", hooks=fault.name)
        for i, fault in enumerate(FAULTS)
    )
    assert create_app(ProxyConfig(models=routes), hooks=catalog_hooks()) is not None
    assert by_name("length-mapped-to-stop").scope.scenarios == ("max-tokens-length",)
    with pytest.raises(KeyError, match="no fault named 'nope'"):
        by_name("nope")
