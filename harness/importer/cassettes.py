"""The imported case's cassettes, written by the recorder (its layout, serializer, scrubbing and metadata): the
recorded answer for the backend that gave it, replayed into the recorder verbatim and marked `source: real`, and
the reference backends' answers to the scripted reply for every other backend."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from harness.backends import WireReply
from harness.importer.exchange import Exchange
from harness.protocols import DecodeError, registry
from harness.record import RecordMode, Source, record_one, reference_source
from harness.scenarios.model import Scenario


def origin_metadata(exchange: Exchange, model: str | None) -> dict[str, Any]:
    """The cassette's `metadata.origin`: where the answer was recorded and what the import changed."""
    origin = exchange.origin
    out: dict[str, Any] = {"file": origin.file}
    if origin.interaction is not None:
        out["interaction"] = origin.interaction
    out["url"] = origin.url
    if model:
        out["model"] = model
    if origin.notes:
        out["notes"] = list(origin.notes)
    return out


def _recorded_source(exchange: Exchange, scenario: Scenario, model: str | None) -> Source:
    source = Source(kind=exchange.origin.source, base_url=exchange.base_url or "http://recorded.invalid")
    source.origin = origin_metadata(exchange, model)

    def answer(_: httpx2.Request) -> httpx2.Response:
        reply = WireReply(exchange.status, dict(exchange.headers), list(exchange.chunks), scenario.id, exchange.stream)
        source.replies.append(reply)
        return httpx2.Response(exchange.status, headers=exchange.headers, content=exchange.body)

    source.transport = httpx2.MockTransport(answer)
    return source


def write_recorded(exchange: Exchange, scenario: Scenario, root: Path, *, model: str | None) -> Path:
    """The recorded answer as the backend's cassette for the scenario: bytes and chunk boundaries as recorded,
    `metadata.source: real` (or `reference` when the capture was one of the harness's own reference recordings)."""
    source = _recorded_source(exchange, scenario, model)
    return record_one(
        exchange.protocol,
        scenario,
        exchange.stream,
        scenarios=[scenario],
        root=root,
        source=source,
        mode=RecordMode.REWRITE,
    )


@dataclass
class References:
    """The reference cassettes written for an imported scenario, and the backends left without one."""

    written: dict[str, Path] = field(default_factory=dict)
    """Backend -> cassette."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Backend -> why it has none (it lacks a capability the case needs, or its encoder cannot say the reply)."""


def write_references(scenario: Scenario, backends: Sequence[str], root: Path) -> References:
    """Each backend's reference answer to the scenario's scripted reply, as its cassette; a backend without a
    capability the scenario requires gets none (its cases are unsupported and never replay one)."""
    out = References()
    stream = scenario.streaming == ["stream"]
    for name in backends:
        lacking = sorted(set(scenario.requires) - set(registry.get(name).capabilities))
        if lacking:
            out.skipped[name] = f"lacks {', '.join(lacking)}"
            continue
        try:
            out.written[name] = record_one(
                name,
                scenario,
                stream,
                scenarios=[scenario],
                root=root,
                source=reference_source([scenario]),
                mode=RecordMode.REWRITE,
            )
        except (DecodeError, ValueError) as exc:
            out.skipped[name] = f"its reference cannot answer: {exc}"
    return out
