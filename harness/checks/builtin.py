"""Loads every built-in check, and declares those computed elsewhere: the leak scan over a whole trace and the
client's crash (both in the runner), the answer with no IR form (the SDK driver), the event grammar (the proxy's
tap, on the upstream stream), the start-usage rule (a rule of the comparison pipeline) and each protocol's wire
rules (declared in its facts, checked by `wire_rules`)."""

from __future__ import annotations

import functools

from harness.checks.registry import REGISTRY, Scope, Severity, declare

LEAK = declare(
    "secret_leak",
    scope=Scope.WIRE,
    severity=Severity.PROXY_BUG,
    why="""The upstream key the proxy holds (planted by the runner) appears nowhere the client or the trace can
    see: not in an answer, an error message or a header. A proxy that echoes the upstream request in an error
    body hands its provider key to every client. A proxy bug whatever else happened in the case.""",
)
CLIENT_CRASH = declare(
    "client_crash",
    scope=Scope.ANSWER,
    severity=Severity.PROXY_BUG,
    why="""The client SDK raised something other than its own API error on the bytes the proxy sent (found from
    the traceback: raised in the SDK's package). The check names the event it choked on, decoded with the client
    protocol's codec. A user sees a stack trace instead of an answer or an error they can handle.""",
)
UNEXPRESSIBLE_ANSWER = declare(
    "answer_has_ir_form",
    scope=Scope.ANSWER,
    severity=Severity.PROXY_BUG,
    why="""The translated answer holds something the client's SDK cannot express and the backend never sent
    (ccr's R9: an empty annotations list turned into a web search block). Classed as unsupported it would hide a
    defect the proxy made up.""",
)
GRAMMAR = declare(
    "grammar:*",
    scope=Scope.STREAM,
    severity=Severity.PROXY_BUG,
    why="""The stream of IR events follows the event grammar (one message_start, blocks started, deltas, ended
    on their own index, one terminal event, nothing after it; rules in `harness/stream/grammar.py`). Checked by
    the proxy's tap on the upstream stream, so a backend that breaks it fails its own baseline the same way
    (a backend issue, not a proxy bug).""",
)
HARNESS_ERROR = declare(
    "harness_error:*",
    scope=Scope.WIRE,
    severity=Severity.HARNESS_ERROR,
    why="""A run could not complete: a missing or unreadable cassette, a system under test that does not answer,
    an exception in the harness's own code. Nothing was judged, so nothing may pass: the gate exits 2.""",
)
START_USAGE = declare(
    "start_usage_reported",
    scope=Scope.STREAM,
    severity=Severity.PROXY_BUG,
    divergence_key="start_input_tokens",
    why="""A stream's first event (Anthropic's message_start) reports the input tokens as a positive count when
    the real provider does: agents size their context from it before the answer ends (Claude Code's context
    meter, rig PR #2236). A translation whose upstream reports usage only at the end must estimate the count,
    not send 0. Compared as reported or not (`<reported>` against 0), never the exact figure, so it is no false
    alarm when an estimate differs from the final count (LiteLLM #41406, OpenRouter's Anthropic endpoint).""",
)


@functools.cache
def load() -> None:
    """Import the modules that register checks (in the order their results appear in a run's trace), and
    declare each protocol's wire rules under its own name."""
    from harness.checks import across_runs, answer, chain, raw_fields, scenario, spec, upstream, wire  # noqa: F401  (registration)
    from harness.protocols import registry

    for name in registry.names():
        frontend = registry.facts(name).frontend
        for rule in frontend.wire_rules if frontend is not None else ():
            if rule.name not in REGISTRY.specs and not rule.defect:  # a defect is judged by frontend_wire
                declare(
                    rule.name,
                    scope=Scope.WIRE,
                    severity=Severity.DEVIATION,
                    why=f"{(rule.check.__doc__ or '').strip()} Evidence: {rule.source}",
                )
