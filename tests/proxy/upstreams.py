"""Scripted upstreams for proxy tests: each provider's wire produced by that protocol's own encoders.

`ScriptedUpstream(protocol, reply)` is an httpx2 MockTransport handler. `reply` is an IR `Response` (sent as a
stream or a whole body, as the request asks), an IR `IRError` (sent as the protocol's error), or a function
of the decoded IR request returning either. Streams keep one event per chunk, can pause on a gate before the
last chunk, can break off with a transport error, and note when the proxy closes them.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import httpx2

from harness import ir
from harness.protocols import Codec, HttpRequest, registry
from harness.proxy import ModelRoute, ProxyConfig, UpstreamConfig
from tests.strategies import events_for

UPSTREAM_URL = "http://upstream.test"
KEY_ENV = "PROXY_TEST_UPSTREAM_KEY"
KEY_VALUE = "sk-upstream-secret-0123456789"

Reply = ir.Response | ir.IRError
ReplyFn = Callable[[ir.Request], Reply]


def config(*models: tuple[str, str, str, str], base_url: str = UPSTREAM_URL, **kw: object) -> ProxyConfig:
    """A config of (frontend model, mode, upstream protocol, upstream model) entries, one upstream each."""
    routes = []
    for name, mode, protocol, upstream_model in models:
        upstream = UpstreamConfig(name=f"{protocol}-up", protocol=protocol, base_url=base_url, api_key_env=KEY_ENV)
        routes.append(ModelRoute(name=name, mode=mode, upstream=upstream, upstream_model=upstream_model))
    return ProxyConfig(models=tuple(routes), **kw)


class ChunkStream(httpx2.AsyncByteStream):
    """Body chunks sent one by one; optional gate before the last one, optional failure, close noted."""

    def __init__(
        self,
        chunks: list[bytes],
        *,
        gate: asyncio.Event | None = None,
        fail_after: int | None = None,
        delay: float = 0.0,
    ) -> None:
        self.chunks = chunks
        self.gate = gate
        self.fail_after = fail_after
        self.delay = delay
        self.sent = 0
        self.closed = asyncio.Event()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for i, chunk in enumerate(self.chunks):
            if self.fail_after is not None and i == self.fail_after:
                raise httpx2.ReadError("upstream connection reset")
            if self.gate is not None and i == len(self.chunks) - 1:
                await asyncio.wait_for(self.gate.wait(), 10)
            if self.delay:
                await asyncio.sleep(self.delay)
            self.sent += 1
            yield chunk

    async def aclose(self) -> None:
        self.closed.set()


@dataclass
class ScriptedUpstream:
    """An upstream speaking `protocol`, answering every request with `reply`."""

    protocol: str
    reply: Reply | ReplyFn
    gate: asyncio.Event | None = None
    fail_after: int | None = None
    delay: float = 0.0
    chunk_events: bool = True
    requests: list[httpx2.Request] = field(default_factory=list)
    streams: list[ChunkStream] = field(default_factory=list)

    @property
    def codec(self) -> Codec:
        """The upstream's codec."""
        return registry.get(self.protocol)

    def transport(self) -> httpx2.MockTransport:
        """The transport to give `create_app`."""
        return httpx2.MockTransport(self.handle)

    def wire_request(self, request: httpx2.Request) -> HttpRequest:
        """An httpx2 request as the codec sees it."""
        return HttpRequest.from_url(
            request.method, str(request.url.raw_path.decode()), dict(request.headers), request.content
        )

    async def handle(self, request: httpx2.Request) -> httpx2.Response:
        """Answer one request."""
        if request.method != "POST":  # e.g. the diagnostics reachability probe
            return httpx2.Response(404, text="not found")
        self.requests.append(request)
        wire = self.wire_request(request)
        decoded = self.codec.decode_request(wire)
        reply = self.reply(decoded) if callable(self.reply) else self.reply
        if isinstance(reply, ir.IRError):
            err = self.codec.encode_error(reply)
            return httpx2.Response(err.status, headers=err.headers, content=err.body)
        if not self.codec.is_stream_request(wire):
            ok = self.codec.encode_response(reply, request=decoded)
            return httpx2.Response(ok.status, headers=ok.headers, content=ok.body)
        chunks = self.stream_chunks(reply, decoded)
        stream = ChunkStream(chunks, gate=self.gate, fail_after=self.fail_after, delay=self.delay)
        self.streams.append(stream)
        return httpx2.Response(200, headers={"content-type": self.codec.stream_media_type}, stream=stream)

    def stream_chunks(self, reply: ir.Response, request: ir.Request | None = None) -> list[bytes]:
        """The encoded stream of a reply, one chunk per event (empty encodings skipped)."""
        encoder = self.codec.stream_encoder(request=request)
        chunks = [encoder.encode(e) for e in events_for(reply, chunk=4)]
        chunks.append(encoder.close())
        chunks = [c for c in chunks if c]
        return chunks if self.chunk_events else [b"".join(chunks)]


def text_reply(text: str = "Hello from upstream", **usage: int) -> ir.Response:
    """A plain text answer."""
    return ir.Response(
        id="resp_1",
        model="up-model",
        content=[ir.TextPart(text=text)],
        stop_reason=ir.StopReason(kind="end_turn"),
        usage=ir.Usage(input_tokens=usage.get("input", 11), output_tokens=usage.get("output", 7)),
    )


def tool_reply(*calls: tuple[str, str, dict[str, object]], text: str | None = None) -> ir.Response:
    """An answer with (id, name, arguments) tool calls, optionally after some text."""
    import json

    content: list[ir.OutputPart] = [ir.TextPart(text=text)] if text else []
    for call_id, name, args in calls:
        raw = json.dumps(args, separators=(",", ":"))
        content.append(ir.ToolCallPart(id=call_id, name=name, arguments=args, arguments_raw=raw))
    return ir.Response(
        id="resp_2",
        model="up-model",
        content=content,
        stop_reason=ir.StopReason(kind="tool_use"),
        usage=ir.Usage(input_tokens=20, output_tokens=9),
    )


def thinking_reply(thought: str, text: str, signature: str | None = "c2lnLTE=") -> ir.Response:
    """An answer with a thinking block then text."""
    return ir.Response(
        id="resp_3",
        model="up-model",
        content=[ir.ThinkingPart(text=thought, signature=signature), ir.TextPart(text=text)],
        stop_reason=ir.StopReason(kind="end_turn"),
        usage=ir.Usage(input_tokens=30, output_tokens=40, reasoning_tokens=25),
    )


def split(body: bytes, parts: int = 7) -> list[bytes]:
    """A body cut into `parts` uneven chunks (boundaries anywhere, also inside UTF-8 sequences)."""
    if not body:
        return [b""]
    cuts = sorted({(len(body) * (i * i + 1)) // (parts * parts + 1) for i in range(1, parts)} - {0})
    bounds = [0, *cuts, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds) if b > a]


@dataclass
class ReplayUpstream:
    """An upstream that answers with one recorded response, body cut into chunks."""

    status: int
    headers: dict[str, str]
    chunks: list[bytes]
    requests: list[httpx2.Request] = field(default_factory=list)

    def transport(self) -> httpx2.MockTransport:
        """The transport to give `create_app`."""
        return httpx2.MockTransport(self.handle)

    async def handle(self, request: httpx2.Request) -> httpx2.Response:
        """Answer with the recording."""
        self.requests.append(request)
        return httpx2.Response(self.status, headers=self.headers, stream=ChunkStream(list(self.chunks)))


# Transport-level headers of a recording that no longer describe the (already decoded) body.
TRANSPORT_HEADERS = ("content-encoding", "content-length", "transfer-encoding", "connection")


def replay_headers(headers: dict[str, str]) -> dict[str, str]:
    """Recorded response headers fit to serve the decoded recorded body again."""
    return {k: v for k, v in headers.items() if k.lower() not in TRANSPORT_HEADERS}
