"""Diff engine: normalization rules, deepdiff comparison with first divergence, request-side diff, triage."""

from harness.diff.compare import Divergence, compare, diff_views
from harness.diff.normalize import DEFAULT_RULES, View
from harness.diff.request_side import request_divergences, strip_losses
from harness.diff.triage import RunOutcome, Triage, Verdict, triage

__all__ = [
    "DEFAULT_RULES",
    "Divergence",
    "RunOutcome",
    "Triage",
    "Verdict",
    "View",
    "compare",
    "diff_views",
    "request_divergences",
    "strip_losses",
    "triage",
]
