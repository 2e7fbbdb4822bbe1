"""What the backend's own SDK sees of the recorded answer, and the expectations taken from it.

The backend family's SDK driver sends the recorded request through its official SDK to an httpx2 MockTransport
that answers with the recorded bytes at their recorded boundaries, so the expectations are what a real client
of that provider saw, not what our decoder believes. Where the SDK cannot read the recorded wire (the answer
does not have the shape it parses, or it cannot express the request), the decoder's view stands in and the
import says why.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx2

from harness import drivers, ir
from harness.drivers.base import SdkResult, UnsupportedRequest, neutral_for_status
from harness.importer.answer import Answer
from harness.importer.exchange import Exchange
from harness.protocols import registry
from harness.protocols.common import KIND_STATUS
from harness.rig.clients import sdk_client
from harness.scenarios.checks import Seen, flatten
from harness.scenarios.model import ErrorExpectation, Expectations, ReplyOk, SdkException, ToolCallExpectation

RECORDED_BASE = "http://recorded.invalid"
"""Where the SDK believes it sends the recorded request; the mock transport answers every URL."""
_ACCEPTED_STOPS: dict[ir.StopKind, list[ir.StopKind]] = {
    "stop_sequence": ["stop_sequence", "end_turn"],  # protocols without the kind report a matched stop as end_turn
    "refusal": ["refusal", "content_filter"],
    "content_filter": ["content_filter", "refusal"],
}
"""Stop kinds another protocol may have to report in place of the recorded one (it has no such kind)."""


@dataclass(frozen=True)
class View:
    """What a client saw of the recorded answer, and whose view it is."""

    result: SdkResult
    """The SDK's result (or the decoder's, when the SDK could not read the answer)."""
    by: str
    """`<family> SDK`, or `decoder` with the reason the SDK's view could not be used."""
    fallback: str | None = None
    """Why the SDK's view was not used; None when it was."""


class _Replay(httpx2.SyncByteStream):
    def __init__(self, chunks: tuple[bytes, ...]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


def sdk_result(exchange: Exchange, request: ir.Request) -> SdkResult:
    """The backend family's SDK driver run on `request`, answered with the recorded bytes; raises
    UnsupportedRequest when the SDK cannot express the request (or the answer has a block it has no form for)."""
    family = registry.get(exchange.protocol).family

    def answer(_: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(exchange.status, headers=exchange.headers, stream=_Replay(exchange.chunks))

    client = sdk_client(family, httpx2.MockTransport(answer), {})
    try:
        return drivers.get(family).run(request, stream=request.stream, base_url=RECORDED_BASE, http_client=client)
    finally:
        client.close()


def _decoder_result(answer: Answer) -> SdkResult:
    return SdkResult(response=answer.response, error=answer.error)


def client_view(exchange: Exchange, request: ir.Request, answer: Answer) -> View:
    """The family SDK's view of the recorded answer, or the decoder's with the reason."""
    family = registry.get(exchange.protocol).family
    try:
        result = sdk_result(exchange, request)
    except UnsupportedRequest as exc:
        why = f"the {family} SDK cannot take this exchange: {exc}"
        return View(_decoder_result(answer), "decoder", why)
    seen_error = flatten(result).error
    if answer.stop_inferred and seen_error is not None and seen_error.kind is ir.ErrorKind.MALFORMED_STREAM:
        why = (
            f"the {family} SDK sees the answer end without a stop reason; the expectations are its content and the "
            f"stop reason it means ({answer.reply.stop_reason.kind if isinstance(answer.reply, ReplyOk) else ''})"
        )
        return View(_decoder_result(answer), "decoder", why)
    decoded_cleanly = answer.error is None or answer.error.kind is not ir.ErrorKind.MALFORMED_STREAM
    if result.exception is SdkException.DECODE_ERROR and decoded_cleanly:
        message = result.error.message if result.error else "no detail"
        why = f"the {family} SDK cannot parse the recorded answer ({message}); the {exchange.protocol} decoder can"
        return View(_decoder_result(answer), "decoder", why)
    return View(result, f"{family} SDK")


def _kinds(*kinds: ir.ErrorKind | None) -> ir.ErrorKind | list[ir.ErrorKind]:
    found = list(dict.fromkeys(k for k in kinds if k is not None))
    return found[0] if len(found) == 1 else found


def _statuses_of(kind: ir.ErrorKind) -> list[int]:
    """The statuses protocols answer `kind` with: the usual one, then each protocol's own (Bedrock says `auth`
    with 403, for one)."""
    probe = ir.IRError.of(kind, "probe")
    own = sorted({registry.get(name).encode_error(probe).status for name in registry.names()} - {KIND_STATUS[kind]})
    return [KIND_STATUS[kind], *own]


def _error_expectation(seen: Seen, result: SdkResult, answer: Answer, status: int) -> ErrorExpectation:
    error = seen.error
    assert error is not None
    decoded = answer.error.kind if answer.error else None
    if status < 400:
        # Inside a 200 stream: a cut stream reaches a client as a stream with no end, or as the proxy's
        # explicit mid-stream error; an error event as that error, raised by the SDK as a stream error.
        if ir.ErrorKind.MALFORMED_STREAM in (error.kind, decoded):
            return ErrorExpectation(kind=[ir.ErrorKind.MALFORMED_STREAM, ir.ErrorKind.SERVER])
        return ErrorExpectation(kind=_kinds(error.kind, decoded), exception=result.exception)
    # Each protocol answers an error kind with its own status (a key Gemini rejects with 400 is a 401 for an
    # OpenAI client, a 403 for a Bedrock one), so the recorded status and every protocol's own for the kind are
    # accepted, and the SDK's exception is checked only where they all agree on it.
    statuses = list(dict.fromkeys([status, *(_statuses_of(decoded) if decoded else [])]))
    same_exception = len({neutral_for_status(s) for s in statuses}) == 1
    return ErrorExpectation(
        kind=_kinds(error.kind, decoded),
        status=statuses[0] if len(statuses) == 1 else statuses,
        exception=result.exception if same_exception else None,
    )


def expectations(view: View, answer: Answer, status: int, *, thinking: bool) -> Expectations:
    """The checks the imported scenario makes: what the client saw of the recorded answer. Thinking is checked
    only where the request asked for it (`thinking`): a model that thinks unasked (DeepSeek's reasoner, gpt-oss)
    does not make thinking a capability every party of the case needs; the diff still compares it."""
    seen = flatten(view.result)
    if seen.error is not None:
        error = _error_expectation(seen, view.result, answer, status)
        partial = [seen.text] if seen.text else []
        return Expectations(error=error, text_contains=partial)
    stop = seen.stop_reason.kind if seen.stop_reason else None
    usage = seen.usage
    return Expectations(
        stop_reason=_ACCEPTED_STOPS.get(stop, stop) if stop else None,
        text_equals=seen.text,
        tool_calls=[ToolCallExpectation(name=name, arguments=args) for name, args in seen.tool_calls],
        usage_present=(usage.input_tokens or 0) > 0 and (usage.output_tokens or 0) > 0,
        thinking_present=thinking and any(text for text, _ in seen.thinking),
        thinking_signature=thinking and any(signature for _, signature in seen.thinking),
    )
