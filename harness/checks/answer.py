"""Checks on the headers of the answer the client received."""

from __future__ import annotations

from collections.abc import Iterable

from harness.checks.registry import Result, Scope, Severity, check
from harness.checks.subject import Subject
from harness.trace.model import Check

CONTENT_TYPE = "answer.content_type"
JSON = "application/json"


@check(
    CONTENT_TYPE,
    scope=Scope.HEADERS,
    severity=Severity.PROXY_BUG,
    streams=(False,),
    why="""A whole answer (success or error) comes as `application/json`, as every provider here sends it. SDKs
    choose their parser by it: the openai SDK hands back a string instead of an object for another type, and
    a strict client refuses the body. Checked on every run, so a backend that sends another type fails its own
    baseline the same way.""",
)
def _content_type(subject: Subject) -> Iterable[Result]:
    if subject.frontend_status is None or not subject.frontend_chunks or not subject.frontend_response_headers:
        return []
    value = subject.answer_header("content-type")
    ok = value is not None and value.lower().startswith(JSON)
    return [Check(name=CONTENT_TYPE, passed=ok, expected=JSON, actual=value)]
