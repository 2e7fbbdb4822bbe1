"""A scenario's expectations as registered checks: evaluated on what the client SDK saw (`harness.scenarios.checks`
computes them), and the request fields the scenario says must reach the backend unchanged."""

from __future__ import annotations

from collections.abc import Iterable

from harness.checks.registry import Result, Scope, Severity, check, declare
from harness.checks.subject import Subject
from harness.scenarios.checks import CheckResult, evaluate, evaluate_upstream
from harness.trace.model import Check

_S, _BUG = Scope.SCENARIO, Severity.PROXY_BUG
EXPECTATIONS = {
    "stop_reason": "The client sees why the model stopped (end of turn, length, tool use, stop sequence). Agents "
    "loop on it: a tool_use reported as end_turn ends the agent's turn with the tool never run.",
    "text_equals": "The client gets the scripted text exactly: a lost, doubled or reordered delta changes it.",
    "text_contains": "The client's text contains what the scenario names.",
    "tool_calls": "Each tool call reaches the client with its name and arguments, in order (LiteLLM #29491: "
    "arguments sent with the name were dropped, clients ran tools with {}).",
    "text_is_json": "JSON mode answers parse as JSON at the client.",
    "text_matches_schema": "Structured-output answers validate against the requested schema.",
    "usage_present": "The client gets input and output token counts (billing and context sizing read them).",
    "cache_read_present": "Prompt-cache reads are reported (they are billed differently).",
    "thinking_present": "Reasoning text reaches a client that asked for it.",
    "thinking_signature": "The thinking signature reaches the client: without it the next turn's thinking block "
    "is rejected by the provider.",
    "no_error": "A successful upstream answer reaches the client as a success.",
    "error.kind": "An upstream error reaches the client as the same kind of error (a 429 must stay a rate limit: "
    "clients retry on it and give up on others).",
    "error.status": "The client gets the HTTP status its protocol uses for that error kind.",
    "error.retry_after": "A rate limit's Retry-After reaches the client, whose SDK waits that long before retrying.",
    "error.exception": "The client SDK raises its own exception class for the error (code catches those).",
    "models_contain": "The model list in the client's shape names the models the proxy serves.",
}
"""Each expectation a scenario may hold, and why it matters."""
for _name, _why in EXPECTATIONS.items():
    declare(_name, scope=_S, severity=_BUG, why=_why)


def _as_check(result: CheckResult) -> Check:
    return Check(name=result.name, passed=result.passed, expected=result.expected, actual=result.actual)


@check(
    "expectations",
    scope=_S,
    severity=_BUG,
    why="""The scenario's expectations on what the client SDK saw, each a check of its own name (listed in this
    scope). A check on a value the client's SDK cannot surface, or a protocol on the way cannot carry, is left
    out.""",
)
def _expectations(subject: Subject) -> Iterable[Result]:
    return [_as_check(c) for c in evaluate(subject.scenario, subject.result, capabilities=subject.capabilities)]


@check(
    "request.*",
    scope=_S,
    severity=_BUG,
    why="""Each field the scenario names in `expect.request_fields` reached the backend unchanged (tool schemas
    compared as the request diff compares them). A sampling parameter or tool_choice dropped upstream changes the
    model's behaviour without any error.""",
)
def _request_fields(subject: Subject) -> Iterable[Result]:
    if subject.upstream_request is None:
        return []
    return [_as_check(c) for c in evaluate_upstream(subject.scenario, subject.upstream_request)]
