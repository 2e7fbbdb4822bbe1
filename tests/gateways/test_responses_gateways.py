"""The two real gateways gated on the Responses frontend: LiteLLM's own `/v1/responses` route and codex-rosetta.
Their specs, their configs, how they are launched, and how the replay server places what they send upstream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.diff.pipeline import request_side
from harness.gateways import render
from harness.gateways.specs import GATEWAYS
from harness.protocols import HttpRequest
from harness.rig.keys import PLANTED_KEY_ENV
from harness.rig.sut import named_scenario
from harness.scenarios.loader import load_scenarios
from harness.scenarios.resolve import NoScenarioError, resolve
from harness.trace.model import RunTrace
from tests.conftest import REPO

ALL = load_scenarios(REPO / "scenarios")
SCENARIOS = [s for s in ALL if s.id in ("text-basic", "tool-call-single")]
REPLAY = "http://127.0.0.1:8890"


def test_the_responses_gateways_serve_only_the_responses_frontend_into_what_their_route_translates_to() -> None:
    lr, rosetta = GATEWAYS["litellm-responses"], GATEWAYS["codex-rosetta"]
    assert lr.frontends() == rosetta.frontends() == ["responses"]
    # LiteLLM forwards an openai/ model's /v1/responses natively: only the translated upstreams are gated.
    assert lr.backends() == ["anthropic", "gemini", "ollama"]
    assert rosetta.backends() == ["openai"]  # its one Chat Completions upstream
    assert (lr.naming, rosetta.naming) == ("litellm", "codex-rosetta")
    assert (lr.package, lr.version) == (GATEWAYS["litellm"].package, GATEWAYS["litellm"].version)


def test_litellm_responses_is_configured_like_litellm() -> None:
    backends = GATEWAYS["litellm-responses"].backends()
    doc = yaml.safe_load(render(GATEWAYS["litellm-responses"].naming, REPLAY, SCENARIOS, backends))
    by_name = {m["model_name"]: m["litellm_params"] for m in doc["model_list"]}
    assert by_name["text-basic--anthropic--translate"] == {
        "model": "anthropic/claude-sonnet-4-5-20250929",
        "api_base": f"{REPLAY}/anthropic/_s/text-basic",
        "api_key": f"os.environ/{PLANTED_KEY_ENV}",
    }
    assert by_name["tool-call-single--gemini--translate"]["api_base"] == f"{REPLAY}/gemini/_s/tool-call-single/v1beta"
    assert doc["router_settings"] == {"disable_cooldowns": True, "num_retries": 0}


def test_the_rosetta_env_points_its_one_upstream_at_the_replay_server() -> None:
    text = render("codex-rosetta", REPLAY, SCENARIOS, ["openai"])
    values = dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))
    # It appends /chat/completions itself; no scenario in the URL (one upstream for every route).
    assert values == {
        "UPSTREAM_BASE_URL": f"{REPLAY}/openai/v1",
        "UPSTREAM_PROVIDER": "openai",
        "UPSTREAM_TIMEOUT_READ": "60",
    }
    assert PLANTED_KEY_ENV not in text and "KEY=" not in text  # the key comes from its environment


def test_the_rosetta_env_takes_exactly_one_upstream() -> None:
    with pytest.raises(ValueError, match="one Chat Completions upstream, not none"):
        render("codex-rosetta", REPLAY, SCENARIOS, ["anthropic"])
    # An OpenAI-compatible profile is the same wire to it, so two recorded backends are one too many.
    with pytest.raises(ValueError, match="one Chat Completions upstream, not openai, "):
        render("codex-rosetta", REPLAY, SCENARIOS, ["openai", "groq"])


def test_rosetta_runs_in_the_run_folder_on_loopback_with_the_planted_key(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    spec = GATEWAYS["codex-rosetta"]
    monkeypatch.setenv(PLANTED_KEY_ENV, "PLANTED-TEST-KEY-abc")
    fake = tmp_path / "bin" / "codex-rosetta"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    launch = spec.launch(tmp_path / "home", tmp_path / "run", 4321, {})
    assert launch.argv == (str(fake),)
    assert launch.cwd == tmp_path / "run"  # its .env is read, and its data/ written, there
    assert launch.env["UPSTREAM_API_KEY"] == "PLANTED-TEST-KEY-abc"
    assert (launch.env["HOST"], launch.env["PORT"]) == ("127.0.0.1", "4321")
    assert launch.ready_url == "http://127.0.0.1:4321/health"
    assert spec.config_file == ".env"


def test_a_route_name_sent_on_as_the_model_names_its_scenario() -> None:
    text_basic = next(s for s in ALL if s.id == "text-basic")
    # The route name wins over the content (which is text-basic's).
    assert resolve(text_basic.request_for("tool-call-single--openai--translate"), ALL).id == "tool-call-single"
    # A name that is no route of a loaded scenario names nothing: the content decides.
    tool = next(s for s in ALL if s.id == "tool-call-single")
    assert resolve(tool.request_for("no-such-scenario--openai--translate"), ALL).id == "tool-call-single"
    with pytest.raises(NoScenarioError, match="no scenario has this content"):
        resolve(tool.request_for("a--b").model_copy(update={"tools": []}), ALL)


def test_an_undecodable_upstream_request_is_still_placed_by_the_name_it_carries() -> None:
    body = json.dumps({"model": "json-schema--openai--translate", "response_format": {"type": "json_schema"}})
    assert named_scenario(HttpRequest("POST", "/v1/chat/completions", body=body.encode())) == "json-schema"
    assert named_scenario(HttpRequest("POST", "/_s/text-basic/v1/messages", body=b"not json")) == "text-basic"
    assert named_scenario(HttpRequest("POST", "/v1/chat/completions", body=b'{"model": "gpt-4o-mini"}')) is None
    assert named_scenario(HttpRequest("POST", "/v1/chat/completions", body=b"[1]")) is None


def test_a_request_the_backend_rejected_undecoded_is_a_request_side_divergence() -> None:
    scenario = next(s for s in ALL if s.id == "json-schema")
    common = {"case_id": "c", "scenario": "json-schema", "client": "responses", "upstream": "openai", "stream": False}
    request = scenario.request_for("m").model_dump()
    rejected = RunTrace.model_validate(
        {**common, "role": "translated", "mode": "translate", "frontend_request": request, "upstream_status": 400}
    )
    (divergence,) = request_side(rejected)
    assert divergence.path == "request" and "not a valid openai request" in divergence.right
    decoded = rejected.model_copy(update={"upstream_request": rejected.frontend_request})
    assert request_side(decoded) == []


def test_a_thinking_budget_the_proxy_chose_for_an_effort_is_no_request_divergence() -> None:
    from harness.diff.request_side import request_divergences

    front = {"thinking": {"enabled": True, "budget_tokens": None}, "messages": []}
    chosen = {"thinking": {"enabled": True, "budget_tokens": 1024}, "messages": []}
    assert request_divergences(front, chosen) == []
    # A budget the client gave must still arrive as given, and thinking the client did not ask for is added.
    assert request_divergences({**front, "thinking": {"enabled": True, "budget_tokens": 2048}}, chosen)
    assert request_divergences({**front, "thinking": None}, chosen)


def test_a_json_object_tool_result_re_serialized_for_an_objects_only_backend_is_no_request_divergence() -> None:
    from harness.diff.request_side import request_divergences

    def result(text: str) -> dict[str, object]:
        part = {"kind": "tool_result", "tool_call_id": "c1", "content": [{"kind": "text", "text": text}]}
        return {"messages": [{"role": "tool", "content": [part]}]}

    client = result('{"temperature_c": 18, "sky": "sunny"}')
    pair = ("responses", "gemini")  # Gemini's functionResponse.response is an object
    assert request_divergences(client, result('{"temperature_c":18,"sky":"sunny"}'), pair=pair) == []
    assert request_divergences(client, result('{"temperature_c":19,"sky":"sunny"}'), pair=pair)
    assert request_divergences(client, result('{"temperature_c":18,"sky":"sunny"}'), pair=("responses", "openai"))


def test_a_key_shape_inside_a_litellm_response_id_is_no_leak() -> None:
    from harness.record.scrub import find_secrets

    rid = "resp_9buO41FJqkg-sk-9buO41FJqkgtfh8A10D0VWXlfAVtbdaHdkpvwtUC"
    assert find_secrets(f'{{"id": "{rid}"}}') == []
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
    assert find_secrets(f'{{"error": "bad key {key}"}}') == [key]
    assert find_secrets(key) == [key]


def test_open_responses_server_is_given_its_config_as_environment_variables(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """It calls `load_dotenv()` from its own modules, so a .env in its working directory is never read: the gate
    gives the generated variables in its environment, and points the SDK at `/responses` (no `/v1`)."""
    spec = GATEWAYS["open-responses-server"]
    assert (spec.frontends(), spec.backends(), spec.unversioned) == (["responses"], ["openai"], ("responses",))
    run = tmp_path / "run"
    run.mkdir()
    (run / spec.config_file).write_text(render(spec.naming, REPLAY, SCENARIOS, ["openai"]), encoding="utf-8")
    monkeypatch.setenv(PLANTED_KEY_ENV, "PLANTED-TEST-KEY-abc")
    fake = tmp_path / "bin" / "otc"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    launch = spec.launch(tmp_path / "home", run, 4321, {})
    assert launch.argv == (str(fake), "start")
    assert launch.env["OPENAI_BASE_URL_INTERNAL"] == f"{REPLAY}/openai"  # it appends /v1/chat/completions
    assert launch.env["OPENAI_API_KEY"] == "PLANTED-TEST-KEY-abc"
    assert (launch.env["API_ADAPTER_HOST"], launch.env["API_ADAPTER_PORT"]) == ("127.0.0.1", "4321")
    assert launch.env["MCP_SERVERS_CONFIG_PATH"] == "no-mcp-servers.json"
    assert launch.cwd == run  # it writes log/ there


def test_a_env_config_line_that_is_no_assignment_is_refused() -> None:
    from harness.gateways.base import env_lines

    assert env_lines("# c\n\nA=1\n B = x=y \n") == {"A": "1", "B": "x=y"}
    with pytest.raises(ValueError, match=r"line 2 of a \.env config is not NAME=VALUE: 'oops'"):
        env_lines("A=1\noops\n")
