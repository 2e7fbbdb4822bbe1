"""`Replayer.reply` finds a request's recording once (`Replayer._play`) and serves it again from memory: every
answer is the one a replayer meeting the request for the first time gives."""

from __future__ import annotations

import contextlib
import dataclasses

import pytest
from vcr.persisters.filesystem import FilesystemPersister

from harness.backends import WireReply
from harness.protocols import HttpRequest, registry
from harness.record import Replayer
from harness.scenarios import load_scenarios
from harness.scenarios.resolve import scenario_path
from tests.conftest import REPO

SCENARIOS = load_scenarios(REPO / "scenarios")
CASES = [
    (s.id, b, stream) for s in SCENARIOS[:6] for b in ("openai", "anthropic", "gemini") for stream in (False, True)
]


def _request(scenario: str, backend: str, stream: bool) -> HttpRequest:
    found = next(s for s in SCENARIOS if s.id == scenario)
    http = registry.get(backend).encode_request(
        found.request_for(registry.facts(backend).upstream_model, stream=stream)
    )
    return dataclasses.replace(http, path=scenario_path(scenario) + http.path)


def _fresh(scenario: str, backend: str, stream: bool) -> tuple[HttpRequest, WireReply]:
    """The recording's request, and the answer a fresh replayer gives it (the test is skipped if none is recorded)."""
    request = _request(scenario, backend, stream)
    try:
        return request, Replayer(REPO / "cassettes", SCENARIOS).reply(backend, request)
    except LookupError:
        pytest.skip("not recorded")


@pytest.mark.parametrize(("scenario", "backend", "stream"), CASES)
def test_a_request_served_again_gets_what_a_fresh_replayer_gives(scenario: str, backend: str, stream: bool) -> None:
    request, expected = _fresh(scenario, backend, stream)
    replayer = Replayer(REPO / "cassettes", SCENARIOS)
    other = _request(SCENARIOS[0].id, backend, not stream)
    first = replayer.reply(backend, request)
    with contextlib.suppress(LookupError):  # another recording in between
        replayer.reply(backend, other)
    again = replayer.reply(backend, dataclasses.replace(request, headers={**request.headers, "x-other": "1"}))
    assert first == expected and again == expected


def test_a_retargeted_replayer_finds_recordings_afresh() -> None:
    replayer = Replayer(REPO / "cassettes", SCENARIOS)
    request = _request("text-basic", "openai", False)
    replayer.reply("openai", request)
    assert replayer._played
    replayer.retarget(SCENARIOS)
    assert not replayer._played
    assert replayer.reply("openai", request) == Replayer(REPO / "cassettes", SCENARIOS).reply("openai", request)


@pytest.mark.parametrize(("scenario", "backend", "stream"), CASES)
def test_a_checked_cassette_is_read_once_and_serves_what_an_unchecked_one_does(
    scenario: str, backend: str, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Replayer.check` reads and parses a cassette, and hands both to vcrpy (`_AlreadyRead`): the cassette it
    loads answers every request as one vcrpy read from the file itself (`reply` without `check`)."""
    request, expected = _fresh(scenario, backend, stream)
    unchecked = Replayer(REPO / "cassettes", SCENARIOS)
    unchecked.reply(backend, request)
    path = unchecked._path(backend, scenario, stream)

    def not_again(*_: object, **__: object) -> None:
        raise AssertionError("vcrpy read a cassette check had read")

    monkeypatch.setattr(FilesystemPersister, "load_cassette", not_again)
    checked = Replayer(REPO / "cassettes", SCENARIOS)
    assert not checked.loaded(backend, scenario, stream)
    checked.check(backend, scenario, stream)
    assert checked.loaded(backend, scenario, stream)
    loaded, read = checked._cassettes[path], unchecked._cassettes[path]
    assert [(q._to_dict(), r) for q, r in loaded.data] == [(q._to_dict(), r) for q, r in read.data]
    assert checked.reply(backend, request) == expected
