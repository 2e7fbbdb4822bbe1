"""`docs/checks.md`: the severity policy and every registered check with its why, generated from the registry
(`python -m harness.checks.doc > docs/checks.md`; `tests/checks/test_doc.py` keeps the file current)."""

from __future__ import annotations

import sys

from harness.checks.lookup import all_specs

POLICY = """# Checks

Every check the harness runs or judges by is registered in `harness/checks` (one decorator, `@check`, and one
signature, `Subject -> Check | Deviation`; checks computed elsewhere are declared there all the same). Each says
where it looks (scope), what a failure means (severity) and why it matters. `conformance list checks` prints
this table; the terminal summary and `junit.xml` show the why beside each failure. This file is generated
(`python -m harness.checks.doc > docs/checks.md`) and a test keeps it current.

## Severity policy

- **Proxy bug** (the case fails when the baselines pass it; triage sorts out backend and baseline issues): a
  missing required field, a wrong type, null where the spec does not allow it, an enum value outside the spec;
  an unknown field in an upstream request to an API that rejects unknown fields (declared per protocol,
  `facts.UpstreamRequest.rejects_unknown_fields`); a header the provider needs missing or changed upstream, or
  one added that changes what it does (a fixed beta flag). A failed check of the upstream request or its
  headers is a request-side proxy bug.
- **Wire deviation** (a warning; fails the gate only under `--strict`): an undocumented extra field in an answer,
  a frontend wire rule broken, an optional field sent empty where the provider's clients leave it out, an unknown
  field sent to an API that ignores unknown fields, a header difference the provider ignores. A wire rule's
  finding at several chunks or events of one answer is listed once, with the places (`chunks 0-547 (each) has
  provider`).
- **Harness error** (exit 2, never known): a run could not complete, so nothing was judged.

## The checks
"""


def render() -> str:
    """The whole file."""
    lines = [POLICY, "| check | scope | severity | why it matters |", "|---|---|---|---|"]
    for spec in all_specs():
        lines.append(f"| `{spec.name}` | {spec.scope} | {spec.severity} | {spec.why.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
