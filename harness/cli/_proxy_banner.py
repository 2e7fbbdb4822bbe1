"""What `conformance serve` says when it starts: the config summarized by upstream (a config may hold hundreds of
models), then the URL it really listens on, once bound (`--port 0` included)."""

from __future__ import annotations

import logging
import socket
from collections import Counter

import uvicorn

from harness.proxy import ModelRoute, ProxyConfig
from harness.proxy.diagnostics import safe_url

UPSTREAM_LINES = 40
"""Upstreams listed one per line in the banner; the rest are counted (`/api/diagnostics` lists every one)."""


def banner(config: ProxyConfig) -> list[str]:
    """What is served, summarized by upstream (a config may hold hundreds of models): one line per upstream with
    its protocol, URL, model count per mode and one example name."""
    by_upstream: dict[str, list[ModelRoute]] = {}
    for route in config.models:
        by_upstream.setdefault(route.upstream.name, []).append(route)
    lines = [f"config {config.source}: {len(config.models)} models through {len(by_upstream)} upstream(s)"]
    for upstream in config.upstreams[:UPSTREAM_LINES]:
        routes = by_upstream[upstream.name]
        modes = Counter(route.mode for route in routes)
        split = ", ".join(f"{modes[m]} {m}" for m in sorted(modes))
        lines.append(
            f"  {upstream.name} ({upstream.protocol} at {safe_url(upstream.base_url)}): {len(routes)} model(s), "
            f"{split}; e.g. {routes[0].name}"
        )
    if len(config.upstreams) > UPSTREAM_LINES:
        lines.append(f"  ... and {len(config.upstreams) - UPSTREAM_LINES} more upstreams (GET /api/diagnostics)")
    return lines


class AnnouncingServer(uvicorn.Server):
    """uvicorn's server, announcing the config summary and the URL it really listens on once bound (port 0 too)."""

    def __init__(self, config: uvicorn.Config, lines: list[str]) -> None:
        super().__init__(config)
        self.lines = lines

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Bind, then log what is served where."""
        await super().startup(sockets)
        log = logging.getLogger("harness.proxy")
        for line in self.lines:
            log.info("%s", line)
        bound = [s.getsockname() for server in self.servers for s in server.sockets]
        for address in bound[:1]:
            log.info("listening on http://%s:%d", self.config.host, address[1])
