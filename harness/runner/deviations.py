"""A run's registered check results sorted into checks and wire deviations (warnings with the rule they break).
The checks themselves, the frontend protocols' wire rules among them, live in `harness.checks`."""

from __future__ import annotations

from collections.abc import Iterable

from harness.trace.model import Check, Deviation


def split(results: Iterable[Check | Deviation]) -> tuple[list[Check], list[Deviation]]:
    """The checks and the deviations of a run's results, each in the order found."""
    checks: list[Check] = []
    deviations: list[Deviation] = []
    for result in results:
        if isinstance(result, Deviation):
            deviations.append(result)
        else:
            checks.append(result)
    return checks, deviations
