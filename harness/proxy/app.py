"""The proxy under test as an ASGI app (Starlette)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import httpx2
from starlette.applications import Starlette

from harness.proxy import logs
from harness.proxy.config import ProxyConfig
from harness.proxy.models import ExchangeCallback, TranslateHooks
from harness.proxy.routes import routes
from harness.proxy.state import ProxyState


def create_app(
    config: ProxyConfig,
    *,
    transport: httpx2.AsyncBaseTransport | None = None,
    on_exchange: ExchangeCallback | None = None,
    hooks: Mapping[str, TranslateHooks] | None = None,
) -> Starlette:
    """The proxy app for a config.

    `transport` replaces the network for upstream calls (tests and the harness inject in-process upstreams);
    `on_exchange` receives every finished `Exchange` (the trace tap); `hooks` are named translate hook sets
    that models select with `hooks = "<name>"` (`identity` is always there).
    """
    state = ProxyState(config, transport=transport, on_exchange=on_exchange, hooks=hooks)
    logs.install({u.api_key_env for u in config.upstreams if u.api_key_env})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await state.aclose()

    app = Starlette(routes=routes(), lifespan=lifespan)
    app.state.proxy = state
    return app


def state_of(app: Starlette) -> ProxyState:
    """The proxy state of an app made by `create_app` (counters, config, upstream client)."""
    state: ProxyState = app.state.proxy
    return state
