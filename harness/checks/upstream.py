"""Checks on the request the proxy sent upstream beyond what the request diff compares in the IR: tool-call ids
unique within a turn, the headers the provider needs, and the raw body's top-level fields (what the IR cannot
carry). The tables are each protocol's (`facts.UpstreamRequest`, declared in its own package). Every run is
checked, the baselines too: what the backend's own SDK sends through the pass-through must pass, and triage
compares the runs (a failure the backend's baseline shares is no proxy bug)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from harness import ir
from harness.checks.registry import Result, Scope, Severity, check
from harness.checks.subject import Subject
from harness.protocols import registry
from harness.protocols.facts import HeaderRule, UpstreamRequest
from harness.trace.model import Check, Deviation

TOOL_IDS = "upstream.tool_call_ids_unique"
HEADERS = "upstream.headers"
UNKNOWN_FIELDS = "upstream.unknown_fields"
EMPTY_FIELDS = "upstream.empty_fields"


def duplicate_ids(request: ir.Request) -> list[str]:
    """Where a tool-call id is used twice in one turn: twice among one assistant message's calls, or twice among
    the results that answer them (up to the next assistant message)."""
    found: list[str] = []
    results: dict[str, int] = {}
    for number, message in enumerate(request.messages):
        if message.role == "assistant":
            results = {}
            calls: dict[str, int] = {}
            for part in message.content:
                if isinstance(part, ir.ToolCallPart):
                    calls[part.id] = calls.get(part.id, 0) + 1
            found += [f"messages[{number}]: {n} tool calls with id {i!r}" for i, n in calls.items() if n > 1]
            continue
        for part in message.content:
            if isinstance(part, ir.ToolResultPart):
                results[part.tool_call_id] = results.get(part.tool_call_id, 0) + 1
                if results[part.tool_call_id] == 2:
                    found.append(f"messages[{number}]: a second tool result for id {part.tool_call_id!r}")
    return found


@check(
    TOOL_IDS,
    scope=Scope.REQUEST,
    severity=Severity.PROXY_BUG,
    upstream=True,
    why="""Tool-call ids are unique within a turn in the request sent upstream. A proxy that makes ids from the
    function's name (`call_get_weather`) gives two calls of one function the same id: the Anthropic and OpenAI
    APIs reject duplicate or unmatched ids, or the second call and its result are lost and both results point
    at the first (gateways A22: a Gemini client that checks two cities gets an answer built on one).""",
)
def _tool_call_ids(subject: Subject) -> Iterable[Result]:
    if subject.upstream_request is None:
        return []
    found = duplicate_ids(subject.upstream_request)
    return [Check(name=TOOL_IDS, passed=not found, expected="each id once per turn", actual=found or "unique")]


def _table(subject: Subject) -> UpstreamRequest | None:
    if subject.upstream_request is None or not subject.upstream_headers:
        return None
    return registry.facts(subject.backend).upstream_request


def header_findings(table: UpstreamRequest, sent: dict[str, str], client: dict[str, str]) -> list[tuple[bool, str]]:
    """What the headers sent upstream get wrong against the backend's table, given the client's own headers: (whether
    the provider reads the header, what is wrong) for each finding."""
    return [(rule.read, message) for rule in table.headers for message in _rule_findings(rule, sent, client)]


def _rule_findings(rule: HeaderRule, sent: dict[str, str], client: dict[str, str]) -> list[str]:
    value = sent.get(rule.name)
    if rule.client_only:
        if value is not None and client.get(rule.name) != value:
            return [f"{rule.name} ({rule.role}) {value!r} added; the client sent {client.get(rule.name)!r}"]
    elif value is None and rule.required:
        return [f"{rule.name} ({rule.role}) missing; the provider needs it on every request"]
    elif value is not None and rule.value is not None and not value.lower().startswith(rule.value):
        return [f"{rule.name} ({rule.role}) is {value!r}, the provider needs {rule.value!r}"]
    return []


@check(
    HEADERS,
    scope=Scope.HEADERS,
    severity=Severity.PROXY_BUG,
    upstream=True,
    why="""The request headers the provider reads (version, beta flags, content type; the backend's table in its
    facts) are what its own clients send: a missing `anthropic-version` is answered 400, and a fixed
    `anthropic-beta` added to every request switches on behaviour no client asked for (issue 21, seen in a
    gateway). A beta flag may only travel when the client sent it. Checked on every run: the baseline through
    the backend's own SDK is held to the same table, so a table the SDK itself breaks is a backend issue, not a
    proxy bug.""",
)
def _headers(subject: Subject) -> Iterable[Result]:
    table = _table(subject)
    if table is None or not table.headers:
        return []
    sent = {k.lower(): v for k, v in subject.upstream_headers.items()}
    client = {k.lower(): v for k, v in subject.frontend_headers.items()}
    findings = header_findings(table, sent, client)
    found = [message for read, message in findings if read]
    ignored = [Deviation(rule=HEADERS, message=m, source=table.source) for read, m in findings if not read]
    expected = ", ".join(r.name for r in table.headers if r.read) + " as the provider's clients send them"
    return [Check(name=HEADERS, passed=not found, expected=expected, actual=found or "as needed"), *ignored]


def _body(subject: Subject) -> dict[str, Any] | None:
    _, body = subject.upstream_json  # not JSON: the codec's decode of the request says what is wrong
    return body if isinstance(body, dict) else None


def _client_fields(subject: Subject) -> set[str]:
    """Top-level fields the client itself sent in the backend's own dialect (kept verbatim by a codec of the same
    family): forwarding those is the client's choice, not the proxy's invention."""
    kept = subject.frontend_request.provider_fields if subject.frontend_request is not None else {}
    family = registry.get(subject.backend).family
    if registry.get(subject.client).family != family:
        return set()
    raw = kept.get(family) or kept.get(subject.client) or {}
    return set(raw) if isinstance(raw, dict) else set()


@check(
    UNKNOWN_FIELDS,
    scope=Scope.REQUEST,
    severity=Severity.PROXY_BUG,
    upstream=True,
    why="""Every top-level field of the body sent upstream is one the backend's API documents (its table in its
    facts). An API that rejects unknown fields (Anthropic: `stream_options: Extra inputs are not permitted`)
    answers 400 to a client's `stream_options` forwarded to it: every streamed request fails against the real
    provider while a lenient replay passes. A proxy bug where the API rejects unknown fields, a deviation
    elsewhere.""",
)
def _unknown_fields(subject: Subject) -> Iterable[Result]:
    table = _table(subject)
    body = _body(subject)
    if table is None or table.fields is None or body is None:
        return []
    extra = sorted(set(body) - table.fields - _client_fields(subject))
    if not table.rejects_unknown_fields:
        return [Deviation(rule=UNKNOWN_FIELDS, message=f"undocumented field {f!r}", source=table.source) for f in extra]
    expected = "only the fields the API documents"
    return [Check(name=UNKNOWN_FIELDS, passed=not extra, expected=expected, actual=extra or "none unknown")]


@check(
    EMPTY_FIELDS,
    scope=Scope.REQUEST,
    severity=Severity.DEVIATION,
    why="""An optional field sent empty (`system: []`, `tools: []`, `stop_sequences: []`) where the provider's own
    clients leave it out. Most APIs read it as absent, some reject it (an empty tools list with a tool_choice),
    and it is never what a client of that API sends: a warning naming the field.""",
)
def _empty_fields(subject: Subject) -> Iterable[Result]:
    table = _table(subject)
    body = _body(subject)
    if table is None or table.fields is None or body is None:
        return []
    empty = sorted(k for k, v in body.items() if k != "messages" and v in ([], {}, ""))
    empty = [k for k in empty if k not in _client_fields(subject) and k not in table.always]
    return [
        Deviation(
            rule=EMPTY_FIELDS,
            message=f"{k}: {json.dumps(body[k])} sent where the field should be absent",
            source=table.source,
        )
        for k in empty
    ]
