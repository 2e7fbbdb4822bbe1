"""The per-protocol parameters of the generic round trips (`tests/protocols/test_contract.py`).

Each protocol's `tests/protocols/<name>/test_roundtrip.py` declares `ROUND_TRIPS`, a `RoundTrip` per registered
name it covers: what its wire checks on an encoded request or response (schemas, paths, headers), and what of an
IR value comes back (its projection through the protocol's losses). The generic tests do the rest.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import ir
from harness.wire.http import HttpRequest, HttpResponse


def _same(value: Any) -> Any:
    return value


def _nothing(*_: Any) -> None:
    return None


@dataclass(frozen=True)
class RoundTrip:
    """One protocol's round-trip parameters (see the module docstring)."""

    expect_request: Callable[[ir.Request], Any]
    """What comes back of a request: its projection through the losses."""
    expect_response: Callable[[ir.Response], Any]
    """What comes back of a response."""
    check_request: Callable[[HttpRequest, ir.Request], None] = _nothing
    """Assertions on the encoded request (schema, path, headers)."""
    check_response: Callable[[HttpResponse], None] = _nothing
    """Assertions on the encoded response."""
    seen_request: Callable[[ir.Request], Any] = _same
    """The view of a decoded request that is compared (default: itself)."""
    seen_response: Callable[[ir.Response], Any] = _same
    """The view of a decoded response that is compared (default: itself)."""
    prepare_response: Callable[[ir.Response], ir.Response] = _same
    """The generated response made consistent with a convention the encoders rely on."""
    stream_only: bool = False
    """Every request asks for a stream (the protocol has no other answer)."""
    rules: frozenset[str] | None = None
    """The keys of the projection's rules, one per key of the codec's `losses` and `reshapes` (None: the
    projection is not keyed by them)."""


def gather() -> dict[str, RoundTrip]:
    """Every protocol's `ROUND_TRIPS`, by registry name."""
    out: dict[str, RoundTrip] = {}
    for path in sorted(Path(__file__).parent.glob("*/test_roundtrip.py")):
        module = importlib.import_module(f"tests.protocols.{path.parent.name}.test_roundtrip")
        out.update(getattr(module, "ROUND_TRIPS", {}))
    return out
