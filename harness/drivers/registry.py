"""Drivers by frontend protocol name. Which module drives a protocol's SDK is one of its facts
(`ProtocolFacts.sdk.driver`); each SDK is imported only when its driver is first asked for."""

from __future__ import annotations

import importlib

from harness.drivers.base import Driver
from harness.protocols import registry

_LOADED: dict[str, Driver] = {}


class UnknownDriverError(KeyError):
    """No driver speaks that frontend protocol."""

    def __str__(self) -> str:
        return f"no SDK driver for protocol {self.args[0]!r}; known: {', '.join(names())}"


def names() -> list[str]:
    """Protocols whose facts name an SDK driver of their own, sorted."""
    return [name for name in registry.names() if registry.facts(name).sdk is not None]


def _module(name: str) -> str:
    try:
        sdk = registry.facts(name).sdk
    except registry.UnknownProtocolError:
        sdk = None
    if sdk is None:
        raise UnknownDriverError(name)
    return sdk.driver


def get(name: str) -> Driver:
    """The driver for frontend protocol `name`."""
    if name not in _LOADED:
        module = _module(name)
        driver = importlib.import_module(module).DRIVER
        if not isinstance(driver, Driver) or driver.name != name:
            raise TypeError(f"{module}.DRIVER is not a driver for {name!r}")
        _LOADED[name] = driver
    return _LOADED[name]
