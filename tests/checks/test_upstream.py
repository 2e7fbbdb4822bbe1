"""The upstream-request checks: tool-call ids unique within a turn, the headers the backend's table names, and the
raw body's top-level fields (unknown to a strict API: a proxy bug; sent empty: a deviation)."""

from __future__ import annotations

import json

from harness.checks import Subject, run_checks, spec_for
from harness.checks.upstream import EMPTY_FIELDS, HEADERS, TOOL_IDS, UNKNOWN_FIELDS, duplicate_ids, header_findings
from harness.faults.upstream_hooks import _ids_from_names
from harness.protocols import registry
from harness.scenarios import load_scenario
from harness.trace.model import Check, Deviation
from tests.conftest import REPO

SCENARIO = load_scenario(REPO / "scenarios" / "function-call-outputs-fed-back.yaml")
HEADERS_OK = {"content-type": "application/json", "anthropic-version": "2023-06-01"}


def _subject(body: dict[str, object], headers: dict[str, str], client_headers: dict[str, str] | None = None) -> Subject:
    from harness.drivers.base import SdkResult

    request = SCENARIO.request_for("m")
    return Subject(
        role="translated",
        client="openai",
        backend="anthropic",
        stream=False,
        scenario=SCENARIO,
        result=SdkResult(),
        frontend_request=request,
        upstream_request=request,
        upstream_body=json.dumps(body).encode(),
        upstream_headers=headers,
        frontend_headers=client_headers or {},
    )


def _named(results: list[Check | Deviation], name: str) -> list[Check | Deviation]:
    return [r for r in results if (r.name if isinstance(r, Check) else r.rule) == name]


def test_ids_made_from_the_function_name_are_duplicates_within_the_turn() -> None:
    request = SCENARIO.request_for("m")
    assert duplicate_ids(request) == []
    found = duplicate_ids(_ids_from_names(request))
    assert found == [
        "messages[1]: 2 tool calls with id 'call_get_weather'",
        "messages[2]: a second tool result for id 'call_get_weather'",
    ]


def test_a_clean_anthropic_request_passes_headers_and_fields() -> None:
    body = {"model": "m", "max_tokens": 5, "messages": []}
    results = run_checks(_subject(body, HEADERS_OK))
    for name in (HEADERS, UNKNOWN_FIELDS, TOOL_IDS):
        (check,) = _named(results, name)
        assert isinstance(check, Check) and check.passed, check
    assert _named(results, EMPTY_FIELDS) == []


def test_a_fixed_beta_header_and_a_missing_version_fail_the_header_check() -> None:
    headers = {"content-type": "application/json", "anthropic-beta": "x-2025"}
    (check,) = _named(run_checks(_subject({"model": "m"}, headers)), HEADERS)
    assert isinstance(check, Check) and not check.passed
    assert check.actual == [
        "anthropic-version (version) missing; the provider needs it on every request",
        "anthropic-beta (beta) 'x-2025' added; the client sent None",
    ]
    # The same beta flag sent by the client itself travels.
    (ok,) = _named(
        run_checks(_subject({"model": "m"}, {**HEADERS_OK, "anthropic-beta": "x"}, {"anthropic-beta": "x"})), HEADERS
    )
    assert isinstance(ok, Check) and ok.passed


def test_stream_options_sent_to_the_strict_api_is_a_proxy_bug_and_an_empty_system_a_deviation() -> None:
    body = {"model": "m", "messages": [], "stream_options": {"include_usage": True}, "system": []}
    results = run_checks(_subject(body, HEADERS_OK))
    (unknown,) = _named(results, UNKNOWN_FIELDS)
    assert isinstance(unknown, Check) and not unknown.passed and unknown.actual == ["stream_options"]
    (empty,) = _named(results, EMPTY_FIELDS)
    assert isinstance(empty, Deviation) and empty.message.startswith("system: [] sent where")


def test_every_check_result_name_has_a_spec_with_its_why() -> None:
    for name in (
        TOOL_IDS,
        HEADERS,
        UNKNOWN_FIELDS,
        "stop_reason",
        "request.temperature",
        "grammar:start_first",
        "secret_leak",
        "client_crash",
        "openai.documented_fields",
        "start_usage_reported",
    ):
        spec = spec_for(name)
        assert spec is not None and len(spec.why) > 40, name
    assert spec_for("no.such.check") is None


def test_ollama_content_type_is_a_warning_since_its_server_parses_any_body_as_json() -> None:
    # LiteLLM sends Ollama its JSON body as application/octet-stream; Ollama reads it all the same.
    table = registry.facts("ollama").upstream_request
    assert table is not None
    sent = {"content-type": "application/octet-stream"}
    assert header_findings(table, sent, {}) == [
        (False, "content-type (content type) is 'application/octet-stream', the provider needs 'application/json'")
    ]
    anthropic = registry.facts("anthropic").upstream_request
    assert anthropic is not None
    assert (
        True,
        "content-type (content type) is 'application/octet-stream', the provider needs 'application/json'",
    ) in (header_findings(anthropic, {**sent, "anthropic-version": "2023-06-01"}, {}))
