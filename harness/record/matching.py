"""vcrpy matchers by scenario: a recorded request matches when it decodes to the same scenario and streaming
mode, not when its bytes are equal, so a fixed translation never forces a re-record."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import httpx2

from harness.protocols import Codec, HttpRequest
from harness.scenarios.model import Scenario
from harness.scenarios.resolve import resolve, split_scenario


def _body_of(vcr_request: Any) -> bytes:
    body = vcr_request.body or b""
    return body.encode("utf-8") if isinstance(body, str) else body


def http_request_of(vcr_request: Any) -> HttpRequest:
    """Our HttpRequest from a vcrpy Request."""
    headers = {str(k): str(v) for k, v in dict(vcr_request.headers).items()}
    return HttpRequest.from_url(vcr_request.method, vcr_request.uri, headers, _body_of(vcr_request))


def backend_request(request: httpx2.Request, body: bytes) -> tuple[str, HttpRequest]:
    """(backend, the request relative to that backend's base URL) of an upstream request to
    `http://<any host>/<backend>/...`, as the replay transport and the reference source receive them."""
    backend, _, rest = request.url.path.lstrip("/").partition("/")
    http = HttpRequest(
        method=request.method,
        path=f"/{rest}",
        query=dict(request.url.params.multi_items()) if request.url.query else {},
        headers={k.lower(): v for k, v in request.headers.items()},
        body=body,
    )
    return backend, http


def step_key(
    codec: Codec, scenarios: Sequence[Scenario], request: HttpRequest, *, prefer: str | None = None
) -> tuple[str, bool, int]:
    """(scenario id, stream, step) of a backend request: the scenario its URL names (`/_s/<scenario>/...`), else
    the one found by decoding it (`prefer`, when several share its content and it is one of them), its streaming
    mode, and which call of a stored-response chain it is (`Scenario.step_of`; 0 for a scenario of one call), so
    each call of a chain has its own recording."""
    named, path = split_scenario(request.path)
    request = dataclasses.replace(request, path=path)
    decoded = codec.decode_request(request)
    scenario = resolve(decoded, scenarios, named=named, prefer=prefer)
    return scenario.id, codec.is_stream_request(request), scenario.step_of(decoded)


def _name(key: tuple[str, bool, int]) -> str:
    step = f", call {key[2] + 1}" if key[2] else ""
    return f"{key[0]} ({'stream' if key[1] else 'nonstream'}{step})"


class StepKeys:
    """`step_key` of vcrpy requests, each request decoded once (keyed on its method, URI and body): one per
    backend, shared by the replayer (to find a request's cassette) and the matchers of its cassettes (to find the
    recorded request in it), so a request is not decoded again by each."""

    def __init__(self, codec: Codec, scenarios: Sequence[Scenario]) -> None:
        self.codec = codec
        self.scenarios = scenarios
        self._keys: dict[tuple[str, str, bytes, str | None], tuple[str, bool, int]] = {}

    def __call__(self, vcr_request: Any, prefer: str | None = None) -> tuple[str, bool, int]:
        """(scenario id, stream, step) of `vcr_request` (`prefer`: as in `step_key`). The request is turned into
        an `HttpRequest` only when it is new: a request seen before (every run of a scenario sends the same one)
        is looked up by its method, URI and body as they are."""
        ident = (vcr_request.method.upper(), vcr_request.uri, _body_of(vcr_request), prefer)
        key = self._keys.get(ident)
        if key is None:
            key = self._keys[ident] = step_key(self.codec, self.scenarios, http_request_of(vcr_request), prefer=prefer)
        return key


def scenario_matcher(
    codec: Codec, scenarios: Sequence[Scenario], keys: StepKeys | None = None
) -> Callable[[Any, Any], None]:
    """A vcrpy matcher `(r1, r2)` that raises AssertionError naming both scenarios when they differ (`keys`: the
    backend's shared `StepKeys`, else its own)."""
    key = keys if keys is not None else StepKeys(codec, scenarios)

    def scenario(r1: Any, r2: Any) -> None:
        # The recorded request (r2) of a real provider names no scenario: of the scenarios sharing its content,
        # the incoming request's is the one it belongs to.
        k1 = key(r1)
        k2 = key(r2, prefer=k1[0])
        assert k1 == k2, f"scenario {_name(k1)} != recorded {_name(k2)}"

    return scenario
