"""Cassette layout: `cassettes/<backend>/<scenario>.<stream|nonstream>.yaml`, one per (backend, scenario, mode).

The layout itself is the identity of a recording (`harness.trace.Recording`, which a `Run` knows as its
`recording`); this module finds the recordings on disk. The backend's answer to a scenario does not depend on
which frontend asked, so baseline(B) and every translated run into B replay the same recording.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.trace.identity import CASSETTE_SUFFIX, Recording, stream_mode

SUFFIX = CASSETTE_SUFFIX


def mode_name(stream: bool) -> str:
    """`stream` or `nonstream`."""
    return stream_mode(stream)


def cassette_path(root: Path, backend: str, scenario: str, stream: bool) -> Path:
    """Where the recording of one (backend, scenario, streaming mode) lives."""
    return Recording(backend, scenario, stream).path(root)


@dataclass(frozen=True, order=True)
class Recorded:
    """One cassette on disk."""

    backend: str
    """Backend protocol or profile."""
    scenario: str
    """Scenario id."""
    stream: bool
    """Streaming mode."""
    path: Path
    """File path."""


def recorded(root: Path, backend: str | None = None) -> list[Recorded]:
    """Every cassette under `root` (of one backend, if given), sorted."""
    out = []
    folders = [root / backend] if backend else sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    for folder in folders:
        for path in sorted(folder.glob(f"*{SUFFIX}")):
            found = Recording.from_path(path)
            if found is not None:
                out.append(Recorded(found.backend, found.scenario, found.stream, path))
    return out
