"""Every exchange of a real-traffic corpus (`../shared/corpus`, read where it lies) imported as a case, each under
an id made of its file's path, for measuring how a proxy fares on real answers (`scripts/corpus_matrix.py`, the
corpus tests)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.capture import CaptureError
from harness.importer.case import Imported, import_exchange
from harness.importer.exchange import ImportFailure, from_capture, interaction_count
from harness.importer.scenario import slug
from harness.protocols.corpus import protocol_of

CAPTURE_SUFFIXES = (".yaml", ".httprr")


@dataclass(frozen=True)
class CorpusItem:
    """One exchange of the corpus."""

    relative: str
    """The capture file, relative to the corpus root (`anthropic/stream-text.yaml`)."""
    interaction: int
    """Its index in the file."""
    protocol: str
    """The protocol or profile the file speaks (`harness.protocols.corpus`)."""
    scenario_id: str
    """The id its case gets: the file's path, and the interaction where the file has several."""

    @property
    def label(self) -> str:
        """`file#interaction`."""
        return f"{self.relative}#{self.interaction}"


def corpus_items(root: Path, only: Sequence[str] | None = None) -> list[CorpusItem]:
    """Every exchange under `root` in a folder of a known protocol (of the files in `only`, relative paths, when
    given), in path order."""
    out = []
    for path in sorted(p for p in root.rglob("*") if p.suffix in CAPTURE_SUFFIXES):
        relative = path.relative_to(root).as_posix()
        protocol = protocol_of(relative)
        if protocol is None or (only is not None and relative not in only):
            continue
        count = interaction_count(path)
        stem = slug(relative.rsplit(".", 1)[0])
        for i in range(count):
            out.append(CorpusItem(relative, i, protocol, f"{stem}-{i}" if count > 1 else stem))
    return out


def import_corpus(
    root: Path,
    items: Sequence[CorpusItem],
    *,
    scenarios: Path,
    cassettes: Path,
    backends: Sequence[str] | None = None,
) -> list[tuple[CorpusItem, Imported | ImportFailure]]:
    """Import each item into `scenarios` and `cassettes` (replacing earlier imports); a failure is returned with
    its item, not raised, so one bad exchange does not hide the others."""
    out: list[tuple[CorpusItem, Imported | ImportFailure]] = []
    for item in items:
        try:
            exchange = from_capture(root / item.relative, item.interaction, item.protocol)
            imported: Imported | ImportFailure = import_exchange(
                exchange, item.scenario_id, scenarios=scenarios, cassettes=cassettes, backends=backends, force=True
            )
        except (ImportFailure, CaptureError) as exc:
            imported = exc if isinstance(exc, ImportFailure) else ImportFailure(str(exc))
        out.append((item, imported))
    return out
