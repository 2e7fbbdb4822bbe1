"""Fixtures of the proxy tests: anyio on asyncio, the upstream key in the environment."""

from __future__ import annotations

import pytest

from tests.proxy.upstreams import KEY_ENV, KEY_VALUE


@pytest.fixture
def anyio_backend() -> str:
    """Run async tests on asyncio (the backend uvicorn and the SDKs use here)."""
    return "asyncio"


@pytest.fixture(autouse=True)
def upstream_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """The key the proxy reads for its upstreams."""
    monkeypatch.setenv(KEY_ENV, KEY_VALUE)
    return KEY_VALUE
