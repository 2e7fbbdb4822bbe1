"""The wire a real provider would send for a scenario's scripted reply, produced by that protocol's encoder.

`respond` is pure (request in, status + headers + chunks out) so the reference ASGI app, the recorder and the
tests share one code path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness import ir
from harness.backends.chunking import effective
from harness.protocols import Codec, HttpRequest
from harness.protocols.reference import body_reply, error_reply, stream_reply
from harness.scenarios.model import ReplyError, ReplyModels, ReplyOk, Scenario
from harness.scenarios.resolve import resolve, split_scenario
from harness.scenarios.script import scripted_events, scripted_response


@dataclass(frozen=True)
class WireReply:
    """A backend's answer with its chunk boundaries."""

    status: int
    """HTTP status."""
    headers: dict[str, str]
    """Response headers (lower-case names)."""
    chunks: list[bytes] = field(default_factory=list)
    """Body pieces in the order they are sent."""
    scenario: str = ""
    """Scenario that was answered."""
    stream: bool = False
    """Whether the answer is a stream."""

    @property
    def body(self) -> bytes:
        """The whole body."""
        return b"".join(self.chunks)


def _split(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def _stream(
    codec: Codec, scenario: Scenario, reply: ReplyOk, request: ir.Request, seed: str
) -> tuple[dict[str, str], list[bytes]]:
    chunking = effective(codec.name, scenario.chunking)
    events = scripted_events(reply, chunking, model=request.model)
    # A truncated stream has no terminal event, so it gets no terminal marker either: the body just stops.
    out = stream_reply(codec, request, events, seed=seed)
    chunks = out.chunks
    if chunking.transport_chunk_bytes:
        chunks = _split(b"".join(chunks), chunking.transport_chunk_bytes)
    return out.headers, chunks


def respond(codec: Codec, http_request: HttpRequest, scenarios: Sequence[Scenario]) -> WireReply:
    """Decode the request, find its scenario (named by the URL, `/_s/<scenario>/...`, or found by decoding), and
    answer its scripted reply as the protocol's provider would (`harness.protocols.reference`: the encoders plus
    the provider's own ids, fields and headers)."""
    named, path = split_scenario(http_request.path)
    http_request = dataclasses.replace(http_request, path=path)
    request = codec.decode_request(http_request)
    scenario = resolve(request, scenarios, named=named)
    stream = codec.is_stream_request(http_request)
    seed = f"{codec.name}/{scenario.id}/{'stream' if stream else 'nonstream'}"
    reply = scenario.reply
    step = scenario.step_of(request)
    if step < len(scenario.steps):  # an earlier call of a chain: its own answer, and ids of its own
        reply, seed = scenario.steps[step].reply, f"{seed}/step{step + 1}"
    if isinstance(reply, ReplyError):
        error = reply.error if reply.status is None else reply.error.model_copy(update={"status": reply.status})
        out = error_reply(codec, error, seed=seed, status=reply.status)
        return WireReply(out.status, dict(out.headers), [out.body], scenario.id, stream)
    if isinstance(reply, ReplyModels):
        raise ValueError(f"scenario {scenario.id} is a models listing; it is answered by the proxy, not a backend")
    if stream:
        headers, chunks = _stream(codec, scenario, reply, request, seed)
        return WireReply(200, headers, chunks, scenario.id, True)
    out = body_reply(codec, request, scripted_response(reply, model=request.model), seed=seed)
    return WireReply(out.status, dict(out.headers), [out.body], scenario.id, False)
