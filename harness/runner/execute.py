"""One run: an SDK driver sends a scenario's request through the proxy; the trace records what every layer saw."""

from __future__ import annotations

import codecs
import dataclasses
import functools
import itertools
import json
import operator
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness import checks as registered
from harness import drivers, ir
from harness.diff.request_rules import system_folded
from harness.drivers.base import (
    SdkResult,
    SocketDriver,
    SocketRefused,
    SocketRun,
    UnexpressibleAnswer,
    UnsupportedRequest,
)
from harness.drivers.chain import can_chain, chain_driver
from harness.ir import Capability
from harness.protocols import HttpRequest, registry
from harness.proxy import Exchange
from harness.record.scrub import redact_text
from harness.rig import Environment, Session
from harness.runner import crash, socket_run, wire_checks
from harness.runner.deviations import split
from harness.scenarios.model import Scenario, SdkException
from harness.trace import Run
from harness.trace.model import Check, Deviation, RunTrace, SdkView, Timings, Wire

REDACTED_KEY = "[REDACTED: planted upstream key]"
ANSWER_EXCERPT = 160
"""Characters of a proxy's own answer quoted in a reason."""
UNEXPRESSIBLE_ANSWER = registered.UNEXPRESSIBLE_ANSWER
"""Name of the check that fails when the proxy's answer holds something the IR has no form for."""
WIRE_EXCERPT = 8 * 1024 * 1024
"""Bytes of raw wire kept per side in a trace: the whole wire of any real exchange (traces are gzip-compressed,
and a clean pass keeps none by default), so a long stream can be re-checked from the report; only an answer past
8 MiB is cut, and `truncated` says so."""


class Unsupported(Exception):
    """The SDK cannot express the scenario's request."""


@dataclass(frozen=True)
class Unexpressed:
    """A run that did not happen because its SDK cannot express the scenario's request."""

    reason: str
    """Which SDK, and what it cannot express."""


RunResult = RunTrace | Unexpressed
"""What a planned run comes to."""


def _excerpt(chunks: tuple[bytes, ...], limit: int = WIRE_EXCERPT) -> tuple[str, list[int], bool]:
    """The first `limit` bytes as text, where each chunk begins in it, and whether it was cut. Decoded
    incrementally, so a character split between chunks belongs to the chunk that completes it."""
    if chunks and sum(map(len, chunks)) < limit:
        texts = _whole_texts(chunks)
        if texts is not None:
            return "".join(texts), list(itertools.accumulate((len(t) for t in texts[:-1]), initial=0)), False
        whole = b"".join(chunks)
        if len(whole) <= SMALL_CHUNKS * len(chunks):  # a character split between many small chunks
            try:
                return whole.decode("utf-8"), _char_offsets(chunks, whole), False
            except UnicodeDecodeError:
                pass  # bytes to replace: decoded chunk by chunk below
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    parts: list[str] = []
    offsets: list[int] = []
    size = length = 0
    for chunk in chunks:
        if size >= limit:
            break
        piece = chunk[: limit - size]
        size += len(piece)
        offsets.append(length)
        text = decoder.decode(piece, final=size >= limit)
        parts.append(text)
        length += len(text)
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts), offsets, sum(len(c) for c in chunks) > limit


SMALL_CHUNKS = 64
"""Mean chunk size (bytes) up to which a wire's excerpt is decoded whole and its chunks' offsets counted, rather
than decoded chunk by chunk (faster for many small chunks, slower for a few large ones)."""
_CONTINUATION = bytes(range(0x80, 0xC0))
"""The bytes that continue a UTF-8 character (every other byte begins one)."""
_BEGINS = bytes(0 if 0x80 <= b < 0xC0 else 1 for b in range(256))
"""Per byte value: 1 where a byte begins a UTF-8 character, 0 where it continues one."""


def _char_offsets(chunks: tuple[bytes, ...], whole: bytes) -> list[int]:
    """Where each chunk begins in the text of `whole` (their valid UTF-8 joined), a character split between chunks
    belonging to the chunk that completes it: the characters begun before the chunk's first byte, less the one
    that byte continues."""
    begins = map(len, map(bytes.translate, chunks[:-1], itertools.repeat(None), itertools.repeat(_CONTINUATION)))
    begun = itertools.accumulate(begins, initial=0)
    at = itertools.accumulate(map(len, chunks[:-1]), initial=0)
    flags = whole.translate(_BEGINS) + b"\x01"  # the end of the text begins no character
    return [n - 1 + flags[b] for n, b in zip(begun, at, strict=True)]


def _whole_texts(chunks: tuple[bytes, ...]) -> list[str] | None:
    """Each chunk as text when every one is valid UTF-8 on its own (no character split between two, nothing to
    replace): what the incremental decoder makes of them, chunk by chunk; else None."""
    try:
        return [chunk.decode("utf-8") for chunk in chunks]
    except UnicodeDecodeError:
        return None


def _ms(seconds: tuple[float, ...]) -> list[float]:
    """Each time in milliseconds, rounded to 3 places (`round(s * 1000, 3)`, mapped at C speed: a time a chunk)."""
    return list(map(round, map(operator.mul, seconds, itertools.repeat(1000)), itertools.repeat(3)))


def _wire(exchange: Exchange | None, run: Run) -> Wire:
    cassette = run.recording.relative_path
    if exchange is None:
        return Wire(cassette=cassette, interaction=0)
    upstream, up_offsets, cut_up = _excerpt(exchange.upstream_chunks)
    frontend, front_offsets, cut_front = _excerpt(exchange.frontend_chunks)
    return Wire(
        cassette=cassette,
        interaction=0,
        upstream=upstream,
        frontend=frontend,
        upstream_chunks=len(exchange.upstream_chunks),
        frontend_chunks=len(exchange.frontend_chunks),
        truncated=cut_up or cut_front or exchange.truncated,
        upstream_offsets=up_offsets,
        frontend_offsets=front_offsets,
        upstream_times_ms=_ms(exchange.upstream_chunk_times),
        frontend_times_ms=_ms(exchange.frontend_chunk_times),
        event_chunks=list(exchange.event_chunks) if exchange.upstream_events else [],
        frontend_events=list(exchange.frontend_chunk_events) if exchange.frontend_chunk_times else [],
        answer_headers={k.lower(): v for k, v in exchange.frontend_response_headers.items()},
        upstream_headers={k.lower(): v for k, v in exchange.upstream_headers.items()},
    )


def _as_sent(exchange: Exchange) -> ir.Request:
    """The upstream request for the field checks, with an exact system-prompt fold undone (as the diff does)."""
    upstream = exchange.upstream_request
    assert upstream is not None
    if exchange.frontend_request is None or not exchange.frontend_request.system:
        return upstream  # no system prompt the proxy could have folded
    _, unfolded = system_folded(ir.to_json(exchange.frontend_request), ir.to_json(upstream), owned=True)
    return ir.Request.model_validate(unfolded)


def in_effect(exchange: Exchange | None, scenario: Scenario, run: Run) -> Exchange | None:
    """The exchange of a stored-response chain's last call with the client's request as it stands in effect when
    the proxy sent no continuation upstream: the earlier conversation (as scripted) before the new input the
    client sent. The request diff then holds the proxy to sending the whole conversation to a backend that keeps
    no state; a request that continued a stored response upstream is compared as sent."""
    if exchange is None or exchange.frontend_request is None or not scenario.steps or not can_chain(run.client):
        return exchange
    stored = registry.facts(run.backend).stored_responses
    if stored is not None and stored.continued(HttpRequest("POST", "/", {}, {}, exchange.upstream_body)) is not None:
        return exchange
    sent = exchange.frontend_request
    earlier = scenario.conversation()[: -len(scenario.request.messages)]
    if len(sent.messages) != len(scenario.request.messages):
        return exchange  # not the chain's last call (its new input only): compared as sent
    whole = sent.model_copy(update={"messages": [*earlier, *sent.messages]})
    return dataclasses.replace(exchange, frontend_request=whole)


def _sdk_view(result: SdkResult, crashed: BaseException | None = None) -> SdkView:
    if crashed is not None:
        return SdkView(exception=type(crashed).__name__, crash=f"{type(crashed).__name__}: {crashed}")
    return SdkView(
        response=result.response,
        events=result.events,
        error=result.error,
        exception=result.exception.value if result.exception else None,
    )


@functools.lru_cache(maxsize=256)
def _carried(sdk: frozenset[str], client: frozenset[str], backend: frozenset[str]) -> frozenset[Capability]:
    """The capabilities all three carry (a pair of protocols and an SDK meet again in every scenario)."""
    return frozenset(Capability(c) for c in sdk & client & backend)


def subject(scenario: Scenario, result: SdkResult, exchange: Exchange | None, run: Run) -> registered.Subject:
    """What the registered checks look at in one run."""
    # A check on a value the SDK cannot surface, or a protocol on the way cannot carry, is left out.
    carried = _carried(
        frozenset(drivers.get(run.client).capabilities),
        frozenset(registry.get(run.client).capabilities),
        frozenset(registry.get(run.backend).capabilities),
    )
    wire: dict[str, Any] = {}
    if exchange is not None:
        wire = {
            "frontend_request": exchange.frontend_request,
            "upstream_request": _as_sent(exchange) if exchange.upstream_request is not None else None,
            "upstream_body": exchange.upstream_body,
            "upstream_headers": exchange.upstream_headers,
            "frontend_headers": exchange.frontend_headers,
            "frontend_response_headers": exchange.frontend_response_headers,
            "frontend_status": exchange.frontend_status,
            "frontend_chunks": exchange.frontend_chunks,
            "truncated": exchange.truncated,
            "upstream_text_chunks": exchange.upstream_text_chunks,
            "frontend_text_chunks": exchange.frontend_text_chunks,
        }
    return registered.Subject(
        role=run.role,
        client=run.client,
        backend=run.backend,
        stream=run.stream,
        scenario=scenario,
        result=result,
        capabilities=carried,
        **wire,
    )


def _checks(
    scenario: Scenario, result: SdkResult, exchange: Exchange | None, run: Run
) -> tuple[list[Check], list[Deviation]]:
    """Every registered check that applies to the run (`harness.checks`): failed checks and deviations."""
    return split(registered.run_checks(subject(scenario, result, exchange, run)))


@dataclass
class _Outcome:
    """What the SDK call came to: a result, or what it raised (the SDK's crash or the harness's)."""

    result: SdkResult
    crash: BaseException | None = None
    unexpressible: str | None = None
    """Why the proxy's answer has no IR form (translated runs only; see `UnexpressibleAnswer`)."""
    socket: SocketRun | None = None
    """A WebSocket-mode run's turn: its frames are the run's frontend wire (`socket_run`)."""
    refused: str | None = None
    """Why the proxy would not take the WebSocket upgrade (built-in proxy: a harness error)."""


def _socket_call(driver: drivers.Driver, run: Run, request: ir.Request, session: Session, timeout: float) -> _Outcome:
    """One WebSocket-mode turn. A system under test that answers the upgrade with an HTTP status does not serve
    WebSocket mode there: the case is unsupported (declared), never a proxy bug nor a pass."""
    if not isinstance(driver, SocketDriver):
        raise Unsupported(f"{run.client} SDK: no WebSocket mode")
    try:
        turn = driver.run_socket(
            request, base_url=session.base_url, headers=session.headers, timeout=timeout, versioned=session.versioned
        )
    except SocketRefused as exc:
        if session.replay_url is not None:
            raise Unsupported(f"the system under test does not serve WebSocket mode: {exc}") from exc
        return _Outcome(SdkResult(), refused=str(exc))
    if session.capture is not None:
        socket_run.fill(session.capture, turn, run.client)
    return _Outcome(turn.result, socket=turn)


def _call(driver: drivers.Driver, run: Run, scenario: Scenario, session: Session, timeout: float) -> _Outcome:
    base_url, http = session.base_url, session.http
    try:
        if scenario.kind == "models_list":
            return _Outcome(driver.list_models(base_url=base_url, http_client=http))
        chain = chain_driver(run.client) if scenario.steps else None
        if chain is not None:
            result = chain(scenario, model=run.route, stream=run.stream, base_url=base_url, http_client=http)
            _refused(result, run, scenario)
            return _Outcome(result)
        request = scenario.request_for(run.route, stream=run.stream)
        if run.transport == "ws":
            return _socket_call(driver, run, request, session, timeout)
        return _Outcome(driver.run(request, stream=run.stream, base_url=base_url, http_client=http))
    except UnexpressibleAnswer as exc:
        # Only the proxy's answer: a backend that sends it makes a baseline run unexpressed, hence the case.
        if run.role != "translated":
            raise Unsupported(f"{run.client} SDK: {exc}") from exc
        return _Outcome(SdkResult(), unexpressible=str(exc))
    except UnsupportedRequest as exc:
        raise Unsupported(f"{run.client} SDK: {exc}") from exc
    except Unsupported:  # a system under test without WebSocket mode (`_socket_call`), or a refused chain
        raise
    except Exception as exc:  # decided by the traceback below: the SDK crashed on the answer, or the harness did
        crash.reraise_interrupt(exc)
        return _Outcome(SdkResult(exception_class=type(exc).__name__), exc)


def _refused(result: SdkResult, run: Run, scenario: Scenario) -> None:
    """Raise Unsupported when the system under test refused a stored-response chain cleanly: a continuation got a
    4xx error envelope, every call before it was answered, and the id no server issued was refused (a proxy that
    answered that one is judged, not excused); or it refused the compaction with a 4xx error envelope."""
    error = result.error
    # A client error, or 501 Not Implemented; any other 5xx says the server failed (a client would retry it).
    if (
        run.role != "translated"
        or error is None
        or error.status is None
        or not (400 <= error.status < 500 or error.status == 501)
    ):
        return
    if result.chain and result.chain[-1].compact and result.chain[-1].error is not None:
        raise Unsupported(f"the system under test refuses compaction: HTTP {error.status} ({error.message})")
    if scenario.compact:
        return  # the call after the compaction failed: judged
    if len(result.chain) < 2 or any(call.error is not None for call in result.chain[1:]):
        return  # the first call, which continues nothing, failed: no refusal of a chain
    if any(call.unknown and call.error is None for call in result.chain):
        return
    raise Unsupported(f"the system under test refuses the stored-response chain: HTTP {error.status} ({error.message})")


def _unexpressible_check(why: str, run: Run) -> Check:
    """The failed `answer_has_ir_form` check of a translated run whose answer holds what its backend never sent."""
    expected = f"an answer the {run.client} SDK can express from what the {run.backend} backend sent"
    return Check(name=UNEXPRESSIBLE_ANSWER, passed=False, expected=expected, actual=why)


def _frontend_chunks(exchange: Exchange | None) -> tuple[bytes, ...]:
    return exchange.frontend_chunks if exchange is not None else ()


def _proxy_fault(exc: BaseException, run: Run, exchange: Exchange | None) -> bool:
    """Whether what the driver raised in a translated run is the proxy's answer at fault: the wire failed under
    the client after the proxy answered (a cut or timed-out stream), or the bytes it got are no answer of the
    client's protocol (a 200 HTML page). Such a run is judged, its bytes kept; a harness error it is not."""
    if run.role != "translated" or exchange is None or exchange.frontend_status is None:
        return False
    return crash.transport_fault(exc) or crash.unreadable(run.client, exchange.frontend_chunks, run.stream)


def _no_answer(outcome: _Outcome, exchange: Exchange | None, session: Session, run: Run) -> str | None:
    """Why the run is a harness error because nothing answered (the SDK's own text), or None. A proxy that took
    the request upstream and then never answered is judged, not excused; so is an external proxy that answered
    earlier runs and stopped answering (it died mid-run)."""
    result = outcome.result
    if result.exception not in (SdkException.CONNECTION, SdkException.TIMEOUT):
        return None
    if run.role == "translated" and session.answered_before:
        return None
    if exchange is not None and (exchange.frontend_status is not None or exchange.upstream_status is not None):
        return None
    what = result.error.message if result.error else str(result.exception)
    return f"no answer from {session.base_url} ({result.exception}: {what})"


def _unreached(run: Run, scenario: Scenario, exchange: Exchange | None, session: Session) -> tuple[str, bool] | None:
    """For a translated run through an external proxy that should have reached the backend and left nothing at
    the replay server: what the proxy answered instead, and whether it was a success (then another server
    answered in the replay server's place: a harness error whatever the case). A 2xx that is no answer of the
    client's protocol is no success: an empty body is the proxy refusing the request after sending its headers
    (MLflow's stream cut before any byte), a body its codec cannot read (open-responses-server's `null` for
    every non-streamed request) came from no upstream of that protocol, and a stream carrying an error is the
    proxy's own refusal (LiteLLM's error event over a WebSocket turn when it cannot fetch a file's URL)."""
    if session.replay_url is None or run.role != "translated" or scenario.kind == "models_list":
        return None
    if session.earlier_calls_reached:
        return None
    if exchange is None or exchange.upstream_status is not None or exchange.frontend_status is None:
        return None
    body = " ".join(b"".join(exchange.frontend_chunks)[:400].decode("utf-8", "replace").split())
    excerpt = body if len(body) <= ANSWER_EXCERPT else body[: ANSWER_EXCERPT - 1] + "\u2026"
    answer = f"HTTP {exchange.frontend_status} ({excerpt}), and nothing reached {session.replay_url}/{run.backend}"
    success = 200 <= exchange.frontend_status < 300 and crash.answered(run.client, exchange.frontend_chunks, run.stream)
    return answer, success


def run_once(env: Environment, run: Run, scenario: Scenario, case_id: str) -> RunTrace:
    """Run one of the three runs of a case (first needed by case `case_id`) and write down its trace. Raises
    Unsupported when the SDK cannot express the request."""
    driver = drivers.get(run.client)
    started = time.perf_counter()
    with env.session(run) as session:
        outcome = _call(driver, run, scenario, session, env.timeout)
    total_ms = (time.perf_counter() - started) * 1000
    exchange = session.exchange
    if outcome.socket is not None and session.capture is None:
        exchange = socket_run.with_frames(exchange, outcome.socket, run)
    exchange = in_effect(exchange, scenario, run)
    result = outcome.result
    checks, deviations = _checks(scenario, result, exchange, run)
    if outcome.crash is not None:
        checks = []  # what the SDK saw is nothing to judge: the crash is the finding
    if outcome.unexpressible is not None:
        checks = [_unexpressible_check(outcome.unexpressible, run)]
    error: str | None = None
    if outcome.crash is not None:
        exc = outcome.crash
        if (
            crash.raised_in_sdk(exc, run.client)
            and exchange is not None
            and crash.recording_at_fault(run.role, exchange.upstream_chunks, exchange.frontend_chunks)
        ):
            error = (
                f"the recording is unreadable by its own SDK: the {run.client} SDK crashed on cassette "
                f"{run.recording.relative_path} as recorded ({type(exc).__name__}: {exc}); re-record it"
            )
        elif crash.raised_in_sdk(exc, run.client) or _proxy_fault(exc, run, exchange):
            checks.append(crash.crash_check(exc, run.client, _frontend_chunks(exchange), run.stream))
        else:
            error = f"harness bug: {type(exc).__name__}: {exc} (at {crash.where(exc) or 'an unknown place'})"
    if outcome.refused is not None:
        error = f"the proxy refused the WebSocket upgrade of a frontend that declares WebSocket mode: {outcome.refused}"
    error = error or _no_answer(outcome, exchange, session, run)
    unreached = _unreached(run, scenario, exchange, session)
    if unreached is not None and unreached[1]:
        error = error or (
            f"the system under test answered {unreached[0]}: another server answered in the replay server's "
            f"place; point its {run.backend} upstream at {session.replay_url}/{run.backend}"
        )
    grammar = [str(v) for v in exchange.violations] if exchange else []
    failed = [c for c in checks if not c.passed]
    # `Timings.first_byte` is already an offset from the request's arrival (`start` is wall-clock time).
    first_byte = exchange.timings.first_byte * 1000 if exchange and exchange.timings.first_byte is not None else None
    first_token = exchange.timings.first_token if exchange else None  # measured at the client: --sut runs
    trace = RunTrace.of(
        run,
        case_id,
        trace_id=exchange.trace_id if exchange else None,
        frontend_request=exchange.frontend_request if exchange else None,
        upstream_request=exchange.upstream_request if exchange else None,
        upstream_status=exchange.upstream_status if exchange else None,
        upstream_events=list(exchange.upstream_events) if exchange and exchange.upstream_events else None,
        upstream_response=exchange.upstream_response if exchange else None,
        sdk=_sdk_view(result, outcome.crash),
        checks=checks,
        grammar=grammar,
        status="error" if error else ("failed" if failed or grammar else "ok"),
        error=error,
        timings=Timings(
            total_ms=total_ms,
            first_byte_ms=first_byte,
            first_token_ms=first_token * 1000 if first_token is not None else None,
        ),
        wire=_wire(exchange, run),
        deviations=deviations,
        unreached=unreached[0] if unreached is not None and not unreached[1] else None,
    )
    if env.sut is not None and env.sut.client.key:  # the client's own key is no leak, and never written either
        text = trace.model_dump_json()
        if env.sut.client.key in text:
            trace = RunTrace.model_validate_json(env.sut.client.redact(text))
    # The literal --sut-header values (a placeholder one is filled per run with harness URLs, no secret) are masked.
    values = [h.value for h in env.sut.client.headers if "{" not in h.value] if env.sut is not None else []
    return without_secrets(trace, env.planted_key, values)


def without_secrets(trace: RunTrace, planted: str, values: Sequence[str] = ()) -> RunTrace:
    """The trace with a failed `secret_leak` check naming where the planted upstream key (or any real-looking
    key) showed up, and the planted key, every real-looking key, every literal `values` (--sut-header values) and
    every URL's credentials masked (`redact_text`), so that no trace or report ever carries them."""
    text = trace.model_dump_json()
    if not wire_checks.leaks({"trace": text}, planted):
        clean = redact_text(text, values, keys=False)  # no key, but maybe an echoed header value or a URL's password
        return trace if clean == text else RunTrace.model_validate_json(clean)
    data = json.loads(text)
    parts = {name: json.dumps(value) for name, value in data.items() if name != "checks"}
    where = wire_checks.leaks(parts, planted)
    text = redact_text(text.replace(planted, REDACTED_KEY), values)
    if not where:  # a key-shaped value only in a check's expectation is not a leak (and is masked all the same)
        return RunTrace.model_validate_json(text)
    redacted = RunTrace.model_validate_json(text)
    checks = [*redacted.checks, wire_checks.leak_check(where)]
    return redacted.model_copy(update={"checks": checks, "status": "failed"})


def error_trace(run: Run, case_id: str, error: str) -> RunTrace:
    """The trace of a run the harness could not complete, and why."""
    return RunTrace.of(run, case_id, status="error", error=error)
