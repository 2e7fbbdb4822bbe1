"""Drivers by frontend protocol name. Each SDK is imported only when its driver is first asked for."""

from __future__ import annotations

import importlib

from harness.drivers.base import Driver

# Frontend protocol -> module defining `DRIVER`. Importing an SDK is slow, so nothing loads until `get`.
_MODULES: dict[str, str] = {
    "openai": "harness.drivers.openai_sdk",
    "anthropic": "harness.drivers.anthropic_sdk",
    "gemini": "harness.drivers.genai_sdk",
    "ollama": "harness.drivers.ollama_sdk",
}
_LOADED: dict[str, Driver] = {}


class UnknownDriverError(KeyError):
    """No driver speaks that frontend protocol."""

    def __str__(self) -> str:
        return f"no SDK driver for protocol {self.args[0]!r}; known: {', '.join(names())}"


def names() -> list[str]:
    """Frontend protocols that have an SDK driver, sorted."""
    return sorted(_MODULES)


def get(name: str) -> Driver:
    """The driver for frontend protocol `name`."""
    if name not in _LOADED:
        if name not in _MODULES:
            raise UnknownDriverError(name)
        driver = importlib.import_module(_MODULES[name]).DRIVER
        if not isinstance(driver, Driver) or driver.name != name:
            raise TypeError(f"{_MODULES[name]}.DRIVER is not a driver for {name!r}")
        _LOADED[name] = driver
    return _LOADED[name]
