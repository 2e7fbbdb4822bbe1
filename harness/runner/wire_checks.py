"""The secret-leak scan the runner makes over a whole trace (`secret_leak`, declared in `harness.checks`): the
upstream key the proxy holds (planted by the runner) appears nowhere the client or the trace can see. The other
wire checks are registered checks (`harness.checks.wire`)."""

from __future__ import annotations

from collections.abc import Mapping

from harness.checks import LEAK
from harness.record.scrub import find_secrets
from harness.trace.model import Check


def leaks(parts: Mapping[str, str], planted: str) -> list[str]:
    """Names of the parts that contain the planted key, or a real-looking key (`harness.record.scrub`)."""
    return [name for name, text in parts.items() if find_secrets(text, [planted])]


def leak_check(where: list[str]) -> Check:
    """The secret-leak check result for the parts found to carry a key."""
    actual = f"upstream key found in {', '.join(where)}" if where else "none found"
    expected = "no upstream key in anything the client or the trace sees"
    return Check(name=LEAK, passed=not where, expected=expected, actual=actual)
