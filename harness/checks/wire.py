"""Checks on what the proxy did on the wire, which the SDK may hide: the client's stream decodes cleanly with its
own protocol and follows the event grammar, its text was not held back, and it keeps the frontend protocol's
wire rules (declared by each protocol in `facts.Frontend.wire_rules`: the engine stays protocol-agnostic)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from harness import ir
from harness.checks.memo import ANSWERS, Memo
from harness.checks.registry import Result, Scope, Severity, check
from harness.checks.subject import Subject, decode_stream
from harness.protocols import registry
from harness.stream import validate
from harness.trace.model import Check, Deviation

MIN_TEXT_CHUNKS = 3
"""Upstream text chunks below which buffering is not judged: a short answer may fairly arrive in one piece."""
FRONTEND_WIRE = "frontend_wire"
TEXT_NOT_BUFFERED = "stream.text_not_buffered"
WIRE_RULES = "wire_rules"
_checked: Memo[tuple[str, bytes], Check] = Memo(ANSWERS)
"""The frontend_wire check of an answer, by the client's protocol and the answer's exact chunks
(`Subject.frontend_digest`): what it finds depends on nothing else."""
_broken: Memo[tuple[str, bool, bytes], tuple[Deviation, ...]] = Memo(ANSWERS)
"""The wire rules an answer breaks, by the client's protocol, the mode and the answer's exact chunks."""


def frontend_wire(protocol: str, chunks: Sequence[bytes]) -> Check:
    """The frontend stream decoded with `protocol`'s own decoder: no decode error, no grammar violation, no break
    of the protocol's defect rules (`facts.WireRule.defect`)."""
    return _wire_check(protocol, *decode_stream(protocol, chunks), body=b"".join(chunks))


def _wire_check(protocol: str, events: Sequence[ir.StreamEvent], error: str | None, *, body: bytes) -> Check:
    if error is None:
        frontend = registry.facts(protocol).frontend
        defects = [rule for rule in frontend.wire_rules if rule.defect] if frontend is not None else []
        error = "; ".join(f"{rule.name}: {found}" for rule in defects for found in rule.findings(body, True)) or None
    if error is not None:
        return Check(name=FRONTEND_WIRE, passed=False, expected=f"a valid {protocol} stream", actual=error)
    violations = [str(v) for v in validate(events)]
    return Check(
        name=FRONTEND_WIRE, passed=not violations, expected=f"a valid {protocol} stream", actual=violations or "valid"
    )


@check(
    FRONTEND_WIRE,
    scope=Scope.STREAM,
    severity=Severity.PROXY_BUG,
    translated_only=True,
    streams=(True,),
    why="""The stream the proxy sent decodes cleanly with the client protocol's own decoder, follows the event
    grammar and keeps the protocol's defect rules (what its decoder reads past because some real provider does
    it, while clients rely on it: each rule is listed by its protocol). SDKs are lenient: the Anthropic SDK
    skips a `data: [DONE]` after message_stop that a stricter client (or a proxy in front) chokes on, so what the
    SDK shows is not enough.""",
)
def _frontend_wire(subject: Subject) -> Iterable[Result]:
    if subject.frontend_status == 200 and subject.frontend_chunks and not subject.truncated:
        key = (subject.client, subject.frontend_digest)
        yield _checked.get(key, lambda: _wire_check(subject.client, *subject.client_stream, body=subject.frontend_body))


def text_buffering(upstream: Sequence[int], sent: Sequence[int], truncated: bool) -> Check | None:
    """Whether text was held back until the upstream had sent all of it; None when there is too little to judge."""
    if len(upstream) < MIN_TEXT_CHUNKS or not sent or truncated:
        return None
    buffered = min(sent) >= upstream[-1]
    actual = {
        "upstream_text_chunks": len(upstream),
        "last_upstream_text_chunk": upstream[-1],
        "first_client_text_after_upstream_chunk": min(sent),
        "client_text_chunks": len(sent),
    }
    expected = f"text sent before upstream chunk {upstream[-1]} (the last one carrying text)"
    return Check(name=TEXT_NOT_BUFFERED, passed=not buffered, expected=expected, actual=actual)


@check(
    TEXT_NOT_BUFFERED,
    scope=Scope.STREAM,
    severity=Severity.PROXY_BUG,
    translated_only=True,
    streams=(True,),
    why="""Text reached the client while the upstream was still sending it. A proxy that collects the whole
    answer before streaming it gives the same final text, so no diff sees it, but the user waits for the
    whole answer. Judged on chunk ordinals, not clock times, so the verdict does not depend on machine load.""",
)
def _text_not_buffered(subject: Subject) -> Iterable[Result]:
    found = text_buffering(subject.upstream_text_chunks, subject.frontend_text_chunks, subject.truncated)
    if found is not None:
        yield found


@check(
    WIRE_RULES,
    scope=Scope.WIRE,
    severity=Severity.DEVIATION,
    translated_only=True,
    why="""What the real provider's successful answers always do beyond what its SDK needs to read them (each
    rule is declared by its protocol, with the API reference and real recordings it rests on, and listed below
    under its own name). A break is a warning: official clients read the answer, stricter ones may not.""",
)
def _wire_rules(subject: Subject) -> Iterable[Result]:
    if subject.truncated or subject.frontend_status != 200 or not subject.frontend_chunks:
        return
    frontend = registry.facts(subject.client).frontend
    if frontend is None:
        return
    rules = [rule for rule in frontend.wire_rules if not rule.defect]  # a defect is frontend_wire's

    def broken() -> tuple[Deviation, ...]:
        body = subject.frontend_body
        found = ((rule, finding) for rule in rules for finding in rule.findings(body, subject.stream))
        return tuple(Deviation(rule=rule.name, message=finding, source=rule.source) for rule, finding in found)

    yield from _broken.get((subject.client, subject.stream, subject.frontend_digest), broken)
