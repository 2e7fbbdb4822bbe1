"""The `created_at` every Ollama line carries, formatted once per second (`response.rfc3339` is cached)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.protocols.common import SOURCE_DATE_EPOCH
from harness.protocols.ollama.response import created_at, rfc3339


def _formatted(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@given(st.integers(min_value=0, max_value=253_402_300_799))
def test_the_cached_form_is_the_formatted_time(seconds: int) -> None:
    assert rfc3339(seconds) == _formatted(seconds)
    assert rfc3339(seconds) == _formatted(seconds)  # a second call is answered by the cache


def test_created_at_follows_source_date_epoch_as_it_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    for seconds in (1_700_000_000, 0, 1_700_000_001, 1_700_000_000):
        monkeypatch.setenv(SOURCE_DATE_EPOCH, str(seconds))
        assert created_at() == _formatted(seconds)
