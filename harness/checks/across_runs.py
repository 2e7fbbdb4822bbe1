"""Checks that compare a case's runs, which the judge makes (it holds all three: `compare`): the headers of the
answer the translated run's client received against the provider's own answers (the baselines replay them), the
headers the proxy sent upstream against those the backend's own SDK sends, and which spec warnings are the
proxy's (`beyond_baseline`). The per-run header checks (the provider's table, the answer's media type) are
`harness.checks.upstream` and `harness.checks.answer`."""

from __future__ import annotations

from collections.abc import Mapping

from harness.checks.registry import Result, Scope, Severity, declare
from harness.checks.spec import ANSWER_SPEC, UPSTREAM_SPEC
from harness.protocols import registry
from harness.protocols.common import retry_after
from harness.trace.model import Check, Deviation, RunTrace

RETRY_AFTER = declare(
    "answer.retry_after",
    scope=Scope.HEADERS,
    severity=Severity.PROXY_BUG,
    why="""When the upstream answered an error with `Retry-After` (or `retry-after-ms`), and the client's SDK
    reads that header (`facts.Frontend.reads_retry_after`), the client receives it with the upstream's delay. The
    openai and anthropic SDKs wait exactly that long before retrying and back off blindly without it, so a lost
    header turns one rate limit into a burst of retries that each fail. Read from the headers, so it holds for
    clients whose SDK does not show the delay (the `error.retry_after` scenario check judges the ones that do).
    A successful answer's `Retry-After` (Together sends one on its 200s) is nobody's to keep: no SDK reads it.""",
)
REQUEST_ID = declare(
    "answer.request_id",
    scope=Scope.HEADERS,
    severity=Severity.DEVIATION,
    why="""The client's provider names every answer's request in a header (`request-id`, `x-request-id`,
    `x-amzn-requestid`: `facts.Frontend.request_id_header`), the SDKs show it (`response._request_id`) and
    support asks for it. A proxy that sends none leaves its users nothing to quote: a warning.""",
)
HEADER_VALUES = declare(
    "upstream.header_values",
    scope=Scope.HEADERS,
    severity=Severity.DEVIATION,
    why="""The headers the backend's provider reads without a fixed value (its table: the API version) carry the
    values its own SDK sends; a fixed value, such as the content type, is `upstream.headers`'s to judge. A client
    of the backend's own API chose its version: a proxy that sends another `anthropic-version` selects other
    behaviour at the provider (2026-10-21 rejects `temperature`, which 2023-06-01 reads), a warning naming both
    values. A proxy translating from another API pins the version its body is written for, so the version is
    compared only when the client speaks the backend's API. Beta flags follow the client and are judged per run
    (`upstream.headers`).""",
)


def _retry_after(client: str, base_b: RunTrace, translated: RunTrace) -> list[Result]:
    frontend = registry.facts(client).frontend
    upstream = retry_after(base_b.wire.answer_headers)
    if frontend is None or not frontend.reads_retry_after or upstream is None or not translated.wire.answer_headers:
        return []
    if base_b.upstream_status is not None and base_b.upstream_status < 400:
        return []  # on a success no SDK waits or retries: Together sends `Retry-After: 2` on its 200s
    sent = retry_after(translated.wire.answer_headers)
    ok = sent is not None and upstream <= sent < upstream + 1  # whole seconds, rounded up, are the same delay
    expected = f"Retry-After of {upstream:g} s, as the upstream said"
    return [Check(name=RETRY_AFTER, passed=ok, expected=expected, actual=f"{sent:g} s" if sent is not None else None)]


def _request_id(client: str, base_f: RunTrace, translated: RunTrace) -> list[Result]:
    frontend = registry.facts(client).frontend
    name = frontend.request_id_header if frontend is not None else None
    if name is None or name not in base_f.wire.answer_headers or not translated.wire.answer_headers:
        return []
    if name in translated.wire.answer_headers:
        return []
    return [Deviation(rule=REQUEST_ID, message=f"no {name} header; the {client} provider sends one on every answer")]


def _header_values(client: str, backend: str, base_b: Mapping[str, str], sent: Mapping[str, str]) -> list[Result]:
    table = registry.facts(backend).upstream_request
    if table is None or not base_b or not sent:
        return []
    # A version is the client's to choose when it speaks the backend's API; a proxy translating from another
    # API pins the version its encoder writes for (the body it sends is that version's).
    same_api = registry.get(client).family == registry.get(backend).family
    found: list[Result] = []
    for rule in table.headers:
        ours, theirs = sent.get(rule.name), base_b.get(rule.name)
        if rule.client_only or rule.value is not None or ours is None or theirs is None:
            continue  # a missing header, a beta flag and a fixed value are `upstream.headers`'s to judge
        if rule.role == "version" and not same_api:
            continue
        if ours != theirs:
            message = f"{rule.name} ({rule.role}) {ours!r}; the {backend} SDK sends {theirs!r}"
            found.append(Deviation(rule=HEADER_VALUES, message=message, source=table.source))
    return found


WARNINGS_BASELINE = {f"{ANSWER_SPEC}_warnings": "baseline_frontend", f"{UPSTREAM_SPEC}_warnings": "baseline_backend"}
"""Which baseline holds the provider's own side of each spec warning: its answer, or its SDK's request."""


def beyond_baseline(runs: Mapping[str, RunTrace]) -> list[Deviation]:
    """The translated run's deviations without the spec warnings its baseline shares (the real API's own
    answer, or its SDK's own request, has the same finding)."""
    own = {role: {(d.rule, d.message) for d in runs[role].deviations} for role in set(WARNINGS_BASELINE.values())}
    return [
        d
        for d in runs["translated"].deviations
        if d.rule not in WARNINGS_BASELINE or (d.rule, d.message) not in own[WARNINGS_BASELINE[d.rule]]
    ]


def compare(client: str, backend: str, runs: Mapping[str, RunTrace]) -> list[Result]:
    """The cross-run header checks of one case (nothing when a run is missing or kept no headers)."""
    base_f, base_b, translated = runs["baseline_frontend"], runs["baseline_backend"], runs["translated"]
    return [
        *_retry_after(client, base_b, translated),
        *_request_id(client, base_f, translated),
        *_header_values(client, backend, base_b.wire.upstream_headers, translated.wire.upstream_headers),
    ]
