"""Checks of a stored-response chain (`Scenario.steps`, driven by `harness.drivers.chain`): the last call's
request upstream holds the earlier conversation, and an id no server issued is refused, not answered.

A proxy before a backend that keeps no state must rebuild the conversation from what it stored (the upstream
request of the last call carries every earlier call's input and answer before the new input), or refuse the
continuation with an error envelope (the runner then calls the case unsupported, with the proxy's words).
Answering the new input alone answers a conversation the client never had; answering an unknown id pretends to a
state the proxy does not hold. A backend that keeps the responses itself may be sent the continuation as is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness import ir
from harness.checks.registry import Result, Scope, Severity, check
from harness.checks.subject import Subject
from harness.protocols import HttpRequest, registry
from harness.trace.model import Check

HISTORY = "chain.history_upstream"
UNKNOWN_ID = "chain.unknown_id_refused"


def turns(messages: Iterable[ir.Message]) -> list[tuple[str, str]]:
    """A conversation as (role, its text and tool calls) pairs: what a rebuilt history must carry, whatever ids,
    part layout and provider fields the upstream protocol gives it."""
    out: list[tuple[str, str]] = []
    for message in messages:
        said: list[str] = []
        for part in message.content:
            if isinstance(part, ir.TextPart):
                said.append(part.text)
            elif isinstance(part, ir.ToolCallPart):
                said.append(f"call {part.name}({ir.to_json(part).get('arguments')})")
        out.append((message.role, "".join(said)))
    return out


def _continues(subject: Subject) -> bool:
    stored = registry.facts(subject.backend).stored_responses
    body = HttpRequest("POST", "/", {}, {}, subject.upstream_body)
    return stored is not None and stored.continued(body) is not None


def _shown(pairs: list[tuple[str, str]]) -> list[str]:
    return [f"{role}: {text[:60]}" for role, text in pairs]


@check(
    HISTORY,
    scope=Scope.REQUEST,
    severity=Severity.PROXY_BUG,
    upstream=True,
    why="""The last call of a stored-response chain (Responses `previous_response_id` with only the new input)
    reaches a backend that keeps no state with the whole conversation: every earlier call's input and answer,
    then the new input. A gateway that sends the new input alone has the backend answer a conversation the
    client never had (issue 25: one gateway dropped the old conversation over HTTP). Sent to a backend that
    stores responses itself, the continuation may go as is.""",
)
def _history(subject: Subject) -> Iterable[Result]:
    scenario = subject.scenario
    if not scenario.steps or subject.upstream_request is None or _continues(subject):
        return []
    wanted = turns(scenario.conversation())
    sent = turns(m for m in subject.upstream_request.messages if m.role != "system")
    missing = [pair for pair in wanted[: -len(scenario.request.messages)] if pair not in sent]
    ok = sent[-len(wanted) :] == wanted if len(sent) >= len(wanted) else False
    actual: Any = "the whole conversation, in order" if ok else {"sent": _shown(sent), "missing": _shown(missing)}
    expected = f"the {len(wanted) - len(scenario.request.messages)} earlier turns, then the new input"
    return [Check(name=HISTORY, passed=ok, expected=expected, actual=actual)]


@check(
    UNKNOWN_ID,
    scope=Scope.ANSWER,
    severity=Severity.PROXY_BUG,
    why="""A continuation of a response id no server issued is refused with an error (OpenAI: HTTP 400
    `previous_response_not_found`), not answered: a gateway that answers it pretends to hold a conversation it
    does not have, and the client cannot tell (issue 25: one gateway silently answered an unknown id).""",
)
def _unknown_id(subject: Subject) -> Iterable[Result]:
    probes = [call for call in subject.result.chain if call.unknown]
    out: list[Result] = []
    for call in probes:
        got = call.error
        actual = (
            f"HTTP {got.status} {got.code or got.kind}: {got.message[:120]}"
            if got is not None
            else f"answered (response {call.response_id}: {call.text[:80]!r})"
        )
        expected = f"an error for {call.previous_response_id} (OpenAI: 400 previous_response_not_found)"
        out.append(Check(name=UNKNOWN_ID, passed=got is not None, expected=expected, actual=actual))
    return out
