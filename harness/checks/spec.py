"""Checks against the providers' own published specs (`harness.protocols.wire_schema`, vendored with provenance in
each protocol's package): what the client received (the body, each stream event, the error body) against the
frontend protocol's spec, and the body sent upstream against the backend's. A finding of the governing spec is a
proxy bug (a required field missing, a wrong type, null where not allowed, an enum value outside the spec, an
unknown field sent to an API that rejects them). Warnings (a spec that only warns, an undocumented extra field in
an answer) are not reported per run yet: see `_results`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from harness.checks.registry import Result, Scope, Severity, check
from harness.checks.subject import Subject
from harness.protocols.wire_schema import SchemaFinding, answer_findings, answer_payloads, has_spec, request_findings
from harness.trace.model import Check

ANSWER_SPEC = "answer.spec"
UPSTREAM_SPEC = "upstream.spec"
SHOWN = 5
"""Findings named in a failed check's `actual` (the count says how many there were)."""


def _said(finding: SchemaFinding, where: str) -> str:
    at = f"{where}{'.' if where and finding.path else ''}{finding.path}"
    return f"{at or '(root)'}: {finding.message} [{finding.spec}]"


def _results(name: str, findings: Sequence[tuple[str, SchemaFinding]], expected: str) -> list[Result]:
    """One check: failed by the governing spec's violations. Warnings (an undocumented extra field, a finding of a
    spec that only warns) are not reported per run: on every Responses answer they would bury the rest, so they
    are held to in the spec tests instead (docs/specs.md)."""
    governing = [_said(f, where) for where, f in findings if f.governs]
    if not governing:
        return [Check(name=name, passed=True, expected=expected, actual="as the spec says")]
    more = [f"(+{len(governing) - SHOWN} more)"] if len(governing) > SHOWN else []
    return [Check(name=name, passed=False, expected=expected, actual=[*governing[:SHOWN], *more])]


def _media_type(subject: Subject) -> str:
    headers = {k.lower(): v for k, v in subject.frontend_response_headers.items()}
    return headers.get("content-type", "")


@check(
    ANSWER_SPEC,
    scope=Scope.ANSWER,
    severity=Severity.PROXY_BUG,
    translated_only=True,
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
    try:
        payloads = answer_payloads(b"".join(subject.frontend_chunks), media_type=_media_type(subject), status=status)
    except ValueError:  # bytes that are not what their media type says: frontend_wire and the SDK judge those
        return []
    findings = []
    for number, (kind, payload) in enumerate(payloads):
        where = f"event[{number}]" if kind == "event" else kind
        findings += [(where, f) for f in answer_findings(subject.client, kind, payload)]
    return _results(ANSWER_SPEC, findings, f"an answer as the {subject.client} spec says")


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
    try:
        body = json.loads(subject.upstream_body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return []  # not JSON: the codec's decode of the request says what is wrong
    findings = [("", f) for f in request_findings(subject.backend, body)]
    return _results(UPSTREAM_SPEC, findings, f"a request as the {subject.backend} spec says")
