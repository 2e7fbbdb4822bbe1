"""Every registered protocol declares complete facts next to its codec (`harness.protocols.facts`), and the facts
types do what the proxy, recorder, backends, runner and gateway configs rely on."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from harness import drivers
from harness.ir import Capability
from harness.protocols import HttpRequest, registry
from harness.protocols.facts import ModelInBody, ProtocolFacts, RequestShapeError
from tests.conftest import REPO

NAMES = registry.names()


@pytest.mark.parametrize("name", NAMES)
def test_every_protocol_declares_its_facts(name: str) -> None:
    facts = registry.facts(name)
    assert isinstance(facts, ProtocolFacts)
    codec = registry.get(name)
    if codec.family == name:
        # A base protocol names its own SDK, and its driver module exists and drives exactly this protocol.
        assert facts.sdk is not None, f"{name} is a base protocol without an SDK"
        module = facts.sdk.driver
        assert (REPO / Path(*module.split("."))).with_suffix(".py").is_file()
        assert importlib.import_module(module).DRIVER.name == name
        assert facts.sdk.http_client in ("httpx2", "httpx")
    else:
        # A profile is a backend of its family: no frontend or model list of its own, its family's SDK.
        assert facts.frontend is None and facts.model_list is None and facts.sdk is None
        assert registry.sdk(name) == registry.facts(codec.family).sdk
    for pattern in facts.secrets.key_patterns:
        re.compile(pattern)
    assert all(h == h.lower() for h in facts.secrets.headers)
    assert all(p == p.lower() for p in facts.secrets.header_prefixes)
    for size in (facts.chunking.text_chunk_size, facts.chunking.arguments_chunk_size):
        assert size is None or size >= 1
    if facts.real is not None:
        assert facts.real.base_url.startswith(("http://", "https://")) and facts.real.model
        assert all(re.fullmatch(r"[A-Z][A-Z0-9_]*", env) for env in facts.real.key_env)


def test_every_frontend_route_names_where_its_model_sits() -> None:
    frontends = {name: f.frontend for name in NAMES if (f := registry.facts(name)).frontend is not None}
    assert sorted(frontends) == [
        "anthropic",
        "bedrock",
        "cloudflare",
        "gemini",
        "ollama",
        "openai",
        "responses",
        "swink",
    ]
    for name, frontend in frontends.items():
        assert frontend.routes and all(route.path.startswith("/") for route in frontend.routes)
        # A frontend's clients list models too, where their SDK can (bedrock-runtime and swink's proxy cannot).
        lists = Capability.MODELS_LIST in drivers.get(name).capabilities
        assert (registry.facts(name).model_list is not None) == lists, name


def test_a_shared_model_list_path_has_one_default_shape() -> None:
    by_path: dict[str, list[str]] = {}
    for name in NAMES:
        listing = registry.facts(name).model_list
        if listing is not None:
            for path in [*listing.paths, *listing.item_paths]:
                by_path.setdefault(path, []).append(name)
    for path, names in by_path.items():
        defaults = [n for n in names if (m := registry.facts(n).model_list) is not None and m.claims is None]
        # Several may be the default only by sharing one listing (Responses clients list OpenAI's /v1/models).
        shapes = {registry.facts(n).model_list for n in defaults}
        assert len(shapes) <= 1, f"{path}: {defaults} all claim to be the default, in different shapes"
        assert len(names) == 1 or defaults, f"{path}: several protocols and no default"


def test_responses_clients_share_the_chat_completions_model_list() -> None:
    # The openai SDK lists models at GET /v1/models with the same headers whichever API it then calls.
    assert registry.facts("responses").model_list is registry.facts("openai").model_list


def test_a_protocol_registered_without_facts_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    codec = registry.get("openai")
    stand_in = type("StandIn", (), {"name": "no-facts-yet", "capabilities": codec.capabilities})()
    monkeypatch.setitem(registry._CODECS, "no-facts-yet", stand_in)
    with pytest.raises(registry.MissingFactsError, match=r"registered without its facts.*Adding a protocol"):
        registry.facts("no-facts-yet")


def test_a_capability_that_is_not_one_is_refused_at_registration() -> None:
    stand_in = type("StandIn", (), {"name": "odd", "capabilities": frozenset({"tools", "teleport"})})()
    with pytest.raises(ValueError, match="unknown capabilities: teleport"):
        registry.register(stand_in)  # type: ignore[arg-type]
    with pytest.raises(registry.UnknownProtocolError):
        registry.get("odd")


def _request(path: str, body: bytes = b"{}") -> HttpRequest:
    return HttpRequest(method="POST", path=path, query={}, headers={}, body=body)


def test_model_in_path_reads_rewrites_and_labels_a_gemini_route() -> None:
    frontend = registry.facts("gemini").frontend
    assert frontend is not None
    location = frontend.model
    request = _request("/v1beta/models/gemini-2.5-flash:streamGenerateContent")
    assert location.model_of(request) == "gemini-2.5-flash"
    assert location.with_model(request, "other").path == "/v1beta/models/other:streamGenerateContent"
    label = location.label("/v1beta/models/{target}", request.path)
    assert label == "POST /v1beta/models/{model}:streamGenerateContent"
    with pytest.raises(RequestShapeError, match="action 'embedContent' is not one of"):
        location.model_of(_request("/v1/models/m:embedContent"))
    with pytest.raises(RequestShapeError, match="is not /v1beta/models/MODEL:ACTION"):
        location.model_of(_request("/v1beta/models/m"))


def test_model_in_path_reads_a_bedrock_id_and_writes_it_percent_encoded() -> None:
    frontend = registry.facts("bedrock").frontend
    assert frontend is not None
    location = frontend.model
    # The proxy sees the path percent-decoded: an inference-profile ARN's slashes span segments.
    arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3"
    request = _request(f"/model/{arn}/converse-stream")
    assert location.model_of(request) == arn
    assert location.model_of(_request("/model/us.amazon.nova-micro-v1:0/converse")) == "us.amazon.nova-micro-v1:0"
    rewritten = location.with_model(request, "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert rewritten.path == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    assert location.with_model(_request("/model/m/converse"), arn).path == (
        "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3/converse"
    )
    assert location.label("/model/{target:path}", request.path) == "POST /model/{model}/converse-stream"
    with pytest.raises(RequestShapeError, match="action 'invoke' is not one of"):
        location.model_of(_request("/model/m/invoke"))


def test_model_in_path_reads_a_workers_ai_model_with_its_slashes() -> None:
    frontend = registry.facts("cloudflare").frontend
    assert frontend is not None
    location = frontend.model
    request = _request("/client/v4/accounts/0123abc/ai/run/@cf/meta/llama-3.1-8b-instruct")
    assert location.model_of(request) == "@cf/meta/llama-3.1-8b-instruct"
    assert location.with_model(request, "@hf/nousresearch/hermes-2-pro").path == (
        "/client/v4/accounts/0123abc/ai/run/@hf/nousresearch/hermes-2-pro"
    )
    label = location.label(frontend.routes[0].path, request.path)
    assert label == "POST /client/v4/accounts/{account_id}/ai/run/{model}"
    with pytest.raises(RequestShapeError, match="is not /client/v4/accounts/ACCOUNT_ID/ai/run/MODEL"):
        location.model_of(_request("/client/v4/accounts/x/ai/v1/chat/completions"))


def test_a_stream_only_protocol_says_so_and_the_others_do_not() -> None:
    assert [name for name in NAMES if registry.facts(name).stream_only] == ["swink"]


def test_model_in_body_reads_and_rewrites_the_model_field() -> None:
    location = ModelInBody()
    request = _request("/v1/chat/completions", b'{"model":"a","stream":true}')
    assert location.model_of(request) == "a"
    assert location.with_model(request, "b").body == b'{"model":"b","stream":true}'
    assert location.label("/v1/chat/completions", request.path) == "POST /v1/chat/completions"
    with pytest.raises(RequestShapeError, match="no 'model' string"):
        location.model_of(_request("/v1/chat/completions", b'{"model": 3}'))
    with pytest.raises(RequestShapeError, match="not JSON"):
        location.model_of(_request("/v1/chat/completions", b"{"))


def test_every_backend_names_a_realistic_upstream_model() -> None:
    for name in registry.names():
        model = registry.facts(name).upstream_model
        assert model and "--" not in model, name


def test_a_profile_inherits_its_family_and_overrides_what_differs() -> None:
    openai, groq = registry.facts("openai"), registry.facts("groq")
    assert groq.gateway_upstream and openai.gateway_upstream
    assert groq.chunking.text_chunk_size == 5 and groq.chunking.arguments_chunk_size is None
    assert groq.real is not None and groq.real.key_env == ("GROQ_API_KEY",)
    assert set(openai.secrets.key_patterns) < set(groq.secrets.key_patterns)
    # Self-hosted profiles have no provider to record from: they must not inherit OpenAI's endpoint.
    assert registry.facts("vllm").real is None
