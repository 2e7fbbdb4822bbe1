"""Cassette layout: `cassettes/<backend>/<scenario>.<stream|nonstream>.yaml`, one per (backend, scenario, mode).

The backend's answer to a scenario does not depend on which frontend asked, so baseline(B) and every translated
run into B replay the same recording.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SUFFIX = ".yaml"


def mode_name(stream: bool) -> str:
    """`stream` or `nonstream`."""
    return "stream" if stream else "nonstream"


def cassette_path(root: Path, backend: str, scenario: str, stream: bool) -> Path:
    """Where the recording of one (backend, scenario, streaming mode) lives."""
    return root / backend / f"{scenario}.{mode_name(stream)}{SUFFIX}"


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
            scenario, _, mode = path.name.removesuffix(SUFFIX).rpartition(".")
            if mode in ("stream", "nonstream") and scenario:
                out.append(Recorded(folder.name, scenario, mode == "stream", path))
    return out
