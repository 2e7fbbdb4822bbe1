"""Where scenarios and cassettes come from: the packaged ones (package data of the wheel, `harness/_data/`; in a
checkout those are symlinks to the repository's own `scenarios/` and `cassettes/`) under the folders a team adds.

A folder given first wins over the folders given after it and over the packaged ones: a team's file with the
same name replaces ours (`replaced`, which the commands print as a notice). Writes go to the first folder given.
Cassettes are looked up by path everywhere (`cassettes/<backend>/<scenario>.<mode>.yaml`), so several cassette
folders are read through one merged view (`cassette_view`): a temporary folder of symbolic links, one per file
or per backend folder found in a single layer.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "_data"
"""The package data folder holding `scenarios/` and `cassettes/`."""
PACKAGED = "packaged"
"""How `conformance list scenarios` names the packaged layer."""


def packaged(kind: str) -> Path:
    """The packaged `scenarios` or `cassettes` folder (resolved: in a checkout, the repository's own)."""
    return (DATA / kind).resolve()


@dataclass(frozen=True)
class Layers:
    """The folders one kind of file is read from, the winning one first (the packaged folder last, if used)."""

    kind: str
    """`scenarios` or `cassettes`."""
    folders: tuple[Path, ...]
    given: tuple[Path, ...]
    """The folders named on the command line (or in an ini file), in their order."""
    with_packaged: bool = True

    @classmethod
    def of(cls, kind: str, given: Sequence[Path | str] = (), *, with_packaged: bool = True) -> Layers:
        """The given folders over the packaged one; a folder named twice (or the packaged one named) counts once."""
        folders: list[Path] = []
        seen: set[Path] = set()
        for folder in [*(Path(g) for g in given), *([packaged(kind)] if with_packaged else [])]:
            key = folder.resolve()
            if key not in seen:
                seen.add(key)
                folders.append(folder)
        return cls(kind, tuple(folders), tuple(Path(g) for g in given), with_packaged)

    @property
    def top(self) -> Path:
        """Where writes go: the first folder given, else the packaged one."""
        return self.folders[0] if self.folders else packaged(self.kind)

    def write_folder(self) -> Path:
        """Where a command writes: the first folder given; with none, the packaged folder, but only in a checkout
        (where it is the repository's own). ValueError otherwise: an installed harness's data is not a team's."""
        if self.given:
            return self.given[0]
        if (DATA / self.kind).is_symlink():
            return packaged(self.kind)
        raise ValueError(
            f"--{self.kind} DIR: name the folder to write to (the packaged {self.kind} belong to the installed harness)"
        )

    def origin(self, folder: Path) -> str:
        """`packaged` or the folder as given."""
        return PACKAGED if folder.resolve() == packaged(self.kind) else str(folder)

    def added(self) -> list[Path]:
        """The given folders but the packaged one (a command line that names it says nothing more)."""
        return [f for f in self.given if f.resolve() != packaged(self.kind)]

    def missing(self) -> list[Path]:
        """The given folders that are not folders."""
        return [f for f in self.given if not f.is_dir()]


@dataclass(frozen=True)
class Source:
    """The file that provides one scenario id, and the ones it replaces."""

    id: str
    path: Path
    origin: str
    """`packaged` or the folder given."""
    replaced: tuple[Path, ...] = ()


def scenario_sources(layers: Layers) -> list[Source]:
    """One `Source` per scenario id (`*.yaml` of every layer), sorted by id; the first layer holding an id wins."""
    found: dict[str, Source] = {}
    for folder in layers.folders:
        for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else ():
            won = found.get(path.stem)
            if won is None:
                found[path.stem] = Source(path.stem, path, layers.origin(folder))
            else:
                found[path.stem] = Source(won.id, won.path, won.origin, (*won.replaced, path))
    return [found[k] for k in sorted(found)]


def notices(sources: Sequence[Source], layers: Layers) -> list[str]:
    """One line per file that replaces another: `scenario text-basic: team/text-basic.yaml replaces the packaged
    one`."""
    lines = []
    for source in sources:
        for path in source.replaced:
            if _same(source.path, path):
                continue
            other = layers.origin(path.parent)
            theirs = "the packaged one" if other == PACKAGED else str(path)
            lines.append(f"scenario {source.id}: {source.path} replaces {theirs}")
    return lines


def _same(one: Path, other: Path) -> bool:
    """Whether two files hold the same bytes (a copy of ours replaces nothing worth a notice)."""
    try:
        return one.read_bytes() == other.read_bytes()
    except OSError:
        return False


def capped(lines: Sequence[str], most: int = 10) -> list[str]:
    """At most `most` lines, the rest counted in a last one."""
    return [*lines[:most], f"... and {len(lines) - most} more"] if len(lines) > most else list(lines)


def _entries(layers: Layers) -> Iterator[tuple[str, list[Path]]]:
    """Each backend folder name with the layers' folders of that name, winning one first."""
    names: dict[str, list[Path]] = {}
    for folder in layers.folders:
        for sub in sorted(folder.iterdir()) if folder.is_dir() else ():
            if sub.is_dir():
                names.setdefault(sub.name, []).append(sub)
    yield from sorted(names.items())


def cassette_view(layers: Layers) -> Path:
    """A folder that reads as every cassette layer merged (the first layer holding a file wins); the one folder
    itself when there is only one. The merged view is removed when the process exits."""
    if len(layers.folders) == 1:
        return layers.folders[0]
    view = Path(tempfile.mkdtemp(prefix="conformance-cassettes-"))
    atexit.register(shutil.rmtree, view, ignore_errors=True)
    for name, subs in _entries(layers):
        if len(subs) == 1:
            os.symlink(subs[0].resolve(), view / name, target_is_directory=True)
            continue
        (view / name).mkdir()
        for sub in reversed(subs):  # lower layers first; a higher layer's file replaces the link
            for path in sub.iterdir():
                link = view / name / path.name
                link.unlink(missing_ok=True)
                os.symlink(path.resolve(), link)
    return view


def cassette_notices(layers: Layers) -> list[str]:
    """One line per cassette a given folder replaces (named by its path under the folder)."""
    lines = []
    for name, subs in _entries(layers):
        seen: dict[str, Path] = {}
        for sub in subs:
            for path in sorted(sub.iterdir()):
                if path.name in seen and not _same(seen[path.name], path):
                    other = layers.origin(sub.parent)
                    theirs = "the packaged one" if other == PACKAGED else str(path)
                    lines.append(f"cassette {name}/{path.name}: {seen[path.name]} replaces {theirs}")
                elif path.name not in seen:
                    seen[path.name] = path
    return lines
