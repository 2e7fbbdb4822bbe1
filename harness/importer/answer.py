"""The recorded answer decoded to IR, and the scripted reply it becomes: what every other backend's reference answers
for the imported scenario."""

from __future__ import annotations

from dataclasses import dataclass

from harness import ir
from harness.importer.exchange import Exchange, ImportFailure, ImportUsageError
from harness.protocols import DecodeError, decode_events, registry
from harness.protocols.common import kind_for_status
from harness.protocols.reference import strip_extras
from harness.scenarios.model import Chunking, MidstreamError, ReplyError, ReplyOk
from harness.scenarios.script import full_events
from harness.stream import accumulate


@dataclass(frozen=True)
class Answer:
    """The recorded answer as our decoder reads it."""

    reply: ReplyOk | ReplyError
    """The scripted reply every reference backend answers with."""
    chunking: Chunking
    """Chunking hints the reply needs (a cut stream is scripted one delta per part, so `after_events` counts the
    same events on every backend)."""
    response: ir.Response | None
    """What arrived, as a response (before the error on a cut stream); None for an HTTP error."""
    error: ir.IRError | None
    """The HTTP error, the error inside the stream, or the stream's missing end (`malformed_stream`)."""
    notes: tuple[str, ...] = ()
    """What the reply could not say as recorded."""
    stop_inferred: bool = False
    """The recorded answer gave no stop reason; the reply (and `response`) say the one its content means."""


def _usage_at_start(events: list[ir.StreamEvent]) -> ir.Usage:
    for event in events:
        if isinstance(event, ir.MessageStart):
            return event.usage or ir.Usage()
    return ir.Usage()


def _one_delta_per_part(content: list[ir.OutputPart]) -> Chunking:
    longest = 1
    for part in content:
        if isinstance(part, ir.TextPart | ir.ThinkingPart):
            longest = max(longest, len(part.text))
        elif isinstance(part, ir.ToolCallPart):
            longest = max(longest, len(part.arguments_raw))
    return Chunking(text_chunk_size=longest, arguments_chunk_size=longest)


def inferred_stop(content: list[ir.OutputPart]) -> ir.StopReason:
    """The stop reason an answer that gives none must have meant: `tool_use` after a tool call, else `end_turn`."""
    called = any(isinstance(p, ir.ToolCallPart) for p in content)
    return ir.StopReason(kind="tool_use" if called else "end_turn")


def _without_stop_reason(base: ReplyOk, response: ir.Response) -> Answer:
    # The stream ended with its terminal marker but never said why it stopped (an OpenAI-compatible stream with no
    # finish_reason). Its content is complete; a client of another protocol needs a stop reason, so the reply
    # says the one the content means, and a translating proxy has to say it too.
    stop = inferred_stop(response.content)
    note = f"the stream ends without a stop reason: the reply says {stop.kind}, which its content means"
    completed = response.model_copy(update={"stop_reason": stop})
    return Answer(base.model_copy(update={"stop_reason": stop}), Chunking(), completed, None, (note,), True)


def _stream_answer(exchange: Exchange, *, truncated: bool) -> Answer:
    codec = registry.get(exchange.protocol)
    events = strip_extras(decode_events(codec, exchange.chunks))
    folded = accumulate(events)
    response = folded.response
    base = ReplyOk(
        id=response.id,
        content=response.content,
        stop_reason=response.stop_reason or inferred_stop(response.content),
        usage=response.usage,
        usage_at_start=_usage_at_start(events),
    )
    if folded.error is None:
        if response.stop_reason is not None:
            return Answer(base, Chunking(), response, None)
        return _without_stop_reason(base, response)
    chunking = _one_delta_per_part(response.content)
    cut = len(full_events(base, chunking)) - 1  # every event but the terminal one
    if folded.error.kind is ir.ErrorKind.MALFORMED_STREAM:
        if not truncated:
            raise ImportUsageError(
                f"{exchange.origin.label}: the recorded stream stops before its end ({folded.error.message}): the "
                "capture is incomplete, or the provider cut the stream; for a case of a cut stream pass --truncated"
            )
        return Answer(base.model_copy(update={"truncate_after": cut}), chunking, response, folded.error)
    reply = base.model_copy(update={"midstream_error": MidstreamError(after_events=cut, error=folded.error)})
    return Answer(reply, chunking, response, folded.error)


def _error_answer(error: ir.IRError, exchange: Exchange) -> Answer:
    if kind_for_status(exchange.status, error.message) is error.kind:
        return Answer(ReplyError(error=error, status=exchange.status), Chunking(), None, error)
    # The provider says the kind in its body, not by its status (Gemini rejects a bad key with 400, OpenAI an
    # unknown model of the Responses API with 400): every other protocol answers that kind with its own status.
    note = (
        f"the recorded status {exchange.status} is not the one its error kind ({error.kind.value}) usually has: "
        "each reference answers with its own status for the kind"
    )
    return Answer(ReplyError(error=error), Chunking(), None, error, (note,))


def decode_answer(exchange: Exchange, *, truncated: bool = False) -> Answer:
    """The recorded answer decoded with its protocol's decoder, as a scripted reply. A stream that stops before
    its end is an incomplete capture (ImportUsageError) unless `truncated` says the provider really cut it: then
    the reply cuts the stream where the recording stops."""
    codec = registry.get(exchange.protocol)
    try:
        if exchange.status >= 400:
            return _error_answer(codec.decode_error(exchange.status, exchange.headers, exchange.body), exchange)
        if exchange.stream:
            return _stream_answer(exchange, truncated=truncated)
        response = codec.decode_response(exchange.body)
    except DecodeError as exc:
        where = f"{exchange.origin.label}: the {exchange.protocol} decoder"
        raise ImportFailure(f"{where} cannot read the answer: {exc}") from exc
    stop = response.stop_reason or inferred_stop(response.content)
    reply = ReplyOk(id=response.id, content=response.content, stop_reason=stop, usage=response.usage)
    if response.stop_reason is None:
        return _without_stop_reason(reply, response)
    return Answer(reply, Chunking(), response, None)
