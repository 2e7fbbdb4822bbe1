"""Per-app state: config, codecs, the upstream client, hooks, the tap callback, counters and recent traces."""

from __future__ import annotations

import logging
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass

import httpx2
from starlette.types import Receive

from harness.protocols import Codec, HttpRequest, registry
from harness.proxy.config import ConfigError, ModelRoute, ProxyConfig, suggest
from harness.proxy.decoded import DecodedRequests
from harness.proxy.models import IDENTITY_HOOKS, Exchange, ExchangeCallback, TranslateHooks
from harness.proxy.tap import Recorder, deliver, new_trace_id
from harness.proxy.upstream import make_client

log = logging.getLogger("harness.proxy")

RECENT_TRACES = 50


@dataclass(frozen=True)
class RecentTrace:
    """A finished exchange as diagnostics lists it."""

    trace_id: str
    route: str
    model: str | None
    mode: str
    status: int | None
    error_kind: str | None


class ProxyState:
    """Everything the route handlers share; one per app."""

    def __init__(
        self,
        config: ProxyConfig,
        *,
        transport: httpx2.AsyncBaseTransport | None,
        on_exchange: ExchangeCallback | None,
        hooks: Mapping[str, TranslateHooks] | None,
    ) -> None:
        self.config = config
        self.transport = transport
        self.on_exchange = on_exchange
        self.hooks: dict[str, TranslateHooks] = {"identity": IDENTITY_HOOKS, **(hooks or {})}
        for route in config.models:
            if route.hooks not in self.hooks:
                known = ", ".join(sorted(self.hooks))
                raise ConfigError(
                    f"{config.source}: models.{route.name}.hooks: no hooks named {route.hooks!r}"
                    f"{suggest(route.hooks, self.hooks)}; allowed: {known}"
                )
        self.counters: Counter[str] = Counter()
        self.recent: deque[RecentTrace] = deque(maxlen=RECENT_TRACES)
        self.decoded = DecodedRequests()
        """What the proxy sent upstream, decoded to IR for the trace (each distinct request once)."""
        self._client: httpx2.AsyncClient | None = None

    @property
    def client(self) -> httpx2.AsyncClient:
        """The upstream client, created on first use (inside the serving event loop)."""
        if self._client is None:
            self._client = make_client(self.transport)
        return self._client

    async def aclose(self) -> None:
        """Close the upstream client (app shutdown)."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def codec(self, name: str) -> Codec:
        """A codec by registry name (the proxy reaches protocols only through the registry)."""
        return registry.get(name)

    def hooks_for(self, route: ModelRoute) -> TranslateHooks:
        """The translate hooks a model's config selects."""
        return self.hooks[route.hooks]

    def recorder(self, route: str, frontend_protocol: str) -> Recorder:
        """A recorder for a new exchange, with a fresh trace id."""
        self.counters["requests"] += 1
        self.counters[f"frontend.{frontend_protocol}"] += 1
        enabled = self.on_exchange is not None
        return Recorder(
            new_trace_id(), route, frontend_protocol, enabled=enabled, tap_max_bytes=self.config.tap_max_bytes
        )

    async def complete(self, recorder: Recorder) -> Exchange:
        """Finish an exchange: count it, log it (never with a key), list it, hand it to the tap."""
        exchange = recorder.finish()
        self.counters[f"mode.{exchange.mode}"] += 1
        if exchange.frontend_status is not None:
            self.counters[f"status.{exchange.frontend_status // 100}xx"] += 1
        if exchange.error is not None:
            self.counters[f"error.{exchange.error.kind.value}"] += 1
        if exchange.violations:
            self.counters["grammar_violations"] += len(exchange.violations)
            self.counters["exchanges_with_violations"] += 1
        if exchange.truncated:
            self.counters["tap_truncated"] += 1
        error_kind = exchange.error.kind.value if exchange.error else None
        self.recent.append(
            RecentTrace(
                exchange.trace_id, exchange.route, exchange.model, exchange.mode, exchange.frontend_status, error_kind
            )
        )
        log.info(
            "exchange trace_id=%s route=%r model=%s mode=%s upstream=%s upstream_status=%s status=%s error=%s ms=%.1f",
            exchange.trace_id,
            exchange.route,
            exchange.model,
            exchange.mode,
            exchange.upstream_name,
            exchange.upstream_status,
            exchange.frontend_status,
            error_kind,
            (exchange.timings.end or 0.0) * 1000,
            extra={"trace_id": exchange.trace_id},
        )
        if not await deliver(self.on_exchange, exchange):
            self.counters["tap_callback_errors"] += 1
        return exchange


@dataclass(frozen=True)
class Call:
    """One routed request on its way through the proxy: who asked, for what, and where it goes."""

    state: ProxyState
    """The app's shared state."""
    recorder: Recorder
    """The exchange being recorded."""
    frontend: Codec
    """Codec of the protocol the client speaks."""
    route: ModelRoute
    """Config of the requested model."""
    request: HttpRequest
    """The client's request as received."""
    stream: bool
    """Whether the client asked for a stream."""
    receive: Receive
    """ASGI receive channel, to notice the client leaving."""
