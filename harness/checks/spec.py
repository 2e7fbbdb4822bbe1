"""Checks against the providers' own published specs (`harness.protocols.wire_schema`, vendored with provenance in
each protocol's package): what the client received (the body, each stream event, the error body) against the
frontend protocol's spec, and the body sent upstream against the backend's. A finding of the governing spec is a
proxy bug (a required field missing, a wrong type, null where not allowed, an enum value outside the spec, an
unknown field sent to an API that rejects them). Warnings (a spec that only warns, an undocumented extra field in
an answer) are not reported per run yet: see `_results`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from harness.checks.memo import ANSWERS, Memo, digest
from harness.checks.registry import Result, Scope, Severity, check, declare
from harness.checks.subject import Subject
from harness.protocols import registry
from harness.protocols.wire_schema import (
    UNDOCUMENTED,
    AnswerKind,
    SchemaFinding,
    answer_findings,
    answer_parts,
    has_spec,
    part_payloads,
    request_findings,
)
from harness.trace.model import Check, Deviation

ANSWER_SPEC = "answer.spec"
UPSTREAM_SPEC = "upstream.spec"
SHOWN = 5
"""Findings named in a failed check's `actual` (the count says how many there were)."""
MEMO = 20_000
"""Answer parts and request bodies whose findings are kept (per process; forgotten all at once when full). A
matrix sends the same payloads again and again (the same stream events through every backend): of the bench
subset's 300,000 answer payloads, one in thirteen is distinct, and each is validated once."""
_memo: Memo[tuple[str, bytes], tuple[SchemaFinding, ...]] = Memo(MEMO)
"""A request body's findings, by the backend and the body's exact bytes."""
_parts: Memo[tuple[str, str, bytes], tuple[tuple[AnswerKind, tuple[SchemaFinding, ...]], ...] | None] = Memo(MEMO)
"""An answer part's payloads' kinds and findings, by its exact text (`answer_parts`): a part seen before is
not parsed again, and a text that is no JSON is None."""
_answers: Memo[tuple[str, int, str, bytes], tuple[Result, ...]] = Memo(ANSWERS)
"""The answer.spec results of a translated run's answer, by the client's protocol, the status, the media type and
the answer's exact chunks (`Subject.frontend_digest`): they depend on nothing else."""


def _request_findings(protocol: str, body: bytes, payload: object) -> tuple[SchemaFinding, ...]:
    """What in a request body (`payload`, parsed from the exact bytes `body`) departs from `protocol`'s specs,
    found once per body and remembered by its digest: findings depend on nothing else (the specs are fixed for
    the process)."""
    return _memo.get((protocol, digest(body)), lambda: tuple(request_findings(protocol, payload)))


def _part_findings(
    protocol: str, how: str, text: str | bytes
) -> tuple[tuple[AnswerKind, tuple[SchemaFinding, ...]], ...] | None:
    """Each payload of one answer part (`answer_parts`) with its findings (`answer_findings`), remembered by the
    part's exact text: the same text is the same payloads. None for a text that is no JSON. (A payload of a part
    not seen before is almost never one seen in another part: it is judged, not looked up again by its own
    text.)"""

    def find() -> tuple[tuple[AnswerKind, tuple[SchemaFinding, ...]], ...] | None:
        try:
            payloads = part_payloads(how, text)
        except ValueError:
            return None
        return tuple((kind, tuple(answer_findings(protocol, kind, p))) for kind, p in payloads)

    return _parts.get((protocol, how, digest(text)), find)


def _said(finding: SchemaFinding, where: str) -> str:
    at = f"{where}{'.' if where and finding.path else ''}{finding.path}"
    return f"{at or '(root)'}: {finding.message} [{finding.spec}]"


def _shown(said: list[str]) -> list[str]:
    return [*said[:SHOWN], *([f"(+{len(said) - SHOWN} more)"] if len(said) > SHOWN else [])]


def _warning(finding: SchemaFinding, where: str) -> str:
    """A warning, with its place generalised (`event[*]`, `output[*]`) so one finding is one line per run and
    the same finding in two runs reads the same."""
    return re.sub(r"\[\d+\]", "[*]", _said(finding, where))


def _results(name: str, findings: Sequence[tuple[str, SchemaFinding]], expected: str) -> list[Result]:
    """One check, failed by the governing spec's violations; and a warning for each other distinct finding (an
    undocumented extra field, a finding of a spec that only warns). The judge keeps a translated run's warning
    only when the provider's own answer, or its SDK's request, has no such finding
    (`harness.checks.headers.beyond_baseline`): what the real API does itself is no deviation of the proxy."""
    governing = [_said(f, where) for where, f in findings if f.governs]
    warned = sorted({_warning(f, where) for where, f in findings if not f.governs})
    out: list[Result] = [Deviation(rule=f"{name}_warnings", message=m) for m in warned]
    if not governing:
        return [Check(name=name, passed=True, expected=expected, actual="as the spec says"), *out]
    return [Check(name=name, passed=False, expected=expected, actual=_shown(governing)), *out]


ANSWER_WARNINGS = declare(
    f"{ANSWER_SPEC}_warnings",
    scope=Scope.ANSWER,
    severity=Severity.DEVIATION,
    why="""What the client received departs from a spec where the departure is no violation: a field the
    governing spec does not document, or a finding of a spec that only warns (Open Responses, Gemini's stand-in;
    docs/specs.md). A warning only when the provider's own answer to the same request has no such finding:
    the real API sends fields its published types lag behind (`frequency_penalty` on a Response), and those are
    not the proxy's.""",
)
UPSTREAM_WARNINGS = declare(
    f"{UPSTREAM_SPEC}_warnings",
    scope=Scope.REQUEST,
    severity=Severity.DEVIATION,
    why="""The body sent upstream departs from a spec where the departure is no violation (a finding of a spec
    that only warns, such as Open Responses' `type` on an input message, which OpenAI's API does not need). A
    warning only when the backend's own SDK, sending the same request, has no such finding.""",
)


def _media_type(subject: Subject) -> str:
    return subject.answer_header("content-type") or ""


@check(
    ANSWER_SPEC,
    scope=Scope.ANSWER,
    severity=Severity.PROXY_BUG,
    why="""What the client received (the body, each stream event, the error body) holds to the frontend
    protocol's published spec: the OpenAI OpenAPI types behind the openai SDK, Anthropic's, Bedrock's service
    model (docs/specs.md says which spec governs and which only warns). The Python SDKs are lenient: a Responses
    object without `completed_at` or `service_tier`, a chunk without `created`, an Anthropic error that is not
    `{"type": "error", "error": {...}}` pass through them, and a client in Go, Java or TypeScript with schema
    validation, or the Open Responses compliance suite, rejects the answer (issue 21, seen on real gateways and
    on our own Responses output).""",
)
def _answer(subject: Subject) -> Iterable[Result]:
    if not has_spec(subject.client) or subject.truncated or not subject.frontend_chunks:
        return []
    status = subject.frontend_status or 200
    if subject.scenario.kind == "models_list" and status < 400:
        return []  # the vendored specs hold the answer and error shapes, not the model lists (`model_list` facts)
    media = _media_type(subject)
    if subject.role != "translated":  # a baseline's answer is a recording, played once a matrix: never seen again
        return _answer_results(subject.client, subject.frontend_body, media, status)
    key = (subject.client, status, media, subject.frontend_digest)
    found = _answers.get(key, lambda: tuple(_answer_results(subject.client, subject.frontend_body, media, status)))
    return list(found)


def _answer_results(client: str, body: bytes, media: str, status: int) -> list[Result]:
    try:
        parts = answer_parts(body, media_type=media, status=status)
    except ValueError:  # bytes that are not what their media type says: frontend_wire and the SDK judge those
        return []
    payloads: list[tuple[AnswerKind, tuple[SchemaFinding, ...]]] = []
    for how, text in parts:
        part = _part_findings(client, how, text)
        if part is None:
            return []  # a payload that is no JSON: judged there too
        payloads += part
    findings = []
    for number, (kind, found) in enumerate(payloads):
        where = f"event[{number}]" if kind == "event" else kind
        findings += [(where, f) for f in found]
    if _own_list(client):  # a wire rule judges undocumented fields already: report each once
        findings = [(w, f) for w, f in findings if f.governs or not f.message.startswith(UNDOCUMENTED)]
    return _results(ANSWER_SPEC, findings, f"an answer as the {client} spec says")


def _own_list(protocol: str) -> bool:
    frontend = registry.facts(protocol).frontend
    return frontend is not None and any(rule.undocumented_fields for rule in frontend.wire_rules)


@check(
    UPSTREAM_SPEC,
    scope=Scope.REQUEST,
    severity=Severity.PROXY_BUG,
    upstream=True,
    why="""The body sent upstream holds to the backend API's published spec: the fields it requires, their types
    and enum values, and (where the API rejects them) no unknown field. The real provider answers 400 to such a
    request while a lenient replay answers it. Checked on every run: what the backend's own SDK sends through
    the pass-through is held to the same spec, so a spec the SDK itself breaks is a backend issue, not a proxy
    bug.""",
)
def _upstream(subject: Subject) -> Iterable[Result]:
    if not has_spec(subject.backend) or not subject.upstream_body:
        return []
    parsed, body = subject.upstream_json
    if not parsed:
        return []  # not JSON: the codec's decode of the request says what is wrong
    found = _request_findings(subject.backend, subject.upstream_body, body)
    findings = [("", f) for f in found]
    return _results(UPSTREAM_SPEC, findings, f"a request as the {subject.backend} spec says")
