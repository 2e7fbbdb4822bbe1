"""The generated gateway configs work as generated: each format parses as its gateway reads it, sends every
route to `<replay>/<backend>/_s/<scenario>` with a realistic model (never a scenario id), and carries the settings
a gate needs (LiteLLM's master key, no cooldowns, no retries; ccr's APIKEY and router; Portkey's per-request
config)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from harness.gateways import render
from harness.gateways.ccr import ROUTER as CCR_ROUTER
from harness.gateways.specs import GATEWAYS
from harness.proxy import load_config
from harness.rig.sut_client import RunAddress, load_headers
from harness.scenarios.loader import load_scenarios
from tests.conftest import REPO

ALL = load_scenarios(REPO / "scenarios")
SCENARIOS = [s for s in ALL if s.id in ("text-basic", "tool-call-single")]
IDS = {s.id for s in ALL}
REPLAY = "http://127.0.0.1:8890"


def test_litellm_config_has_the_gate_settings_and_a_realistic_model_per_route() -> None:
    doc = yaml.safe_load(render("litellm", REPLAY, SCENARIOS, ["openai", "anthropic", "gemini", "ollama"]))
    assert doc["general_settings"]["master_key"] == "os.environ/CONFORMANCE_CLIENT_KEY"
    assert doc["router_settings"] == {"disable_cooldowns": True, "num_retries": 0}
    assert doc["litellm_settings"]["num_retries"] == 0
    assert doc["litellm_settings"]["use_chat_completions_url_for_anthropic_messages"] is True
    by_name = {m["model_name"]: m["litellm_params"] for m in doc["model_list"]}
    assert by_name["text-basic--gemini--translate"] == {
        "model": "gemini/gemini-2.5-flash",
        "api_base": f"{REPLAY}/gemini/_s/text-basic/v1beta",
        "api_key": "os.environ/CONFORMANCE_PLANTED_KEY",
    }
    assert by_name["tool-call-single--openai--translate"]["api_base"] == f"{REPLAY}/openai/_s/tool-call-single/v1"
    assert by_name["text-basic--ollama--translate"]["model"] == "ollama_chat/llama3.2"
    assert not {p["model"].split("/", 1)[1] for p in by_name.values()} & IDS


def test_portkey_headers_name_provider_host_and_model_per_backend(tmp_path: Path) -> None:
    path = tmp_path / "portkey.toml"
    path.write_text(render("portkey", REPLAY, SCENARIOS, ["openai", "anthropic", "gemini", "ollama"]), "utf-8")
    headers = {h.backend: h for h in load_headers(path)}
    assert set(headers) == {"openai", "anthropic", "gemini"}  # Portkey has no ollama provider for our wire
    filled = json.loads(RunAddress("gemini", "text-basic", REPLAY, "gemini-2.5-flash").fill(headers["gemini"].value))
    assert filled["provider"] == "google"
    assert filled["custom_host"] == f"{REPLAY}/gemini/_s/text-basic/v1beta"
    assert filled["override_params"] == {"model": "gemini-2.5-flash"}
    assert filled["api_key"]  # Portkey refuses a config without one
    anthropic = json.loads(RunAddress("anthropic", "x", REPLAY, "claude").fill(headers["anthropic"].value))
    assert anthropic["custom_host"] == f"{REPLAY}/anthropic/_s/x/v1"  # Portkey appends /messages


def test_ccr_config_has_a_provider_per_route_its_key_and_the_router() -> None:
    doc = json.loads(render("ccr", REPLAY, SCENARIOS, ["openai", "anthropic", "gemini", "ollama"]))
    assert (doc["HOST"], doc["APIKEY"]) == ("127.0.0.1", "$CONFORMANCE_CLIENT_KEY")
    assert Path(doc["CUSTOM_ROUTER_PATH"]).is_absolute() and Path(doc["CUSTOM_ROUTER_PATH"]).is_file()
    providers = {p["name"]: p for p in doc["Providers"]}
    assert len(providers) == 2 * 3  # ollama: ccr reaches it only through its OpenAI-compatible API
    gemini = providers["text-basic--gemini--translate"]
    assert gemini["api_base_url"] == f"{REPLAY}/gemini/_s/text-basic/v1beta/models/"
    assert (gemini["models"], gemini["transformer"]) == (["gemini-2.5-flash"], {"use": ["gemini"]})
    openai = providers["tool-call-single--openai--translate"]
    assert openai["api_base_url"] == f"{REPLAY}/openai/_s/tool-call-single/v1/chat/completions"
    assert providers["text-basic--anthropic--translate"]["api_base_url"].endswith(
        "/anthropic/_s/text-basic/v1/messages"
    )
    assert doc["Router"]["default"].count(",") == 1


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_ccr_router_picks_the_provider_a_model_names() -> None:
    config = json.loads(render("ccr", REPLAY, SCENARIOS, ["openai", "gemini"]))
    script = (
        f"const r = require({json.dumps(str(CCR_ROUTER))}); const c = {json.dumps(config)};"
        "Promise.all([r({body: {model: 'text-basic--gemini--translate'}}, c), r({body: {model: 'other'}}, c)])"
        ".then((v) => console.log(JSON.stringify(v)));"
    )
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=30, check=True).stdout
    assert json.loads(out) == ["text-basic--gemini--translate,gemini-2.5-flash", None]


def test_conformance_and_louter_configs_send_each_route_to_its_scenario(tmp_path: Path) -> None:
    path = tmp_path / "sut.toml"
    path.write_text(render("conformance", REPLAY, SCENARIOS, ["openai", "gemini"]), encoding="utf-8")
    route = load_config(path).route("tool-call-single--gemini--translate")
    assert route is not None
    assert (route.upstream.base_url, route.upstream_model) == (
        f"{REPLAY}/gemini/_s/tool-call-single",
        "gemini-2.5-flash",
    )
    louter = yaml.safe_load(render("louter", REPLAY, SCENARIOS, ["openai", "ollama"]))["backends"]
    assert louter["openai--text-basic"]["url"] == f"{REPLAY}/openai/_s/text-basic"
    assert louter["openai--text-basic"]["model_mapping"] == {"text-basic--openai--translate": "gpt-4o-mini"}
    assert not any(k.startswith("ollama") for k in louter)


def test_a_model_override_reaches_the_config() -> None:
    doc = yaml.safe_load(render("litellm", REPLAY, SCENARIOS[:1], ["openai"], models={"openai": "gpt-4.1-mini"}))
    assert doc["model_list"][0]["litellm_params"]["model"] == "openai/gpt-4.1-mini"


def test_each_gateway_serves_and_names_what_its_facts_say() -> None:
    assert GATEWAYS["litellm"].frontends() == ["anthropic", "gemini", "openai"]
    assert GATEWAYS["litellm"].backends() == ["anthropic", "gemini", "ollama", "openai"]
    assert GATEWAYS["portkey"].frontends() == ["openai"]
    assert GATEWAYS["ccr"].frontends() == ["anthropic"]
    assert GATEWAYS["portkey"].backends() == GATEWAYS["ccr"].backends() == ["anthropic", "gemini", "openai"]


@pytest.mark.parametrize("name", sorted(GATEWAYS))
def test_the_pinned_version_is_the_one_the_gateway_folder_installs(name: str) -> None:
    spec, home = GATEWAYS[name], REPO / "gateways" / name
    if (home / "requirements.txt").is_file():
        assert spec.package in (home / "requirements.txt").read_text(encoding="utf-8").splitlines()
    else:
        package, _, version = spec.package.rpartition("@")
        pinned = json.loads((home / "package.json").read_text(encoding="utf-8"))["dependencies"]
        locked = json.loads((home / "package-lock.json").read_text(encoding="utf-8"))["packages"]
        assert pinned[package] == version == spec.version == locked[f"node_modules/{package}"]["version"]
    assert spec.version in spec.package


def test_portkey_holds_hono_node_server_below_1_14() -> None:
    # From @hono/node-server 1.14 on, response headers are immutable: every streamed Portkey answer is a 500.
    home = REPO / "gateways" / "portkey"
    assert json.loads((home / "package.json").read_text(encoding="utf-8"))["overrides"]["@hono/node-server"] == "1.13.8"
    locked = json.loads((home / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    versions = {v["version"] for k, v in locked.items() if k.endswith("node_modules/@hono/node-server")}
    assert versions == {"1.13.8"}


def test_mlflow_config_has_a_chat_endpoint_per_route_at_its_upstream() -> None:
    doc = yaml.safe_load(render("mlflow", REPLAY, SCENARIOS, ["openai", "anthropic", "gemini"]))
    by_name = {e["name"]: e for e in doc["endpoints"]}
    assert set(by_name) == {f"{s.id}--{b}--translate" for s in SCENARIOS for b in ("openai", "anthropic")}
    assert by_name["text-basic--anthropic--translate"] == {
        "name": "text-basic--anthropic--translate",
        "endpoint_type": "llm/v1/chat",
        "model": {
            "provider": "anthropic",
            "name": "claude-sonnet-4-5-20250929",
            "config": {
                "anthropic_api_key": "$CONFORMANCE_PLANTED_KEY",
                "anthropic_api_base": f"{REPLAY}/anthropic/_s/text-basic/v1",
            },
        },
    }
    assert by_name["tool-call-single--openai--translate"]["model"]["config"]["openai_api_base"] == (
        f"{REPLAY}/openai/_s/tool-call-single/v1"
    )
    assert GATEWAYS["mlflow"].frontends() == ["openai"] and GATEWAYS["mlflow"].backends() == ["anthropic", "openai"]


def test_nullplatform_config_has_a_project_per_route_reached_by_the_sut_path() -> None:
    from harness.rig.sut_client import sut_url

    text = render("nullplatform", REPLAY, SCENARIOS, ["openai", "anthropic", "gemini"])
    doc = yaml.safe_load(text)
    assert doc["server"] == {"host": "127.0.0.1", "port": "${CONFORMANCE_GATEWAY_PORT}"}
    projects = {p["name"]: p["models"] for p in doc["projects"]}
    assert set(projects) == {f"{s.id}--{b}" for s in SCENARIOS for b in ("openai", "anthropic")}
    (model,) = projects["text-basic--openai"]
    assert model["isDefault"] is True
    assert model["provider"] == {
        "type": "openai",
        "config": {
            "baseUrl": f"{REPLAY}/openai/_s/text-basic/v1",
            "apiKey": "${CONFORMANCE_PLANTED_KEY}",
            "model": "gpt-4o-mini",
            "retryAttempts": 1,
        },
    }
    assert projects["text-basic--anthropic"][0]["provider"]["config"]["baseUrl"] == f"{REPLAY}/anthropic/_s/text-basic"
    # The gate's --sut URL reaches the route's project under each client protocol's own path.
    spec = GATEWAYS["nullplatform"]
    url = sut_url(f"http://127.0.0.1:4000{spec.sut_path}", "anthropic", "openai", "text-basic")
    assert url == "http://127.0.0.1:4000/text-basic--openai/anthropic"
    assert spec.sut_path in text and spec.pace_ms == 20.0
