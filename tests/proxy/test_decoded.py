"""`DecodedRequests`: a request decoded once per exact content, always what the codec itself decodes; a request
that does not decode raises every time."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.protocols import DecodeError, HttpRequest, registry
from harness.proxy.decoded import DecodedRequests

BODIES: list[dict[str, object]] = [
    {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True},
    {"model": "n", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]},
]


def _request(body: dict[str, object], header: str) -> HttpRequest:
    headers = {"content-type": "application/json", "x-header": header}
    return HttpRequest("POST", "/v1/chat/completions", {}, headers, json.dumps(body).encode())


@settings(max_examples=40, deadline=None)
@given(picks=st.lists(st.tuples(st.sampled_from(range(len(BODIES))), st.sampled_from(["a", "b"])), max_size=12))
def test_each_request_is_what_the_codec_decodes(picks: list[tuple[int, str]]) -> None:
    codec = registry.get("openai")
    decoded = DecodedRequests(limit=2)
    for index, header in picks:
        request = _request(BODIES[index], header)
        assert decoded(codec, request) == codec.decode_request(request)


def test_a_request_seen_before_is_not_decoded_again_and_one_that_fails_raises_each_time() -> None:
    codec = registry.get("openai")
    calls: list[HttpRequest] = []

    @dataclasses.dataclass
    class Counting:
        name = "openai"

        def decode_request(self, request: HttpRequest) -> object:
            calls.append(request)
            return codec.decode_request(request)

    decoded = DecodedRequests()
    request = _request(BODIES[0], "a")
    first = decoded(Counting(), request)  # type: ignore[arg-type]
    assert decoded(Counting(), dataclasses.replace(request)) is first  # type: ignore[arg-type]
    assert len(calls) == 1
    broken = dataclasses.replace(request, body=b"{")
    for _ in range(2):
        with pytest.raises(DecodeError):
            decoded(codec, broken)
