"""One home for checks: the registry (`check`, `declare`, `spec_for`, `all_specs`, `run_checks`), what a check
looks at (`Subject`), and the built-in checks (`builtin`, `scenario`, `wire`, `upstream`)."""

from harness.checks.builtin import CLIENT_CRASH, GRAMMAR, HARNESS_ERROR, LEAK, START_USAGE, UNEXPRESSIBLE_ANSWER
from harness.checks.lookup import all_specs, explain, run_checks, spec_for, why
from harness.checks.registry import CheckSpec, Scope, Severity, check, declare
from harness.checks.subject import Subject

__all__ = [
    "CLIENT_CRASH",
    "GRAMMAR",
    "HARNESS_ERROR",
    "LEAK",
    "START_USAGE",
    "UNEXPRESSIBLE_ANSWER",
    "CheckSpec",
    "Scope",
    "Severity",
    "Subject",
    "all_specs",
    "check",
    "declare",
    "explain",
    "run_checks",
    "spec_for",
    "why",
]
