"""The cross-run header checks (`harness.checks.headers`): Retry-After as the upstream said it, the client
provider's request-id header, and version headers as the backend's own SDK sends them."""

from __future__ import annotations

from pathlib import Path

from harness.checks import across_runs as headers
from harness.trace.model import Check, Deviation, RunTrace, Wire
from tests.checks.support import run_fault


def _run(
    role: str, client: str, backend: str, answer: dict[str, str], upstream: dict[str, str], status: int | None = None
) -> RunTrace:
    return RunTrace(
        case_id="c",
        role=role,  # type: ignore[arg-type]
        scenario="s",
        client=client,
        upstream=backend,
        mode="translate" if role == "translated" else "passthrough",
        stream=False,
        wire=Wire(answer_headers=answer, upstream_headers=upstream),
        upstream_status=status,
    )


def _compare(client: str, backend: str, answers: tuple[dict[str, str], ...], sent: dict[str, str]) -> list:
    front, back, translated = answers
    runs = {
        "baseline_frontend": _run("baseline_frontend", client, client, front, {}),
        "baseline_backend": _run("baseline_backend", backend, backend, back, {"anthropic-version": "2026-10-21"}),
        "translated": _run("translated", client, backend, translated, sent),
    }
    return headers.compare(client, backend, runs)


def test_a_retry_after_lost_on_the_way_is_a_failed_check() -> None:
    found = _compare("openai", "anthropic", ({"retry-after": "20"}, {"retry-after": "20"}, {"x": "y"}), {})
    assert found == [
        Check(name=headers.RETRY_AFTER, passed=False, expected="Retry-After of 20 s, as the upstream said", actual=None)
    ]


def test_retry_after_ms_rounded_up_to_whole_seconds_is_the_same_delay() -> None:
    answers = ({"retry-after": "2"}, {"retry-after-ms": "1500"}, {"retry-after": "2"})
    (found,) = _compare("openai", "anthropic", answers, {})
    assert isinstance(found, Check) and found.passed, found


def test_together_retry_after_on_a_200_is_not_asked_of_the_proxy() -> None:
    # Together AI sends `Retry-After: 2` on a successful answer (corpus openai_compat/together-nonstream-gzip): no
    # SDK waits on a success, so a proxy that drops it loses nothing; on an error the same header is required.
    runs = {
        "baseline_frontend": _run("baseline_frontend", "openai", "openai", {}, {}, 200),
        "baseline_backend": _run("baseline_backend", "together", "together", {"retry-after": "2"}, {}, 200),
        "translated": _run("translated", "openai", "together", {"content-type": "application/json"}, {}, 200),
    }
    assert headers.compare("openai", "together", runs) == []
    runs["baseline_backend"] = runs["baseline_backend"].model_copy(update={"upstream_status": 429})
    (found,) = headers.compare("openai", "together", runs)
    assert isinstance(found, Check) and not found.passed and found.name == headers.RETRY_AFTER


def test_no_retry_after_is_asked_of_a_client_whose_provider_sends_none() -> None:
    # google-genai backs off on its own (Gemini's real 429 carries no Retry-After: corpus gemini/error-429-*).
    assert _compare("gemini", "anthropic", ({}, {"retry-after": "20"}, {"x": "y"}), {}) == []


def test_a_missing_request_id_is_a_warning_naming_the_header() -> None:
    found = _compare("anthropic", "openai", ({"request-id": "req_1"}, {}, {"content-type": "application/json"}), {})
    message = "no request-id header; the anthropic provider sends one on every answer"
    assert found == [Deviation(rule=headers.REQUEST_ID, message=message)]


def test_a_version_other_than_the_clients_is_a_warning_only_within_one_api() -> None:
    sent = {"anthropic-version": "2023-06-01"}
    (same,) = _compare("anthropic", "anthropic", ({}, {}, {}), sent)
    assert isinstance(same, Deviation) and same.rule == headers.HEADER_VALUES
    assert same.message == "anthropic-version (version) '2023-06-01'; the anthropic SDK sends '2026-10-21'"
    assert _compare("openai", "anthropic", ({}, {}, {}), sent) == []  # the proxy pins what its body is written for


def test_a_dropped_retry_after_fails_the_case_on_the_header(tmp_path: Path) -> None:
    code, result = run_fault(tmp_path, "retry-after-dropped", "error-rate-limit-429", stream=False)
    assert code == 1
    assert result.verdict == "proxy_bug_response"
    failed = {c.name: c for c in result.runs["translated"].checks if not c.passed}
    assert failed[headers.RETRY_AFTER].actual is None
    assert failed[headers.RETRY_AFTER].expected.startswith("Retry-After of ")


def test_a_spec_warning_the_providers_own_answer_shares_is_not_the_proxys() -> None:
    shared = Deviation(rule="answer.spec_warnings", message="body.store: undocumented field 'store' [spec]")
    own = Deviation(rule="answer.spec_warnings", message="body.x_proxy: undocumented field 'x_proxy' [spec]")
    runs = {
        "baseline_frontend": _run("baseline_frontend", "responses", "responses", {}, {}),
        "baseline_backend": _run("baseline_backend", "openai", "openai", {}, {}),
        "translated": _run("translated", "responses", "openai", {}, {}),
    }
    runs["baseline_frontend"] = runs["baseline_frontend"].model_copy(update={"deviations": [shared]})
    runs["translated"] = runs["translated"].model_copy(update={"deviations": [shared, own]})
    assert headers.beyond_baseline(runs) == [own]
    # An upstream warning is weighed against the backend SDK's own request, not the client's answer.
    sent = Deviation(rule="upstream.spec_warnings", message="input[*].type: required field 'type' is missing [spec]")
    runs["translated"] = runs["translated"].model_copy(update={"deviations": [sent]})
    assert headers.beyond_baseline(runs) == [sent]
    runs["baseline_backend"] = runs["baseline_backend"].model_copy(update={"deviations": [sent]})
    assert headers.beyond_baseline(runs) == []
