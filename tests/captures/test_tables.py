"""The capture tests' tables name files the snapshot has: a renamed or removed fixture is noticed, not skipped."""

from __future__ import annotations

import pytest

from tests.captures import test_anthropic, test_chat, test_gemini, test_responses
from tests.captures.vercel_ai import listing, params

NAMED = sorted(
    {
        *test_anthropic.NOT_READ,
        *test_chat.NOT_READ,
        *test_gemini.NOT_READ,
        *test_gemini.GAPS,
        *test_gemini.STREAMED,
        *test_responses.NOT_READ,
        *test_responses.GAPS,
        *test_responses.CLIENT_CALL_FILES,
    }
)
PRESENT = set(listing())


@pytest.mark.parametrize("path", params(NAMED if PRESENT else []))
def test_a_named_fixture_is_in_the_snapshot(path: str) -> None:
    assert path in PRESENT
