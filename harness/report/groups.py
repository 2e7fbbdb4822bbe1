"""Cases grouped by root cause: one group per (verdict, cause) instead of one line per case, with counts and one
example. The terminal, summary.json, junit.xml and the HTML list share this grouping.

A proxy bug's causes: its headline divergence's kind and field (`harness.diff.headline`: `tool call` at
`events[*]`, `stop reason or error` at `stop_reason.kind`, on a stream and an answer alike; indexes, ids and
values left out), then each divergence of another kind that shows a defect of its own (a broken answer, a tool
call, text, or one a registered check marks, such as message_start's input count), then each failed check of a
kind no cause has (a check of a kind a divergence has is that divergence). What follows from the headline (the
fields of one lost call, the stop reason and usage of an error turned into a stop) is no cause of its own. A
case with several defects is in the group of each, its headline's first, so no defect hides behind another. Other
verdicts (harness errors, backend and baseline issues) group by their reason and first-divergence path. No group
is titled without a cause: one that no divergence decided is titled by its failed check and why it matters.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from harness.checks import all_specs, spec_for
from harness.diff.headline import Kind, cause_field, check_kind, kind_of, ranked
from harness.diff.judge import outcome
from harness.report.model import VERDICTS
from harness.trace.model import CaseResult, DivergenceJSON, Verdict

_INDEX = re.compile(r"\[\d+\]")
_CHANGE = {"iterable_item_removed": "lost", "dictionary_item_removed": "lost"}
_CHANGE |= {"iterable_item_added": "extra", "dictionary_item_added": "extra"}
TITLE_LIMIT = 140
"""Longest group title (a check's why is cut at its first sentence, then here)."""


def path_pattern(path: str) -> str:
    """A divergence path with list indices as `[*]`."""
    return _INDEX.sub("[*]", path)


@dataclass(frozen=True)
class Cause:
    """One root cause of a case."""

    key: str
    """What groups it: the same for the same cause in any case (no index, id or value in it)."""
    title: str
    """What a person reads: the kind and where, or the failed check and why it matters."""
    divergence: DivergenceJSON | None = None
    """The case's divergence that shows it, when one does."""
    rank: int = int(Kind.OTHER)
    """Its kind's rank (`harness.diff.headline.Kind`): the case's causes are listed best first."""


def _divergence_cause(side: str, d: DivergenceJSON) -> Cause:
    kind = kind_of(d)
    pattern = path_pattern(d.path)
    verb = _CHANGE.get(d.change, "differs")
    where = "upstream request: " if side == "request" else ""
    return Cause(f"{side}:{kind.name}:{cause_field(d)}", f"{where}{kind.label} {verb} at {pattern}", d, int(kind))


def _check_cause(name: str) -> Cause:
    spec = spec_for(name)
    why = spec.why.split(". ", 1)[0].rstrip(".") if spec is not None else ""
    title = f"{name} fails" + (f": {why}" if why else "")
    if len(title) > TITLE_LIMIT:
        title = title[: TITLE_LIMIT - 1] + "\u2026"
    kind = check_kind(name)
    return Cause(f"check:{name}", title, None, int(kind if kind is not None else Kind.OTHER))


def _failed(case: CaseResult) -> list[str]:
    """The failed checks (and grammar rules) that are the translated run's own, not its baselines'."""
    translated = case.runs.get("translated")
    if translated is None:
        return []
    failures = set(outcome(translated).failures)
    for role in ("baseline_frontend", "baseline_backend"):
        if role in case.runs:
            failures -= outcome(case.runs[role]).failures
    return sorted(failures)


@functools.cache
def _markers() -> tuple[str, ...]:
    return tuple(spec.divergence_key for spec in all_specs() if spec.divergence_key)


def _marked(path: str) -> bool:
    """Whether a registered check names this divergence as its own (`CheckSpec.divergence_key`)."""
    return any(key in path for key in _markers())


_CONTENT = (Kind.BROKEN, Kind.TOOL_CALL, Kind.TEXT)
"""Kinds a divergence shows a defect of its own by, beside a headline of another kind (a stop reason, a field, a
usage count or an id beside it is most often its consequence: an error turned into a stop changes the stop
reason, the usage and the exception too)."""


def causes(case: CaseResult) -> list[Cause]:
    """The root causes of a case, the one that heads it first. A proxy bug's: its headline divergence (the upstream
    request's first for a request-side bug), then each divergence of a kind no earlier cause has that shows a defect
    of its own (a broken answer, a tool call, text, or a divergence a registered check marks), then each failed
    check of a kind no cause has; any other verdict's: its reason."""
    if not case.verdict.is_proxy_bug:
        pattern = path_pattern(case.first_divergence.path) if case.first_divergence is not None else ""
        return [Cause(f"reason:{pattern}\0{case.reason}", case.reason, case.first_divergence)]
    sides = [("request", case.request_divergences), ("response", case.response_divergences)]
    if case.verdict == Verdict.PROXY_BUG_RESPONSE:
        sides = sides[1:]  # a request-side bug names the response side too when it also fails (triage)
    found: dict[str, Cause] = {}
    kinds: set[int] = set()
    for side, divergences in sides:
        for d in ranked(divergences):
            kind = kind_of(d)
            if found and (kind in kinds or not (kind in _CONTENT or _marked(d.path))):
                continue
            cause = _divergence_cause(side, d)
            found.setdefault(cause.key, cause)
            kinds.add(int(kind))
    for name in _failed(case):
        judged = check_kind(name)
        if judged is None or int(judged) not in kinds:
            cause = _check_cause(name)
            found.setdefault(cause.key, cause)
            kinds.add(cause.rank)
    if not found:
        return [Cause(f"reason:\0{case.reason}", case.reason, case.first_divergence)]
    head, *rest = found.values()
    return [head, *sorted(rest, key=lambda c: (c.rank, c.divergence is None))]


@dataclass
class CaseGroup:
    """Cases sharing a verdict and a root cause."""

    verdict: Verdict
    """Their verdict."""
    key: str
    """Their cause's key (`Cause.key`)."""
    title: str
    """Their cause, as the first case shows it (`Cause.title`)."""
    path: str | None
    """The path pattern of the divergence that shows the cause in the first case; None when none does."""
    divergence: DivergenceJSON | None
    """That divergence (its values are the first case's)."""
    reason: str
    """The first case's reason."""
    cases: list[CaseResult] = field(default_factory=list)
    """The cases, in run order."""
    heads: set[str] = field(default_factory=set)
    """The ids of the cases this cause heads (a case is in one group per cause, headed by one)."""

    @property
    def id(self) -> str:
        """A stable short id (the same cause gets the same id in every run), for links and CI annotations."""
        key = "\0".join((self.verdict, self.key)).encode("utf-8", "surrogatepass")
        return "g" + hashlib.sha256(key).hexdigest()[:8]

    @property
    def example(self) -> CaseResult:
        """The first case of the group."""
        return self.cases[0]

    @property
    def known(self) -> int:
        """How many of its cases are accepted by the known-failures file (only a proxy bug can be; a harness error
        never is, even in a trace written before that rule)."""
        return sum(1 for c in self.cases if c.known and c.verdict.is_proxy_bug)

    @property
    def new(self) -> int:
        """How many of its cases are not."""
        return len(self.cases) - self.known

    def axis(self, name: str) -> list[str]:
        """The distinct frontends, backends or scenarios (`name`) of its cases, in first-seen order."""
        return list(dict.fromkeys(getattr(c, name) for c in self.cases))


def group_cases(cases: Iterable[CaseResult], verdicts: Iterable[str] | None = None) -> list[CaseGroup]:
    """The groups of `cases` (only those with a verdict in `verdicts`, when given), a case in one group per cause:
    by verdict in report order, then the largest group first, then by title."""
    wanted = None if verdicts is None else set(verdicts)
    groups: dict[tuple[str, str], CaseGroup] = {}
    for case in cases:
        if wanted is not None and case.verdict not in wanted:
            continue
        for number, cause in enumerate(causes(case)):
            key = (case.verdict, cause.key)
            if key not in groups:
                path = path_pattern(cause.divergence.path) if cause.divergence is not None else None
                groups[key] = CaseGroup(case.verdict, cause.key, cause.title, path, cause.divergence, case.reason)
            groups[key].cases.append(case)
            if number == 0:
                groups[key].heads.add(case.case_id)
    order = {v: i for i, v in enumerate(VERDICTS)}
    return sorted(groups.values(), key=lambda g: (order.get(g.verdict, len(order)), -len(g.cases), g.title, g.key))


def groups_of(groups: Iterable[CaseGroup]) -> dict[str, list[CaseGroup]]:
    """Each case's groups, the one its headline cause makes first."""
    out: dict[str, list[CaseGroup]] = {}
    for group in groups:
        for case in group.cases:
            out.setdefault(case.case_id, []).append(group)
    for case_id, mine in out.items():
        mine.sort(key=lambda g: case_id not in g.heads)
    return out


def failing(cases: Iterable[CaseResult]) -> list[CaseGroup]:
    """The groups of every case that is neither a pass nor unsupported (proxy bugs, backend and baseline issues,
    and any verdict added later)."""
    return group_cases(c for c in cases if c.verdict not in (Verdict.PASS, Verdict.UNSUPPORTED))


def settled(case: CaseResult) -> bool:
    """Whether what a report writes of the case can be written before the run ends, from the case alone: a pass or
    an unsupported case is in no group (`failing`), and one without wire deviations reads the same under `strict`
    (junit.xml) and has a summary.json entry of a shape to check once (`summary.validate_summary`)."""
    return case.verdict in (Verdict.PASS, Verdict.UNSUPPORTED) and not case.deviations
