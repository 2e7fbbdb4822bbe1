"""Talking to the proxy app in tests: in-process, chunk by chunk, with every exchange collected."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2

from harness.protocols import Codec
from harness.proxy import Exchange, ProxyConfig, StreamingASGITransport, create_app
from harness.proxy.models import TranslateHooks

PROXY_URL = "http://proxy.test"


def declares(codec: Codec, path: str) -> bool:
    """Whether a codec's losses table names this IR path (alone or with a `:case` or `.field` suffix)."""
    return any(key == path or key.startswith((f"{path}:", f"{path}.")) for key in codec.losses)


class Proxy:
    """A proxy app, the exchanges it tapped, and an httpx2 client bound to it."""

    def __init__(self, config: ProxyConfig, upstream: httpx2.AsyncBaseTransport, **hooks: TranslateHooks) -> None:
        self.exchanges: list[Exchange] = []
        self.app = create_app(config, transport=upstream, on_exchange=self.exchanges.append, hooks=hooks or None)
        self.client = httpx2.AsyncClient(transport=StreamingASGITransport(self.app), base_url=PROXY_URL, timeout=10)

    @property
    def exchange(self) -> Exchange:
        """The only exchange so far."""
        assert len(self.exchanges) == 1, [e.route for e in self.exchanges]
        return self.exchanges[0]


@asynccontextmanager
async def proxy(
    config: ProxyConfig, upstream: httpx2.AsyncBaseTransport, **hooks: TranslateHooks
) -> AsyncIterator[Proxy]:
    """A `Proxy` whose client and upstream client are closed afterwards."""
    p = Proxy(config, upstream, **hooks)
    try:
        yield p
    finally:
        await p.client.aclose()
        await p.app.state.proxy.aclose()
