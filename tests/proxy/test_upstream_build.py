"""`upstream.build` keeps the headers it worked out for requests that share them: every request it builds, first
or again, is what `client.build_request` makes of it (method, URL, headers in order and case, body, timeouts)."""

from __future__ import annotations

import asyncio

import httpx2
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.protocols import HttpRequest
from harness.proxy.config import UpstreamConfig
from harness.proxy.upstream import HOP_BY_HOP, build, make_client, timeout_for

NAMES = ["content-type", "accept", "user-agent", "accept-encoding", "connection", "host", "content-length", "x-a"]
VALUES = st.text(alphabet="abc/-*; =1", min_size=1, max_size=8)


def _slow(client: httpx2.AsyncClient, upstream: UpstreamConfig, request: HttpRequest) -> httpx2.Request:
    headers = {k: v for k, v in request.headers.items() if k not in HOP_BY_HOP}
    headers.setdefault("accept-encoding", "identity")
    url = f"{upstream.base_url}{request.path}"
    timeout = timeout_for(upstream)
    return client.build_request(request.method, url, headers=headers, content=request.body, timeout=timeout)


def _seen(request: httpx2.Request) -> tuple[object, ...]:
    return request.method, str(request.url), request.headers.raw, request.read(), request.extensions


@settings(max_examples=80, deadline=None)
@given(
    headers=st.dictionaries(st.sampled_from(NAMES), VALUES, max_size=6),
    method=st.sampled_from(["POST", "GET"]),
    body=st.binary(max_size=20),
    base=st.sampled_from(["http://replay.invalid/openai", "https://example.com:8443", "http://h/x/y"]),
    cookie=st.booleans(),
    read_timeout=st.sampled_from([300.0, 1.5]),
)
def test_build_makes_what_the_client_builds(
    headers: dict[str, str], method: str, body: bytes, base: str, cookie: bool, read_timeout: float
) -> None:
    client = make_client(None)
    if cookie:
        client.cookies.set("session", "s1")
    upstream = UpstreamConfig(name="u", protocol="openai", base_url=base, read_timeout=read_timeout)
    request = HttpRequest(method=method, path="/v1/chat", headers=headers, body=body)
    expected = _seen(_slow(client, upstream, request))
    assert _seen(build(client, upstream, request)) == expected
    assert _seen(build(client, upstream, request)) == expected  # again, from what the first one worked out
    asyncio.run(client.aclose())
