"""Everything the three runs of a case need: scenarios, the replayed backends, the proxy (in-process or on a
loopback socket), the trace tap, and HTTP clients for the SDK drivers."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from harness.rig.bridge import InlineLoop, SyncBridge
from harness.rig.clients import CLIENT_TIMEOUT_S, SharedTransport, sdk_client
from harness.rig.keys import planted_key, planted_key_env
from harness.rig.routes import route_table
from harness.rig.sut import Session, SutTarget
from harness.rig.sut_client import SutClient
from harness.scenarios.model import Scenario
from harness.trace import Run

RUN_HEADER = "x-conformance-run"
"""Request header carrying the run key (`Run.key`), so the tap can hand each exchange to the run that caused it."""
REPLAY_BASE = "http://replay.invalid"
HOOKS = {"passthrough": "identity", "translate": "translate"}
"""The hook set of each mode's routes (`Environment` installs the run's translate hooks as `translate`)."""


def proxy_config(
    scenarios: Sequence[Scenario],
    backends: Sequence[str],
    upstream_base: str,
    *,
    models: Mapping[str, str] | None = None,
) -> ProxyConfig:
    """A proxy config with a pass-through and a translate route per (scenario, backend) (`route_table`), each
    upstream at `<upstream_base>/<backend>/_s/<scenario>` with the backend's realistic model (`models` overrides).
    Its model listings name only the routes the table lists (`RouteSpec.listed`).

    Every upstream holds the planted key (`CONFORMANCE_PLANTED_KEY`, in the shape its protocol's keys take), so a
    proxy that leaks its key is caught.
    """
    upstreams: dict[str, UpstreamConfig] = {}
    routes = []
    for r in route_table(scenarios, backends, models=models):
        name = r.upstream_path.lstrip("/")
        upstream = upstreams.setdefault(
            name,
            UpstreamConfig(
                name=name,
                protocol=r.backend,
                base_url=r.upstream_base(upstream_base),
                api_key_env=planted_key_env(r.backend),
            ),
        )
        routes.append(
            ModelRoute(
                name=r.name,
                mode=r.mode,
                upstream=upstream,
                upstream_model=r.upstream_model,
                hooks=HOOKS[r.mode],
                listed=r.listed,
            )
        )
    return ProxyConfig(models=tuple(routes), source="<conformance run>")


EXCHANGE_WAIT_S = 5.0
"""How long a socket-mode run waits for the proxy's server thread to file its exchange after the client is done
(the tap files it once the response is sent, which can be just after the client read its last byte)."""


@dataclass
class ExchangeSink:
    """The proxy's trace tap: exchanges by run key."""

    exchanges: dict[str, Exchange] = field(default_factory=dict)
    filed: threading.Condition = field(default_factory=threading.Condition)

    def __call__(self, exchange: Exchange) -> None:
        key = exchange.frontend_headers.get(RUN_HEADER)
        if key:
            with self.filed:
                self.exchanges[key] = exchange
                self.filed.notify_all()

    def pop(self, key: str, wait_s: float = 0.0) -> Exchange | None:
        """The exchange of one run, if the proxy saw it, waiting up to `wait_s` seconds for it to be filed."""
        with self.filed:
            self.filed.wait_for(lambda: key in self.exchanges, timeout=wait_s)
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
        pace: float = 0.0,
        hooks: TranslateHooks | None = None,
        sut: str | None = None,
        replay_host: str = "127.0.0.1",
        replay_port: int = 0,
        sut_client: SutClient | None = None,
        models: Mapping[str, str] | None = None,
        timeout: float = CLIENT_TIMEOUT_S,
    ) -> None:
        self.timeout = timeout
        self.scenarios = {s.id: s for s in scenarios}
        self.cassettes = cassettes
        self.planted_key = planted_key()
        self.replayer = Replayer(cassettes, scenarios, rechunk_mode=rechunk)
        self.exchanges = ExchangeSink()
        config = proxy_config(scenarios, backends, REPLAY_BASE, models=models)
        hook_sets: Mapping[str, TranslateHooks] = {"translate": hooks or TranslateHooks()}
        self.app = create_app(
            config, transport=ReplayTransport(self.replayer), on_exchange=self.exchanges, hooks=hook_sets
        )
        self._config, self._hook_sets = config, hook_sets
        self._socket_server: ServerThread | None = None
        self.loop = InlineLoop()
        self.server: ServerThread | None = None
        if socket:
            self.server = ServerThread(self.app).start()
            self.base_url = self.server.url
            self._pool = httpx2.HTTPTransport()
            # One pool for every run's client; a client's close must not close it under another run's response.
            self._transport: httpx2.BaseTransport = SharedTransport(self._pool)
        else:
            self.base_url = "http://proxy.local"
            self._transport = SyncBridge(StreamingASGITransport(self.app), self.loop)
        self.sut: SutTarget | None = None
        if sut is not None:
            try:
                self.sut = SutTarget(
                    sut,
                    scenarios,
                    backends,
                    cassettes,
                    replay_host=replay_host,
                    replay_port=replay_port,
                    rechunk=rechunk,
                    pace=pace,
                    client=sut_client,
                    models=models,
                    timeout=timeout,
                )
            except Exception:  # a SUT that does not answer, a busy replay port: release the loop, then say so
                self.close()
                raise

    def retarget(self, scenarios: Sequence[Scenario]) -> None:
        """Serve these scenarios (of the ids the environment was built with: the routes stay) from their cassettes
        as they are now, in-process and on the replay server (`conformance fuzz`: one example after another)."""
        self.scenarios = {s.id: s for s in scenarios}
        self.replayer.retarget(scenarios)
        if self.sut is not None:
            self.sut.replayer.retarget(scenarios)

    def client(self, run_key: str, protocol: str) -> Any:
        """An HTTP client of the kind `protocol`'s SDK needs, to the built-in proxy, tagged with `run_key`."""
        return sdk_client(protocol, self._transport, {RUN_HEADER: run_key}, timeout=self.timeout)

    @contextmanager
    def session(self, run: Run) -> Iterator[Session]:
        """Base URL and HTTP client for one run; once the run is over, `session.exchange` is what the proxy did.

        Translated runs go to the external proxy when there is one (`sut`); everything else to the built-in one.
        """
        if run.role == "translated" and self.sut is not None:
            with self.sut.session(run, {RUN_HEADER: run.key}) as external:
                yield external
            return
        socket = run.transport == "ws"
        base_url = self.socket_url() if socket else self.base_url
        session = Session(base_url, self.client(run.key, run.client), headers={RUN_HEADER: run.key})
        completed = False
        try:
            with session.http:
                yield session
            completed = True
        finally:
            # Over a socket the proxy files the exchange on its own thread: a run that completed waits for it
            # (bounded); a run that raised (nothing sent, say) takes what is there.
            wait = EXCHANGE_WAIT_S if (self.server is not None or socket) and completed else 0.0
            session.exchange = self.exchanges.pop(run.key, wait)

    def socket_url(self) -> str:
        """The built-in proxy on a loopback socket, for the runs a client makes over a socket of its own (WebSocket
        mode): the socket server when there is one, else a second app of the same config, replays and tap, started
        on first use."""
        if self.server is not None:
            return self.server.url
        if self._socket_server is None:
            app = create_app(
                self._config,
                transport=ReplayTransport(self.replayer),
                on_exchange=self.exchanges,
                hooks=self._hook_sets,
            )
            self._socket_server = ServerThread(app).start()
        return self._socket_server.url

    def close(self) -> None:
        """Stop the servers and the loop; release upstream clients."""
        if self._socket_server is not None:
            self._socket_server.stop()
        if self.sut is not None:
            self.sut.close()
        if self.server is not None:
            self._pool.close()
            self.server.stop()
        self.loop.run(state_of(self.app).aclose())
        self.loop.close()
