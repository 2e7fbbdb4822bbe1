"""HTTP clients for the SDK drivers. The client library an SDK is built on is one of its protocol's facts
(`ProtocolFacts.sdk.http_client`); every client sends through the transport the run gives it."""

from __future__ import annotations

from typing import Any

import httpx2

from harness.protocols import registry
from harness.rig.bridge import HttpxAdapter

CLIENT_TIMEOUT_S = 60.0
"""Seconds an SDK client waits for the proxy (connect, read, write) unless told otherwise (`--timeout`)."""


class TaggingTransport(httpx2.BaseTransport):
    """A sync transport that sets fixed headers on every request (for clients that bypass default headers)."""

    def __init__(self, inner: httpx2.BaseTransport, headers: dict[str, str]) -> None:
        self.inner = inner
        self.headers = headers

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Add the headers and send through the inner transport."""
        request.headers.update(self.headers)
        return self.inner.handle_request(request)

    def close(self) -> None:
        """Close the inner transport (its connections)."""
        self.inner.close()


class SharedTransport(httpx2.BaseTransport):
    """A transport every run's client sends through: a client closed at the end of its run leaves it open, since
    closing its connection pool would cut the runs still reading from it. Its owner closes `inner`."""

    def __init__(self, inner: httpx2.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send through the shared transport."""
        return self.inner.handle_request(request)

    def close(self) -> None:
        """Nothing: the transport outlives each client (its owner closes `inner`)."""


def sdk_client(
    protocol: str, transport: httpx2.BaseTransport, headers: dict[str, str], *, timeout: float = CLIENT_TIMEOUT_S
) -> Any:
    """An HTTP client of the kind `protocol`'s SDK needs, sending `headers` on every request through `transport`,
    waiting at most `timeout` seconds to connect, and between bytes."""
    kind = registry.sdk(protocol).http_client
    if kind == "httpx":
        import httpx

        # An SDK may send through `client.send`, which skips the client's default headers: the transport sets
        # them too, or the proxy's tap could not tell whose exchange it saw.
        adapter = HttpxAdapter(TaggingTransport(transport, headers))
        return httpx.Client(transport=adapter, headers=headers, timeout=timeout)
    return httpx2.Client(transport=transport, headers=headers, timeout=httpx2.Timeout(timeout))
