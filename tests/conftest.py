"""Shared test setup: hypothesis profiles and the path to the real-traffic corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("CONFORMANCE_CORPUS", REPO.parent / "shared" / "corpus"))


def corpus_dir(protocol: str) -> Path:
    """The corpus folder of one protocol; skips the test (with the reason) when the corpus is absent."""
    path = CORPUS / protocol
    if not path.is_dir():
        pytest.skip(f"real-traffic corpus not found at {path} (set CONFORMANCE_CORPUS)")
    return path


def corpus_files(protocol: str) -> list[Path]:
    """Every capture file of one protocol in the corpus, for parametrizing tests (empty if absent)."""
    path = CORPUS / protocol
    if not path.is_dir():
        return []
    return sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".httprr"))
