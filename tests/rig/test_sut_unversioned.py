"""`--sut-unversioned FRONTEND`: a gateway documented with `OPENAI_BASE_URL=http://host:port` serves `/responses`,
not `/v1/responses`; the chosen frontends' requests leave without the `/v1` after the `--sut` URL's own path, and the
capture keeps the path the gateway was sent."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest

from harness.drivers.responses_sdk import DRIVER
from harness.rig.sut import CapturingTransport, SutTarget
from harness.rig.sut_client import SutClient, SutClientError, UnversionedTransport, parse_unversioned
from harness.runner.execute import _socket_call
from harness.scenarios.loader import load_scenarios
from harness.trace import Run
from tests.conftest import REPO
from tests.drivers.test_responses_ws import _events as ws_events
from tests.drivers.test_responses_ws import scripted, server

ANSWER = {
    "id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "gpt-4o-mini",
    "output": [], "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
}  # fmt: skip


def _paths(root: str, paths: list[str]) -> tuple[list[str], CapturingTransport]:
    seen: list[str] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.url.path)
        return httpx2.Response(200, json=ANSWER)

    capture = CapturingTransport(httpx2.MockTransport(answer))
    with httpx2.Client(transport=UnversionedTransport(capture, root)) as client:
        for path in paths:
            client.post(f"http://gw.test{path}", json={})
    return seen, capture


def test_the_v1_after_the_sut_path_is_taken_out_and_the_capture_sees_what_was_sent() -> None:
    seen, capture = _paths("/gw", ["/gw/v1/responses", "/gw/v1/chat/completions", "/gw/v1beta/models", "/other/v1/x"])
    assert seen == ["/gw/responses", "/gw/chat/completions", "/gw/v1beta/models", "/other/v1/x"]
    assert capture.request is not None and capture.request.path == "/other/v1/x"


def test_the_openai_sdk_reaches_responses_at_the_root() -> None:
    seen: list[str] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.url.path)
        return httpx2.Response(200, json=ANSWER)

    http = httpx2.Client(transport=UnversionedTransport(httpx2.MockTransport(answer), ""))
    client = openai.OpenAI(api_key="sk-test", base_url="http://gw.test/v1", http_client=http, max_retries=0)
    client.responses.create(model="m", input="hi")
    assert seen == ["/responses"]


def test_only_registered_protocols_may_be_named() -> None:
    assert parse_unversioned("responses, openai") == frozenset({"responses", "openai"})
    with pytest.raises(SutClientError, match="not frontend protocols: nope"):
        parse_unversioned("responses,nope")
    with pytest.raises(SutClientError, match="none"):
        parse_unversioned(" , ")


@pytest.mark.parametrize(
    ("unversioned", "path"), [(frozenset({"responses"}), "/responses"), (frozenset(), "/v1/responses")]
)
def test_it_reaches_the_websocket_url_too(unversioned: frozenset[str], path: str) -> None:
    """A ws case against a gateway named in `--sut-unversioned` opens `<root>/responses`, as its HTTP case posts
    there (the driver used to put `/v1` back)."""
    scenario = next(s for s in load_scenarios(REPO / "scenarios") if s.id == "text-basic")
    run = Run("translated", "responses", "anthropic", "text-basic", True, "ws")
    seen: list[Any] = []
    frames = [json.dumps(e) for e in ws_events()]
    with server(scripted(frames, seen=seen)) as url:
        sut = SutTarget(
            url, [scenario], ["anthropic"], REPO / "cassettes", client=SutClient(unversioned=unversioned), timeout=5
        )
        try:
            with sut.session(run, {}) as session:
                outcome = _socket_call(DRIVER, run, scenario.request_for(run.route, stream=True), session, 5.0)
        finally:
            sut.close()
    assert [p for p, _ in seen] == [path]
    assert outcome.result.error is None and outcome.socket is not None and outcome.socket.frames
