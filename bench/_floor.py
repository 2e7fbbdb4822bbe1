"""The SDK floor of `bench_matrix`: exactly the SDK calls the runner makes, each through the same driver call,
answered in-process with the recorded bytes of the client's own protocol (no proxy, no harness around the call).
`prepare_floor` captures every answer once, before timing; `Floor.run` makes the calls."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import httpx2

from bench._socket_floor import CannedSockets, Frames, frames_of
from harness import drivers, ir
from harness.drivers.base import SdkResult, UnsupportedRequest
from harness.protocols import HttpRequest, registry
from harness.record import Replayer
from harness.rig import Environment
from harness.runner.engine import Engine
from harness.scenarios.model import Scenario
from harness.trace import Run

FLOOR_BASE = "http://floor.local"
"""The base URL the floor's SDK clients are given (their mock transport answers every request)."""


@dataclass(frozen=True)
class Reply:
    """A recorded answer: status, headers, body chunks as recorded."""

    status: int
    headers: Mapping[str, str]
    chunks: tuple[bytes, ...]


class _Chunks(httpx2.SyncByteStream, httpx.SyncByteStream):
    """A response body handed over chunk by chunk, as a socket would."""

    def __init__(self, chunks: tuple[bytes, ...]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


def _httpx(protocol: str) -> bool:
    return registry.sdk(protocol).http_client == "httpx"


def mock_client(protocol: str, answer: Callable[[HttpRequest], Reply]) -> Any:
    """An HTTP client whose transport answers in-process (`httpx` for the ollama SDK, else `httpx2`)."""

    def handler(request: httpx2.Request | httpx.Request) -> Any:
        http = HttpRequest(
            method=request.method,
            path=request.url.path,
            query=dict(request.url.params.multi_items()),
            headers={k.lower(): v for k, v in request.headers.items()},
            body=request.read(),
        )
        reply = answer(http)
        module: Any = httpx if _httpx(protocol) else httpx2
        return module.Response(reply.status, headers=dict(reply.headers), stream=_Chunks(reply.chunks))

    if _httpx(protocol):
        return httpx.Client(transport=httpx.MockTransport(handler), timeout=60.0)
    return httpx2.Client(transport=httpx2.MockTransport(handler), timeout=60.0)


def call(client: str, scenario: Scenario, request: ir.Request | None, stream: bool, http: Any) -> SdkResult:
    """The driver call a run makes (a listing, or the scenario's request), against `FLOOR_BASE`."""
    driver = drivers.get(client)
    with http:
        if request is None:
            return driver.list_models(base_url=FLOOR_BASE, http_client=http)
        return driver.run(request, stream=stream, base_url=FLOOR_BASE, http_client=http)


@dataclass(frozen=True)
class FloorCall:
    """One SDK call of the floor: who calls, with what, and the recorded answer it gets."""

    client: str
    scenario: Scenario
    request: ir.Request | None
    stream: bool
    reply: Reply
    run: Run
    """The planned run the call stands for."""
    frames: Frames | None = None
    """A WebSocket-mode run's answer: the reply as the frames the proxy would send (None: an HTTP run)."""


@dataclass
class Floor:
    """The SDK calls of a matrix with their recorded answers, captured before timing; `close` when done."""

    calls: list[FloorCall]
    sockets: CannedSockets | None = None
    """The canned WebSocket server of the WebSocket-mode calls (None without any)."""

    def run_one(self, item: FloorCall) -> SdkResult:
        """One SDK call answered with its recorded bytes."""
        if item.frames is not None:
            self.sockets = self.sockets or CannedSockets()
            return self.sockets.turn(item.client, item.request, item.frames)
        reply = item.reply
        http = mock_client(item.client, lambda _request: reply)
        return call(item.client, item.scenario, item.request, item.stream, http)

    def close(self) -> None:
        """Stop the canned WebSocket server, if one was started."""
        if self.sockets is not None:
            self.sockets.close()
            self.sockets = None

    def run(self) -> int:
        """Every call, one after the other; the number of calls answered."""
        return len([r for r in (self.run_one(item) for item in self.calls) if answered(r)])


def answered(result: SdkResult) -> bool:
    """The SDK call came back with something: a response, events, an error or a model list."""
    return any(part is not None for part in (result.response, result.events, result.error, result.models))


def _recorded_reply(replayer: Replayer, client: str, scenario: Scenario, stream: bool) -> Reply:
    """The client protocol's own recording of the scenario, found by `Replayer.reply` from the SDK's request."""
    got: list[Reply] = []

    def answer(request: HttpRequest) -> Reply:
        wire = replayer.reply(client, request)
        got.append(Reply(wire.status, wire.headers, tuple(wire.chunks)))
        return got[-1]

    # The scenario id as the model: the replayer resolves the scenario by name, as it does behind the proxy.
    call(client, scenario, scenario.request_for(scenario.id, stream=stream), stream, mock_client(client, answer))
    if len(got) != 1:
        raise SystemExit(f"floor: {client} {scenario.id} made {len(got)} requests, expected one")
    return got[0]


def _proxy_listing(runner: Engine, client: str, scenario: Scenario) -> Reply:
    """The model listing the proxy answers the client with (no backend recording exists for it)."""
    got: list[Reply] = []

    def keep(response: Any) -> None:
        response.read()
        got.append(Reply(response.status_code, dict(response.headers), (response.content,)))

    env = Environment(runner.scenarios, runner.plan.run_backends, runner.options.cassettes)
    try:
        http = env.client("floor-listing", client)
        http.event_hooks = {"request": [], "response": [keep]}
        call(client, scenario, None, False, http)
    finally:
        env.close()
    if len(got) != 1:
        raise SystemExit(f"floor: {client} listing made {len(got)} requests, expected one")
    return got[0]


def prepare_floor(runner: Engine) -> Floor:
    """The floor's calls for every planned run of `runner`, with each answer fetched once (not timed)."""
    by_id = {s.id: s for s in runner.scenarios}
    replayer = Replayer(runner.options.cassettes, runner.scenarios)
    replies: dict[tuple[str, str, bool], Reply] = {}
    refused: set[tuple[str, str, bool]] = set()
    calls = []
    for run in runner.planned_runs():
        scenario = by_id[run.scenario]
        listing = scenario.kind == "models_list"
        answer_key = (run.client, run.scenario, run.stream)
        if answer_key in refused:
            continue
        if answer_key not in replies:
            try:
                if listing:
                    replies[answer_key] = _proxy_listing(runner, run.client, scenario)
                else:
                    replies[answer_key] = _recorded_reply(replayer, run.client, scenario, run.stream)
            except UnsupportedRequest:
                # The SDK cannot send it (Converse has no tool choice `none`): the harness's run ends in the
                # driver's refusal too (the case is unsupported), so there is no SDK call to floor.
                refused.add(answer_key)
                continue
        # The same request the runner's driver call sends, routed model name included.
        request = None if listing else scenario.request_for(run.route, stream=run.stream)
        reply = replies[answer_key]
        frames = frames_of(run.client, reply.status, reply.headers, reply.chunks) if run.transport == "ws" else None
        calls.append(FloorCall(run.client, scenario, request, run.stream, reply, run, frames))
    return Floor(calls)
