"""Secrets never land in a cassette: every committed cassette is scanned, and a recording made with planted keys
(header, query and body) contains none of them."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from harness.backends import respond
from harness.protocols import HttpRequest, registry
from harness.record import RecordMode, Source, record_one
from harness.record.scrub import find_secrets, scrub_url
from harness.scenarios.loader import load_scenarios
from tests.conftest import REPO

PLANTED = "PLANTED-TEST-KEY-k3y"
COMMITTED = sorted((REPO / "cassettes").rglob("*.yaml"))


def test_there_are_committed_cassettes() -> None:
    assert len(COMMITTED) > 100


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(REPO / "cassettes")))
def test_committed_cassette_has_no_secrets(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert find_secrets(text, [PLANTED]) == []
    for header in ("authorization:", "x-api-key:", "x-goog-api-key:", "api-key:"):
        assert f"\n      {header}" not in text.lower()


def test_scanner_finds_key_shapes() -> None:
    text = "Bearer abcdefghijklmnop1234 sk-ant-api03-abcdefgh sk-proj-" + "a" * 30 + " AIza" + "b" * 35
    assert len(find_secrets(text)) == 4
    assert find_secrets(f"x {PLANTED} y", []) == [PLANTED]


def test_query_keys_are_redacted() -> None:
    assert scrub_url("https://g.example/v1beta/models/m:generateContent?key=SECRET&alt=sse") == (
        "https://g.example/v1beta/models/m:generateContent?key=REDACTED&alt=sse"
    )


@pytest.mark.parametrize("backend", ["openai", "anthropic", "gemini"])
def test_a_recording_with_planted_keys_keeps_none_of_them(tmp_path: Path, backend: str) -> None:
    scenarios = load_scenarios(REPO / "scenarios")
    scenario = next(s for s in scenarios if s.id == "text-basic")
    seen: list[httpx2.Request] = []

    def provider(request: httpx2.Request) -> httpx2.Request | httpx2.Response:
        # A stand-in for the real provider: answers like the reference backend and echoes nothing secret.
        seen.append(request)
        http = HttpRequest.from_url(request.method, str(request.url), dict(request.headers), request.read())
        reply = respond(registry.get(backend), http, scenarios)
        return httpx2.Response(
            reply.status, headers={**reply.headers, "set-cookie": f"s={PLANTED}"}, content=reply.body
        )

    source = Source(
        kind="real",
        base_url="https://provider.invalid",
        api_key=PLANTED,
        model="text-basic",
        transport=httpx2.MockTransport(provider),
    )
    path = record_one(backend, scenario, True, scenarios=scenarios, root=tmp_path, source=source, mode=RecordMode.ALL)
    assert seen and PLANTED in " ".join(seen[0].headers.values()) + str(seen[0].url)  # the key really was sent
    assert PLANTED not in path.read_text()
    assert find_secrets(path.read_text(), [PLANTED]) == []
