"""Everything the three runs of a case need: scenarios, the replayed backends, the proxy (in-process or on a
loopback socket), the trace tap, and HTTP clients for the SDK drivers."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx2

from harness.proxy import (
    Exchange,
    ModelRoute,
    ProxyConfig,
    ServerThread,
    StreamingASGITransport,
    TranslateHooks,
    UpstreamConfig,
    create_app,
    state_of,
)
from harness.record import Rechunk, Replayer, ReplayTransport
from harness.runner.bridge import HttpxAdapter, LoopThread, SyncBridge
from harness.runner.checks import PLANTED_KEY_ENV, planted_key
from harness.runner.sut import Session, SutTarget, TaggingTransport
from harness.scenarios.model import ReplyModels, Scenario

RUN_HEADER = "x-conformance-run"
"""Request header carrying the run key, so the tap can hand each exchange to the run that caused it."""
REPLAY_BASE = "http://replay.invalid"
CLIENT_TIMEOUT = httpx2.Timeout(60.0)


def route_name(scenario: str, backend: str, mode: str) -> str:
    """The frontend model name of one (scenario, backend, mode) route; its upstream model is the scenario id."""
    return f"{scenario}--{backend}--{mode}"


_MODES: tuple[tuple[Literal["passthrough", "translate"], str], ...] = (
    ("passthrough", "identity"),
    ("translate", "translate"),
)


def proxy_config(scenarios: Sequence[Scenario], backends: Sequence[str], upstream_base: str) -> ProxyConfig:
    """A proxy config with a pass-through and a translate route per (scenario, backend).

    Every upstream holds the planted key (`CONFORMANCE_PLANTED_KEY`), so a proxy that leaks its key is caught.
    """
    upstreams = {
        b: UpstreamConfig(name=b, protocol=b, base_url=f"{upstream_base}/{b}", api_key_env=PLANTED_KEY_ENV)
        for b in backends
    }
    routes = [
        ModelRoute(name=route_name(s.id, b, mode), mode=mode, upstream=upstreams[b], upstream_model=s.id, hooks=hooks)
        for s in scenarios
        for b in backends
        for mode, hooks in _MODES
    ]
    # A models-list scenario checks that the proxy lists its configured models: give it routes with those names.
    listed = [m for s in scenarios if isinstance(s.reply, ReplyModels) for m in s.reply.models]
    first = upstreams[backends[0]] if backends else None
    if first is not None:
        taken = {r.name for r in routes}
        routes += [
            ModelRoute(name=m, mode="passthrough", upstream=first, upstream_model=m)
            for m in dict.fromkeys(listed)
            if m not in taken
        ]
    return ProxyConfig(models=tuple(routes), source="<conformance run>")


@dataclass
class Collector:
    """The proxy's trace tap: exchanges by run key."""

    exchanges: dict[str, Exchange] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, exchange: Exchange) -> None:
        key = exchange.frontend_headers.get(RUN_HEADER)
        if key:
            with self.lock:
                self.exchanges[key] = exchange

    def pop(self, key: str) -> Exchange | None:
        """The exchange of one run, if the proxy saw it."""
        with self.lock:
            return self.exchanges.pop(key, None)


class Environment:
    """The proxy under test wired to replayed backends; build once per matrix run, close at the end."""

    def __init__(
        self,
        scenarios: Sequence[Scenario],
        backends: Sequence[str],
        cassettes: Path,
        *,
        socket: bool = False,
        rechunk: Rechunk | None = None,
        hooks: TranslateHooks | None = None,
        sut: str | None = None,
        replay_host: str = "127.0.0.1",
        replay_port: int = 0,
    ) -> None:
        self.scenarios = {s.id: s for s in scenarios}
        self.cassettes = cassettes
        self.planted_key = planted_key()
        self.replayer = Replayer(cassettes, scenarios, rechunk_mode=rechunk)
        self.collector = Collector()
        config = proxy_config(scenarios, backends, REPLAY_BASE)
        hook_sets: Mapping[str, TranslateHooks] = {"translate": hooks or TranslateHooks()}
        self.app = create_app(
            config, transport=ReplayTransport(self.replayer), on_exchange=self.collector, hooks=hook_sets
        )
        self.loop = LoopThread()
        self.server: ServerThread | None = None
        if socket:
            self.server = ServerThread(self.app).start()
            self.base_url = self.server.url
            self._transport: httpx2.BaseTransport = httpx2.HTTPTransport()
        else:
            self.base_url = "http://proxy.local"
            self._transport = SyncBridge(StreamingASGITransport(self.app), self.loop)
        self.sut: SutTarget | None = None
        if sut is not None:
            self.sut = SutTarget(
                sut, scenarios, backends, cassettes, replay_host=replay_host, replay_port=replay_port, rechunk=rechunk
            )

    def client(self, run_key: str, protocol: str) -> Any:
        """An HTTP client for one SDK driver run, tagged with the run key (httpx for ollama, else httpx2)."""
        if protocol == "ollama":
            import httpx

            # The ollama driver sends through `client.send`, which skips the client's default headers: the run
            # key is set by the transport instead, or the tap could not tell whose exchange it saw.
            tagged = TaggingTransport(self._transport, {RUN_HEADER: run_key})
            return httpx.Client(transport=HttpxAdapter(tagged), headers={RUN_HEADER: run_key}, timeout=60.0)
        return httpx2.Client(transport=self._transport, headers={RUN_HEADER: run_key}, timeout=CLIENT_TIMEOUT)

    @contextmanager
    def session(
        self, run_key: str, protocol: str, *, translated: bool, backend: str, scenario: str, stream: bool
    ) -> Iterator[Session]:
        """Base URL and HTTP client for one run; once the run is over, `session.exchange` is what the proxy did.

        Translated runs go to the external proxy when there is one (`sut`); everything else to the built-in one.
        """
        if translated and self.sut is not None:
            with self.sut.session({RUN_HEADER: run_key}, protocol, backend, scenario, stream) as external:
                yield external
            return
        session = Session(self.base_url, self.client(run_key, protocol))
        try:
            with session.http:
                yield session
        finally:
            session.exchange = self.collector.pop(run_key)

    def close(self) -> None:
        """Stop the servers and the loop; release upstream clients."""
        if self.sut is not None:
            self.sut.close()
        if self.server is not None:
            self.server.stop()
        self.loop.run(state_of(self.app).aclose())
        self.loop.close()
