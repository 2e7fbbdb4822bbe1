"""The registry of checks: every check the harness runs or judges by, with its scope, its severity and why it
matters (in the style of schemathesis's `core/registries.py`: one decorator, one signature).

A check is a function `(Subject) -> Iterable[Check | Deviation]` registered with `@check(...)`. Its spec says
where it looks (`Scope`), what a failure is (`Severity`: a proxy bug fails the case, a deviation is a warning, a
harness error means nothing was judged) and, in a short paragraph with its evidence, why it matters. Checks whose
result is computed elsewhere (the event grammar inside the proxy's tap, a crash of the client SDK, the protocols'
wire rules) are declared here all the same (`declare`), so the judge, the diff and the reports look every check
name up in one place (`spec_for`) and `conformance list checks` prints them all.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.trace.model import Check, Deviation

if TYPE_CHECKING:
    from harness.checks.subject import Subject


class Scope(enum.StrEnum):
    """What a check looks at."""

    REQUEST = "request"
    """The request the proxy sent upstream."""
    ANSWER = "answer"
    """The answer the client received, whole."""
    STREAM = "stream"
    """The answer the client received, event by event."""
    WIRE = "wire"
    """The raw bytes on either side (framing, secrets, the frontend protocol's wire rules)."""
    HEADERS = "headers"
    """HTTP headers."""
    SCENARIO = "scenario"
    """A scenario's expectation, on what the client SDK saw."""


class Severity(enum.StrEnum):
    """What a failure of the check means."""

    PROXY_BUG = "proxy bug"
    """The case fails (when the baselines pass it: triage sorts backend and baseline issues out)."""
    DEVIATION = "deviation"
    """A warning: the wire differs from the real provider's in a way its clients tolerate (gate: `--strict`)."""
    HARNESS_ERROR = "harness error"
    """Nothing was judged: the gate exits 2."""


Result = Check | Deviation
CheckFn = Callable[["Subject"], Iterable[Result]]
"""The one signature of a check: what a run did in, named results out."""


@dataclass(frozen=True)
class CheckSpec:
    """One registered check."""

    name: str
    """Stable name; a name ending in `*` covers a family (`request.*`: one check per scenario field)."""
    scope: Scope
    severity: Severity
    why: str
    """Why it matters, in a sentence or three, with the evidence (a real bug, the provider's reference)."""
    fn: CheckFn | None = None
    """The check itself; None when its result is computed elsewhere (see the module docstring)."""
    translated_only: bool = False
    """Run on the translated run only (the baselines go through the proxy's pass-through, which changes nothing)."""
    streams: tuple[bool, ...] = (True, False)
    """The streaming modes it applies to."""
    divergence_key: str | None = None
    """For a check the comparison pipeline makes (a normalization rule): a key that marks its divergences."""
    upstream: bool = False
    """It judges what the proxy sent upstream: a failure is a request-side proxy bug."""

    def covers(self, name: str) -> bool:
        """Whether a result named `name` is this check's."""
        return name == self.name or (self.name.endswith("*") and name.startswith(self.name[:-1]))


@dataclass
class Registry:
    """The checks, in registration order."""

    specs: dict[str, CheckSpec] = field(default_factory=dict)

    def add(self, spec: CheckSpec) -> CheckSpec:
        if spec.name in self.specs and self.specs[spec.name] != spec:
            raise ValueError(f"check {spec.name!r} is registered twice")
        self.specs[spec.name] = spec
        return spec

    def __iter__(self) -> Iterator[CheckSpec]:
        return iter(self.specs.values())


REGISTRY = Registry()


def check(
    name: str,
    *,
    scope: Scope,
    severity: Severity,
    why: str,
    translated_only: bool = False,
    streams: tuple[bool, ...] = (True, False),
    upstream: bool = False,
) -> Callable[[CheckFn], CheckFn]:
    """Register the decorated function as the check `name`."""

    def register(fn: CheckFn) -> CheckFn:
        spec = CheckSpec(name, scope, severity, _one_paragraph(why), fn, translated_only, streams, upstream=upstream)
        REGISTRY.add(spec)
        return fn

    return register


def declare(name: str, *, scope: Scope, severity: Severity, why: str, divergence_key: str | None = None) -> str:
    """Register a check whose result is computed elsewhere; returns its name (for the module that makes it)."""
    REGISTRY.add(CheckSpec(name, scope, severity, _one_paragraph(why), divergence_key=divergence_key))
    return name


def _one_paragraph(text: str) -> str:
    return " ".join(text.split())
