"""An SDK client keeps the harness's timeout, even when it is httpx's default value."""

from __future__ import annotations

import httpx2
import pytest

from harness.drivers import get


@pytest.mark.parametrize("name", ["openai", "anthropic", "responses"])
def test_a_five_second_timeout_is_not_taken_for_none_set(name: str) -> None:
    # openai and anthropic read an http_client whose timeout equals httpx's default (5 s) as "none set" and use
    # their own 600 s: `--timeout 5` then left a stalled stream waiting ten minutes.
    with httpx2.Client(timeout=5.0) as http:
        client = get(name).client("http://127.0.0.1:9", http)  # type: ignore[attr-defined]
        assert client.timeout == httpx2.Timeout(5.0)
