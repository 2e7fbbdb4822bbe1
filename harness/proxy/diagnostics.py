"""`GET /api/diagnostics`: what the proxy is configured to do and how it has been doing, without secrets."""

from __future__ import annotations

import os
import platform
from dataclasses import asdict
from importlib import metadata
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx2

from harness import __version__
from harness.protocols import registry
from harness.proxy.config import UpstreamConfig
from harness.proxy.state import ProxyState

PROBE_SECONDS = 2.0
_PACKAGES = ("starlette", "httpx2", "uvicorn", "pydantic")


def safe_url(url: str) -> str:
    """A URL without user info or query (either may carry a credential)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def versions() -> dict[str, Any]:
    """Versions of the harness, Python, the packages the proxy's behaviour depends on and the official SDKs."""
    out: dict[str, Any] = {"harness": __version__, "python": platform.python_version()}
    sdks = [sdk.package for sdk in (registry.facts(n).sdk for n in registry.names()) if sdk is not None]
    for name in [*_PACKAGES, *dict.fromkeys(sdks)]:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["protocols"] = registry.names()
    return out


async def probe(client: httpx2.AsyncClient, upstream: UpstreamConfig) -> dict[str, Any]:
    """Whether the upstream answers HTTP at its base URL (any status counts; no key is sent)."""
    timeout = httpx2.Timeout(min(upstream.connect_timeout, PROBE_SECONDS), read=PROBE_SECONDS)
    try:
        response = await client.get(upstream.base_url, timeout=timeout)
    except httpx2.HTTPError as exc:
        return {"reachable": False, "detail": type(exc).__name__}
    except Exception as exc:  # an injected in-process transport may fail its own way; reported, not raised
        return {"reachable": False, "detail": f"{type(exc).__name__}: {exc}"}
    return {"reachable": True, "detail": f"HTTP {response.status_code}"}


async def report(
    state: ProxyState, *, check_reachability: bool = True, server: tuple[str, int | None] | None = None
) -> dict[str, Any]:
    """The diagnostics document; `server` is the (host, port) the request arrived on (the ASGI scope's), which is
    where the proxy really serves: `conformance serve --port` and port 0 override the config's."""
    config = state.config
    host, port = (config.host, config.port) if server is None or server[1] is None else (server[0], server[1])
    upstreams: list[dict[str, Any]] = []
    for upstream in config.upstreams:
        upstreams.append(
            {
                "name": upstream.name,
                "protocol": upstream.protocol,
                "base_url": safe_url(upstream.base_url),
                "api_key_env": upstream.api_key_env,
                "api_key_set": bool(upstream.api_key_env and os.environ.get(upstream.api_key_env)),
                "connect_timeout": upstream.connect_timeout,
                "read_timeout": upstream.read_timeout,
            }
        )
    if check_reachability:
        results: dict[str, dict[str, Any]] = {}

        async def one(up: UpstreamConfig) -> None:
            results[up.name] = await probe(state.client, up)

        async with anyio.create_task_group() as group:
            for up in config.upstreams:
                group.start_soon(one, up)
        for entry in upstreams:
            entry.update(results[entry["name"]])
    return {
        "service": "conformance-proxy",
        "versions": versions(),
        "config": {
            "source": config.source,
            "host": host,
            "port": port,
            "max_request_bytes": config.max_request_bytes,
            "tap_max_bytes": config.tap_max_bytes,
            "tap_installed": state.on_exchange is not None,
            "hooks": sorted(state.hooks),
            "models": [
                {
                    "name": r.name,
                    "mode": r.mode,
                    "upstream": r.upstream.name,
                    "upstream_model": r.upstream_model,
                    "hooks": r.hooks,
                }
                for r in config.models
            ],
        },
        "upstreams": upstreams,
        "recent_traces": [asdict(t) for t in reversed(state.recent)],
        "counters": dict(sorted(state.counters.items())),
    }
