"""Diff engine: normalization rules, deepdiff comparison with first divergence, request-side diff, triage."""

from harness.diff.compare import Divergence, compare, diff_views
from harness.diff.losses import LossKeyError, apply_losses, parse_loss, valid_keys
from harness.diff.normalize import DEFAULT_RULES, View
from harness.diff.request_side import request_divergences
from harness.diff.triage import RunOutcome, Triage, Verdict, triage

__all__ = [
    "DEFAULT_RULES",
    "Divergence",
    "LossKeyError",
    "RunOutcome",
    "Triage",
    "Verdict",
    "View",
    "apply_losses",
    "compare",
    "diff_views",
    "parse_loss",
    "request_divergences",
    "triage",
    "valid_keys",
]
