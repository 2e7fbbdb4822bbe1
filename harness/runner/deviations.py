"""Wire deviations of a translated run: what the client received, held to the frontend protocol's wire rules
(`facts.Frontend.wire_rules`). A deviation is a warning with the rule it breaks; the engine stays
protocol-agnostic, each rule lives with its protocol."""

from __future__ import annotations

from harness.protocols import registry
from harness.proxy import Exchange
from harness.trace import Run
from harness.trace.model import Deviation


def deviations(run: Run, exchange: Exchange | None) -> list[Deviation]:
    """The deviations in the successful answer a translated run's client received; none for baselines, errors
    and bodies the harness could not read back (an unknown content encoding)."""
    if run.role != "translated" or exchange is None or exchange.truncated or exchange.frontend_status != 200:
        return []
    frontend = registry.facts(run.client).frontend
    if frontend is None or not exchange.frontend_chunks:
        return []
    body = b"".join(exchange.frontend_chunks)
    return [
        Deviation(rule=rule.name, message=finding, source=rule.source)
        for rule in frontend.wire_rules
        for finding in rule.check(body, run.stream)
    ]
