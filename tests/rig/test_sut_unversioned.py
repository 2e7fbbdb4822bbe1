"""`--sut-unversioned FRONTEND`: a gateway documented with `OPENAI_BASE_URL=http://host:port` serves `/responses`,
not `/v1/responses`; the chosen frontends' requests leave without the `/v1` after the `--sut` URL's own path, and the
capture keeps the path the gateway was sent."""

from __future__ import annotations

import httpx2
import openai
import pytest

from harness.rig.sut import CapturingTransport
from harness.rig.sut_client import SutClientError, UnversionedTransport, parse_unversioned

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
