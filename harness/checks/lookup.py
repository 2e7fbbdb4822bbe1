"""Looking checks up: by a result's name (`spec_for`, `why`), all of them (`all_specs`), and running those that
apply to a run (`run_checks`). Every lookup loads the built-in checks first."""

from __future__ import annotations

from collections.abc import Iterable

from harness.checks import builtin
from harness.checks.registry import REGISTRY, CheckSpec, Result, Scope
from harness.checks.subject import Subject
from harness.trace.model import CaseResult


def spec_for(name: str) -> CheckSpec | None:
    """The spec of a check result's name (exact first, then the longest family prefix), or None."""
    builtin.load()
    exact = REGISTRY.specs.get(name)
    if exact is not None:
        return exact
    families = [s for s in REGISTRY if s.name.endswith("*") and s.covers(name)]
    return max(families, key=lambda s: len(s.name)) if families else None


def why(name: str) -> str:
    """Why a check (by a result's name) matters; empty for a name nobody registered."""
    spec = spec_for(name)
    return spec.why if spec is not None else ""


def all_specs() -> list[CheckSpec]:
    """Every registered check, the protocols' wire rules included, sorted by scope and name."""
    builtin.load()
    return sorted(REGISTRY, key=lambda s: (list(Scope).index(s.scope), s.name))


RUN_ORDER = (
    "harness.checks.scenario",
    "harness.checks.wire",
    "harness.checks.upstream",
    "harness.checks.answer",
    "harness.checks.spec",
)
"""The order in which the results of the modules' checks appear in a trace, whichever was imported first."""


EVERY_SCOPE = frozenset(Scope)


def _rank(spec: CheckSpec) -> int:
    module = getattr(spec.fn, "__module__", "")
    return RUN_ORDER.index(module) if module in RUN_ORDER else len(RUN_ORDER)


_ordered: list[tuple[tuple[CheckSpec, ...], list[CheckSpec]]] = []
"""The registry's specs as last seen, and in the order they run (one entry: sorted again when the registry
changes)."""


def _run_order() -> list[CheckSpec]:
    """The registered specs in `RUN_ORDER` (stable: registration order within a module), sorted once."""
    specs = tuple(REGISTRY)
    if not _ordered or _ordered[0][0] != specs:
        _ordered[:] = [(specs, sorted(specs, key=_rank))]
    return _ordered[0][1]


def run_checks(subject: Subject, scopes: Iterable[Scope] | None = None) -> list[Result]:
    """Every registered check with a function, in registration order, that applies to the subject's run."""
    builtin.load()
    wanted = set(scopes) if scopes is not None else EVERY_SCOPE
    out: list[Result] = []
    for spec in _run_order():
        if spec.fn is None or spec.scope not in wanted or subject.stream not in spec.streams:
            continue
        if spec.translated_only and subject.role != "translated":
            continue
        out.extend(spec.fn(subject))
    return out


def explain(case: CaseResult) -> list[tuple[str, str]]:
    """(check, why) for what made a case fail: the translated run's failed checks (the other runs' when it has
    none), and a comparison rule that marks the first divergence (`CheckSpec.divergence_key`)."""
    builtin.load()
    out: dict[str, str] = {}
    runs = [case.runs[r] for r in ("translated", "baseline_frontend", "baseline_backend") if r in case.runs]
    for run in runs:
        for check in run.checks:
            spec = spec_for(check.name)
            if not check.passed and spec is not None:
                out.setdefault(check.name, spec.why)
        if out:
            break
    first = case.first_divergence
    if first is not None:
        for spec in REGISTRY:
            if spec.divergence_key and spec.divergence_key in first.path:
                out.setdefault(spec.name, spec.why)
    return list(out.items())
