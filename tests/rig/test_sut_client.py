"""The client key and extra headers sent to an external system under test: options parsed strictly, headers
filled per run, the key put where the SDK put its placeholder, never in a trace."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from harness.rig.sut_client import (
    ClientKeyTransport,
    RunAddress,
    SutClient,
    SutClientError,
    SutHeader,
    check_backends,
    check_sut_url,
    load_headers,
    parse_header,
    sut_root,
    sut_url,
)

ADDRESS = RunAddress("gemini", "text-basic", "http://127.0.0.1:8891/", "gemini-2.5-flash")


def test_header_options_parse_with_an_optional_backend_scope() -> None:
    assert parse_header("X-Team=blue") == SutHeader("x-team", "blue")
    assert parse_header("gemini:x-portkey-provider=google") == SutHeader("x-portkey-provider", "google", "gemini")
    assert parse_header('x-cfg={"a":"b=c"}') == SutHeader("x-cfg", '{"a":"b=c"}')


@pytest.mark.parametrize("bad", ["novalue", "=v", ":x=1", "bad name=1"])
def test_a_malformed_header_option_names_itself(bad: str) -> None:
    with pytest.raises(SutClientError, match=r"expected \[BACKEND:\]NAME=VALUE"):
        parse_header(bad)


def test_placeholders_are_filled_per_run_and_json_braces_stay() -> None:
    template = '{"custom_host":"{upstream}/v1beta","override_params":{"model":"{model}"},"b":"{backend}/{scenario}"}'
    filled = json.loads(ADDRESS.fill(template))
    assert filled == {
        "custom_host": "http://127.0.0.1:8891/gemini/_s/text-basic/v1beta",
        "override_params": {"model": "gemini-2.5-flash"},
        "b": "gemini/text-basic",
    }
    assert ADDRESS.fill("{replay}") == "http://127.0.0.1:8891"


def test_scoped_headers_go_only_to_their_backend() -> None:
    client = SutClient(
        headers=(SutHeader("x-all", "1"), SutHeader("x-g", "{model}", "gemini"), SutHeader("x-o", "o", "openai"))
    )
    assert client.headers_for(ADDRESS) == {"x-all": "1", "x-g": "gemini-2.5-flash"}
    with pytest.raises(SutClientError, match="given for openai, which is not a backend"):
        check_backends(client, ["gemini"])


def test_a_headers_file_has_shared_and_per_backend_tables(tmp_path: Path) -> None:
    path = tmp_path / "h.toml"
    path.write_text('[headers]\nX-A = "1"\n[headers.openai]\nx-b = "{scenario}"\n', encoding="utf-8")
    assert load_headers(path) == (SutHeader("x-a", "1"), SutHeader("x-b", "{scenario}", "openai"))
    path.write_text("[headers]\nx = 1\n", encoding="utf-8")
    with pytest.raises(SutClientError, match=r"headers\.x: expected a string or a table of strings"):
        load_headers(path)
    path.write_text("[other]\n", encoding="utf-8")
    with pytest.raises(SutClientError, match="unknown keys"):
        load_headers(path)


def _sent(client: SutClient, headers: dict[str, str]) -> httpx2.Request:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200)

    transport = ClientKeyTransport(httpx2.MockTransport(handler), client, {"x-extra": "e"})
    with httpx2.Client(transport=transport) as http:
        http.post("http://sut.invalid/v1/messages", headers=headers)
    return seen[0]


def test_the_client_key_replaces_the_placeholder_wherever_the_sdk_put_it() -> None:
    client = SutClient(key="sk-master", placeholder_key="conformance-test-key")
    bearer = _sent(client, {"authorization": "Bearer conformance-test-key"})
    assert bearer.headers["authorization"] == "Bearer sk-master" and bearer.headers["x-extra"] == "e"
    anthropic = _sent(client, {"x-api-key": "conformance-test-key"})
    assert anthropic.headers["x-api-key"] == "sk-master" and "authorization" not in anthropic.headers
    keyless = _sent(client, {})
    assert keyless.headers["authorization"] == "Bearer sk-master"
    untouched = _sent(SutClient(placeholder_key="conformance-test-key"), {"x-api-key": "conformance-test-key"})
    assert untouched.headers["x-api-key"] == "conformance-test-key"


def test_the_client_key_is_redacted_and_never_shown() -> None:
    client = SutClient(key="sk-master")
    assert "sk-master" not in repr(client)
    assert client.redact("key sk-master here") == "key [REDACTED: client key] here"


def test_a_sut_url_fills_frontend_backend_and_scenario_per_run_and_is_reached_at_its_root() -> None:
    template = "http://127.0.0.1:4000/gw/{scenario}--{backend}/{frontend}"
    assert sut_url(template, "anthropic", "openai", "text-basic") == (
        "http://127.0.0.1:4000/gw/text-basic--openai/anthropic"
    )
    assert sut_root(template) == "http://127.0.0.1:4000/gw/"
    assert sut_root("http://127.0.0.1:4000") == "http://127.0.0.1:4000"
    check_sut_url(template)  # every placeholder known
    with pytest.raises(SutClientError, match=r"--sut http://h/\{model\}: a placeholder it cannot fill .*\{frontend\}"):
        check_sut_url("http://h/{model}")
