"""One recorded exchange made a conformance case: its scenario file, the recorded backend's cassette (the real
answer) and every other backend's reference cassette (the decoded answer), with nothing secret in any of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.importer.answer import Answer, decode_answer
from harness.importer.cassettes import References, write_recorded, write_references
from harness.importer.exchange import Exchange, ImportFailure, ImportUsageError
from harness.importer.expect import View, client_view, expectations
from harness.importer.scenario import asks_thinking, build, write
from harness.protocols import DecodeError, registry
from harness.record.scrub import find_secrets
from harness.scenarios.model import Scenario


@dataclass(frozen=True)
class Imported:
    """What an import wrote, and what the reader should know about it."""

    scenario: Scenario
    """The imported scenario."""
    scenario_path: Path
    """Its file."""
    backend: str
    """The protocol or profile whose real answer it replays."""
    cassette: Path
    """The recorded answer's cassette."""
    view: str
    """Whose view of the answer the expectations are (`<family> SDK`, or `decoder`)."""
    references: References = field(default_factory=References)
    """The other backends' reference cassettes."""
    notes: tuple[str, ...] = ()
    """What the import changed, guessed or could not keep."""


def _description(exchange: Exchange, view: View, answer: Answer) -> str:
    origin, name = exchange.origin, exchange.protocol
    text = (
        f"Imported from {origin.label}: a {origin.source} {name} exchange ({origin.url}). The {name} backend "
        "replays the recorded answer verbatim; every other backend answers the decoded reply with its reference. "
        f"Expectations are what the {view.by} saw of the recorded answer."
    )
    notes = [*([view.fallback] if view.fallback else []), *answer.notes, *origin.notes]
    return text + "".join(f" Note: {n}." for n in notes)


def _leaks(paths: Sequence[Path]) -> list[str]:
    return [f"{p}: {hit[:12]}..." for p in paths for hit in find_secrets(p.read_text(encoding="utf-8"))]


def import_exchange(
    exchange: Exchange,
    scenario_id: str,
    *,
    scenarios: Path,
    cassettes: Path,
    backends: Sequence[str] | None = None,
    force: bool = False,
    truncated: bool = False,
) -> Imported:
    """Make `exchange` a case named `scenario_id`: the scenario in `scenarios/`, the recorded answer under
    `cassettes/<protocol>/`, and a reference cassette for each of `backends` (default: every other registered
    protocol and profile). An existing scenario file is replaced only with `force`."""
    codec = registry.get(exchange.protocol)
    try:
        request = codec.decode_request(exchange.request).model_copy(update={"stream": exchange.stream})
    except DecodeError as exc:
        where = f"{exchange.origin.label}: the {codec.name} decoder"
        raise ImportFailure(f"{where} cannot read the request: {exc}") from exc
    answer = decode_answer(exchange, truncated=truncated)
    # Asked as the matrix asks, with the scenario id as the model (an SDK may warn about a recorded model's name).
    view = client_view(exchange, request.model_copy(update={"model": scenario_id}), answer)
    expect = expectations(view, answer, exchange.status, thinking=asks_thinking(request))
    description = _description(exchange, view, answer)
    scenario = build(scenario_id, description, request, answer.reply, answer.chunking, expect)
    target = scenarios / f"{scenario_id}.yaml"
    if target.exists() and not force:
        raise ImportUsageError(f"{target} exists: choose another --id, or --force to replace it")
    scenario_path = write(scenario, scenarios)
    cassette = write_recorded(exchange, scenario, cassettes, model=request.model)
    others = [n for n in (backends if backends is not None else registry.names()) if n != exchange.protocol]
    references = write_references(scenario, others, cassettes)
    written = [scenario_path, cassette, *references.written.values()]
    leaks = _leaks(written)
    if leaks:
        for path in written:
            path.unlink(missing_ok=True)
        raise ImportFailure(f"{exchange.origin.label}: a key-shaped string survived scrubbing; nothing kept: {leaks}")
    notes = (*([view.fallback] if view.fallback else ()), *answer.notes, *exchange.origin.notes)
    return Imported(scenario, scenario_path, exchange.protocol, cassette, view.by, references, notes)
