"""What a fault is: its name, the real bug it models, where it can show (`Scope`), its witnesses, and its hooks.

Kept apart from the catalog so that a group of faults can be declared in a module of its own and the catalog
lists them all (`catalog.FAULTS`).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.proxy import TranslateHooks
from harness.trace import Case


@dataclass(frozen=True)
class Scope:
    """Where a fault can show; selftest runs it only there."""

    scenarios: tuple[str, ...]
    """Scenarios that exercise what the fault breaks."""
    frontends: tuple[str, ...] | None = None
    """Frontend protocols it applies to (None: every one)."""
    backends: tuple[str, ...] | None = None
    """Backends it applies to (None: every one)."""
    streams: tuple[bool, ...] = (True, False)
    """Streaming modes it applies to."""


@dataclass(frozen=True)
class Fault:
    """One named fault."""

    name: str
    """Kebab-case name, also the hook-set name in a proxy config."""
    description: str
    """What the proxy does wrong, in one line."""
    models: str
    """The real bug class it reproduces and where it was reported."""
    caught_by: str
    """Which part of the judging is expected to catch it."""
    hooks: TranslateHooks
    """The implementation, switched on in the translate path."""
    scope: Scope
    """Where it applies."""
    witnesses: tuple[Case, ...]
    """The smallest case set known to catch it."""


def witness(scenario: str, frontend: str, backend: str, stream: bool) -> tuple[Case, ...]:
    """One witness case, as a fault's `witnesses`."""
    return (Case(scenario, frontend, backend, stream),)
