"""Fixtures: the sample run written once per module by every file writer."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.report import emit, file_writers
from tests.report.factory import sample_events


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report folder with index.html, junit.xml and summary.json of the sample run."""
    out = tmp_path_factory.mktemp("report")
    emit(sample_events(), file_writers(out))
    return out
