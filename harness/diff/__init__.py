"""Diff engine: normalization rules, loss keys, deepdiff comparison with first divergence, request-side diff,
the one comparison pipeline over run traces, triage and the judge of a case."""

from harness.diff.compare import Divergence, compare, diff_views, normalize_pair
from harness.diff.judge import CLIENT_CRASH, LEAK_CHECK, judge, outcome, unsupported
from harness.diff.losses import LossKeyError, apply_losses, parse_loss, valid_keys
from harness.diff.normalize import DEFAULT_RULES, View
from harness.diff.pipeline import (
    Compared,
    UnknownLossesError,
    compared_views,
    request_side,
    response_divergences,
    sdk_view,
)
from harness.diff.request_side import request_divergences
from harness.diff.triage import RunOutcome, Triage, triage
from harness.trace.model import Verdict

__all__ = [
    "CLIENT_CRASH",
    "DEFAULT_RULES",
    "LEAK_CHECK",
    "Compared",
    "Divergence",
    "LossKeyError",
    "RunOutcome",
    "Triage",
    "UnknownLossesError",
    "Verdict",
    "View",
    "apply_losses",
    "compare",
    "compared_views",
    "diff_views",
    "judge",
    "normalize_pair",
    "outcome",
    "parse_loss",
    "request_divergences",
    "request_side",
    "response_divergences",
    "sdk_view",
    "triage",
    "unsupported",
    "valid_keys",
]
