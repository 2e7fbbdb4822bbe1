"""Routes the proxy answers itself (model lists, health, diagnostics, count_tokens), request checks, upstream
transport failures, and secrets kept out of responses, diagnostics, the tap and logs."""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

import httpx2
import pytest

from harness import ir
from harness.protocols import registry
from harness.proxy import TRACE_HEADER, ProxyConfig, create_app
from tests.proxy.client import proxy
from tests.proxy.upstreams import KEY_ENV, KEY_VALUE, ScriptedUpstream, config, text_reply

pytestmark = pytest.mark.anyio

MODELS = config(
    ("claude-sonnet-4-0", "translate", "openai", "gpt-4o-mini"), ("gpt-4o-mini", "passthrough", "openai", "gpt-4o-mini")
)
ANTHROPIC_HEADERS = {"anthropic-version": "2023-06-01", "x-api-key": "client-key"}


def refuse(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectError("connection refused")


async def _listings(client: httpx2.AsyncClient) -> list[Any]:
    """The model list in each protocol's shape: OpenAI's and Anthropic's (one path, told apart by the headers),
    Gemini's and Ollama's."""
    asks: list[tuple[str, dict[str, str]]] = [
        ("/v1/models", {"authorization": "Bearer x"}),
        ("/v1/models", ANTHROPIC_HEADERS),
        ("/v1beta/models", {}),
        ("/api/tags", {}),
    ]
    return [(await client.get(path, headers=headers)).json() for path, headers in asks]


async def test_model_lists_in_each_protocols_shape() -> None:
    async with proxy(MODELS, httpx2.MockTransport(refuse)) as p:
        openai, anthropic, gemini, ollama = await _listings(p.client)
        one = (await p.client.get("/v1/models/gpt-4o-mini")).json()
        missing = await p.client.get("/v1/models/nope", headers=ANTHROPIC_HEADERS)
    assert openai["object"] == "list"
    assert [m["id"] for m in openai["data"]] == ["claude-sonnet-4-0", "gpt-4o-mini"]
    assert openai["data"][0]["object"] == "model"
    assert [m["id"] for m in anthropic["data"]] == ["claude-sonnet-4-0", "gpt-4o-mini"]
    assert anthropic["data"][0]["type"] == "model" and anthropic["has_more"] is False
    assert (anthropic["first_id"], anthropic["last_id"]) == ("claude-sonnet-4-0", "gpt-4o-mini")
    assert [m["name"] for m in gemini["models"]] == ["models/claude-sonnet-4-0", "models/gpt-4o-mini"]
    assert "streamGenerateContent" in gemini["models"][0]["supportedGenerationMethods"]
    assert [m["name"] for m in ollama["models"]] == ["claude-sonnet-4-0", "gpt-4o-mini"]
    assert one == {"id": "gpt-4o-mini", "object": "model", "created": 0, "owned_by": "conformance-proxy"}
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found_error"


async def test_an_unlisted_model_is_left_out_of_every_listing_and_still_served() -> None:
    hidden = dataclasses.replace(MODELS.models[1], listed=False)
    config = dataclasses.replace(MODELS, models=(MODELS.models[0], hidden))
    async with proxy(config, httpx2.MockTransport(refuse)) as p:
        openai, anthropic, gemini, ollama = await _listings(p.client)
        one = (await p.client.get("/v1/models/gpt-4o-mini")).json()
    assert [m["id"] for m in openai["data"]] == ["claude-sonnet-4-0"]
    assert [m["id"] for m in anthropic["data"]] == ["claude-sonnet-4-0"]
    assert anthropic["last_id"] == "claude-sonnet-4-0"
    assert [m["name"] for m in gemini["models"]] == ["models/claude-sonnet-4-0"]
    assert [m["name"] for m in ollama["models"]] == ["claude-sonnet-4-0"]
    assert one["id"] == "gpt-4o-mini"  # asked by name, it is there


async def test_unknown_model_is_the_frontends_native_404() -> None:
    body = {"model": "claude-unknown", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    async with proxy(MODELS, httpx2.MockTransport(refuse)) as p:
        response = await p.client.post("/v1/messages", json=body, headers=ANTHROPIC_HEADERS)
    assert response.status_code == 404
    assert response.json()["type"] == "error"
    assert response.json()["error"]["type"] == "not_found_error"
    assert "claude-unknown" in response.json()["error"]["message"]
    ex = p.exchange
    assert (ex.model, ex.frontend_status, ex.mode) == ("claude-unknown", 404, "local")
    assert ex.error is not None and ex.error.kind == ir.ErrorKind.NOT_FOUND
    assert response.headers[TRACE_HEADER] == ex.trace_id


async def test_request_without_model_and_oversized_request_are_refused_natively() -> None:
    cfg = ProxyConfig(models=MODELS.models, max_request_bytes=200)
    async with proxy(cfg, httpx2.MockTransport(refuse)) as p:
        no_model = await p.client.post("/v1/chat/completions", json={"messages": []})
        not_json = await p.client.post("/v1/chat/completions", content=b"{nope")
        too_big = await p.client.post("/v1/chat/completions", json={"model": "gpt-4o-mini", "pad": "x" * 500})
    assert no_model.status_code == 400 and "no 'model'" in no_model.json()["error"]["message"]
    assert not_json.status_code == 400 and "not JSON" in not_json.json()["error"]["message"]
    assert too_big.status_code == 413 and "exceeds 200 bytes" in too_big.json()["error"]["message"]
    assert [e.frontend_status for e in p.exchanges] == [400, 400, 413]


@pytest.mark.parametrize(
    ("failure", "status", "kind"),
    [
        (httpx2.ConnectError("connection refused"), 502, ir.ErrorKind.NETWORK),
        (httpx2.ConnectTimeout("connect timed out"), 504, ir.ErrorKind.TIMEOUT),
        (httpx2.ReadTimeout("read timed out"), 504, ir.ErrorKind.TIMEOUT),
    ],
)
@pytest.mark.parametrize("mode", ["passthrough", "translate"])
async def test_unreachable_upstream_is_a_native_network_or_timeout_error(
    failure: httpx2.HTTPError, status: int, kind: ir.ErrorKind, mode: str
) -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise failure

    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    async with proxy(config(("m", mode, "anthropic", "m")), httpx2.MockTransport(handler)) as p:
        response = await p.client.post("/v1/messages", json=body, headers=ANTHROPIC_HEADERS)
    assert response.status_code == status
    assert response.json()["type"] == "error"
    ex = p.exchange
    assert ex.error is not None and ex.error.kind == kind and ex.upstream_status is None


async def test_count_tokens_passes_through_or_is_estimated_locally() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/messages/count_tokens"
        return httpx2.Response(200, json={"input_tokens": 42})

    cfg = config(("through", "passthrough", "anthropic", "through"), ("local", "translate", "openai", "gpt"))
    body = {"messages": [{"role": "user", "content": "x" * 40}], "system": "y" * 8}
    async with proxy(cfg, httpx2.MockTransport(handler)) as p:
        forwarded = await p.client.post("/v1/messages/count_tokens", json={**body, "model": "through"})
        estimated = await p.client.post("/v1/messages/count_tokens", json={**body, "model": "local"})
    assert forwarded.json() == {"input_tokens": 42}
    assert estimated.json() == {"input_tokens": 13}  # ceil(("user" + 40 + 8 chars) / 4)
    assert [e.mode for e in p.exchanges] == ["passthrough", "local"]
    assert all(e.problems == () for e in p.exchanges)


async def test_healthz_and_diagnostics_report_without_secrets() -> None:
    up = ScriptedUpstream("openai", text_reply("ok"))
    async with proxy(MODELS, up.transport()) as p:
        health = (await p.client.get("/healthz")).json()
        await p.client.post("/v1/chat/completions", json={"model": "nope", "messages": []})
        await p.client.post(
            "/v1/chat/completions", json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
        )
        raw = (await p.client.get("/api/diagnostics")).text
    assert health == {"status": "ok", "models": 2}
    assert KEY_VALUE not in raw and "client-key" not in raw
    diag = json.loads(raw)
    assert diag["config"]["models"][0] == {
        "name": "claude-sonnet-4-0",
        "mode": "translate",
        "upstream": "openai-up",
        "upstream_model": "gpt-4o-mini",
        "hooks": "identity",
    }
    (upstream,) = diag["upstreams"]
    assert (upstream["api_key_env"], upstream["api_key_set"], upstream["reachable"]) == (KEY_ENV, True, True)
    assert diag["versions"]["harness"] and "openai" in diag["versions"]["protocols"]
    assert [t["status"] for t in diag["recent_traces"]] == [200, 404]  # newest first
    assert [t["trace_id"] for t in diag["recent_traces"]] == [e.trace_id for e in reversed(p.exchanges)]
    counters = diag["counters"]
    assert (counters["requests"], counters["unknown_model"], counters["mode.passthrough"]) == (2, 1, 1)
    assert counters["status.2xx"] == counters["status.4xx"] == 1


async def test_diagnostics_marks_an_unreachable_upstream() -> None:
    async with proxy(MODELS, httpx2.MockTransport(refuse)) as p:
        diag = (await p.client.get("/api/diagnostics")).json()
        quick = (await p.client.get("/api/diagnostics", params={"reachability": "0"})).json()
    assert (diag["upstreams"][0]["reachable"], diag["upstreams"][0]["detail"]) == (False, "ConnectError")
    assert "reachable" not in quick["upstreams"][0]


async def test_keys_never_reach_logs_tap_or_forwarded_client_credentials(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    up = ScriptedUpstream("anthropic", text_reply("ok"))
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    async with proxy(config(("m", "passthrough", "anthropic", "m")), up.transport()) as p:
        await p.client.post("/v1/messages", json=body, headers=ANTHROPIC_HEADERS, params={"key": "client-query-key"})
    ex = p.exchange
    assert up.requests[0].headers["x-api-key"] == KEY_VALUE  # the proxy's key went upstream...
    assert "key" not in up.requests[0].url.params  # ...and the client's own credentials did not
    assert "x-api-key" not in ex.frontend_headers and "x-api-key" not in ex.upstream_headers
    assert ex.frontend_headers["anthropic-version"] == "2023-06-01"
    trace_text = repr(ex)
    assert KEY_VALUE not in trace_text and "client-key" not in trace_text
    assert ex.trace_id in caplog.text  # one log line per exchange, with its trace id...
    assert KEY_VALUE not in caplog.text and "client-query-key" not in caplog.text  # ...and no key
    record = next(r for r in caplog.records if r.name == "harness.proxy")
    assert record.trace_id == ex.trace_id  # type: ignore[attr-defined]  # set through `extra`


async def test_log_filter_scrubs_keys_from_other_libraries_messages(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.INFO, logger="httpx2")  # `conformance serve`, run earlier in this process, raises it
    create_app(MODELS)  # installs the filter and watches the configured key variable
    logging.getLogger("httpx2").info("HTTP Request: POST http://x/v1?key=%s and %s", "abc123secret", KEY_VALUE)
    assert "abc123secret" not in caplog.text and KEY_VALUE not in caplog.text
    assert "key=[REDACTED]" in caplog.text


async def test_callback_failure_is_logged_and_counted_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    def broken(exchange: object) -> None:
        raise RuntimeError("harness bug")

    app = create_app(MODELS, transport=httpx2.MockTransport(refuse), on_exchange=broken)
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app), base_url="http://proxy") as client:
        response = await client.post("/v1/chat/completions", json={"model": "nope", "messages": []})
    assert response.status_code == 404
    assert app.state.proxy.counters["tap_callback_errors"] == 1
    assert "tap callback failed" in caplog.text


def test_registry_has_the_frontends_the_routes_need() -> None:
    assert {"anthropic", "openai", "ollama"} <= set(registry.names())


async def test_never_an_open_relay_requests_go_only_to_configured_upstreams() -> None:
    hosts: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        hosts.append(request.url.host)
        return httpx2.Response(404, json={"error": {"message": "nope"}})

    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
    spoofed = {"host": "evil.example", "x-forwarded-host": "evil.example", "forwarded": "host=evil.example"}
    async with proxy(MODELS, httpx2.MockTransport(handler)) as p:
        await p.client.post("/v1/chat/completions", json=body, headers=spoofed)
        await p.client.post("/v1/chat/completions", json={**body, "model": "https://evil.example/v1"})
        await p.client.post("/v1beta/models/evil.example:generateContent", json={"contents": []})
        await p.client.post("/v1/responses", json=body)
    assert hosts == ["upstream.test"]  # only the configured model went anywhere, and only to its upstream
    # The last names a model that passes through to a Chat Completions upstream on the Responses route: refused
    # (a 400 saying to translate), not relayed.
    assert [e.frontend_status for e in p.exchanges] == [404, 404, 404, 400]


async def test_passthrough_to_an_upstream_of_another_protocol_family_is_refused_plainly() -> None:
    up = ScriptedUpstream("openai", text_reply("unused"))
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    async with proxy(config(("m", "passthrough", "openai", "m")), up.transport()) as p:
        response = await p.client.post("/v1/messages", json=body, headers=ANTHROPIC_HEADERS)
    assert response.status_code == 400
    assert "this client speaks anthropic; use translate mode" in response.json()["error"]["message"]
    assert up.requests == []


async def test_passthrough_to_a_profile_of_the_frontends_family_is_allowed() -> None:
    if "groq" not in registry.names():
        pytest.skip("groq profile not registered")
    up = ScriptedUpstream("groq", text_reply("from groq"))
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    async with proxy(config(("m", "passthrough", "groq", "llama")), up.transport()) as p:
        response = await p.client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "from groq"
    assert json.loads(up.requests[0].content)["model"] == "llama"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["translate", "passthrough"])
async def test_deeply_nested_request_is_a_400_in_the_frontend_error_shape(mode: str) -> None:
    # Issue 22: a request nested 100,000 deep exhausted the decoders' recursion: a bare 500.
    from tests.proxy.client import proxy as running_proxy
    from tests.proxy.upstreams import ScriptedUpstream, config, text_reply

    upstream = ScriptedUpstream("openai", text_reply("hi"))
    nested = "[" * 100_000 + "]" * 100_000
    body = f'{{"model": "m", "max_tokens": 5, "messages": [{{"role": "user", "content": {nested}}}]}}'
    async with running_proxy(config(("m", mode, "openai", "m")), upstream.transport()) as p:
        response = await p.client.post("/v1/messages", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400
    error = response.json()
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert "nests 100003 levels deep" in error["error"]["message"]
    assert upstream.requests == []


def test_first_values_are_the_headers_as_a_dict_of_the_first_value_of_each_name() -> None:
    from starlette.requests import Request

    from harness.proxy.routes import first_values

    raw = [(b"x-a", b"1"), (b"accept", b"*/*"), (b"x-a", b"2"), (b"x-b", b"\xe9")]
    request = Request({"type": "http", "headers": raw})
    assert first_values(request) == dict(request.headers) == {"x-a": "1", "accept": "*/*", "x-b": "\xe9"}
    assert list(first_values(request)) == ["x-a", "accept", "x-b"]
