"""Proxy overheads, each as a ratio to a reference measured in the same run.

1. Per-chunk cost of translate against pass-through (in-process, streaming ASGI transport), both also shown
   against reading the same upstream directly.
2. Time to first byte through the proxy against calling the upstream directly (real loopback sockets).
3. Memory growth (resident set) while streaming a large response (default 100 MB) through each mode.

`BENCH_PROXY_MB` sets the size of the memory run; `BENCH_PROXY_CHUNKS` the chunk count of the per-chunk run.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from harness.proxy import ModelRoute, ProxyConfig, StreamingASGITransport, UpstreamConfig, create_app

KEY_ENV = "BENCH_PROXY_KEY"
CHUNKS = int(os.environ.get("BENCH_PROXY_CHUNKS", "20000"))
MEGABYTES = int(os.environ.get("BENCH_PROXY_MB", "100"))
TTFB_RUNS = 30
TAP_MAX_BYTES = 16 * 1024 * 1024


def sse(obj: object) -> bytes:
    """One OpenAI SSE event."""
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def delta(text: str) -> bytes:
    """An OpenAI chunk carrying text."""
    return sse({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]})


HEAD = sse({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant"}}]})
TAIL = sse(
    {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
)
DONE = b"data: [DONE]\n\n"


class Upstream(httpx2.AsyncByteStream):
    """An OpenAI stream of `count` copies of `chunk`, produced lazily (nothing held in memory)."""

    def __init__(self, chunk: bytes, count: int) -> None:
        self.chunk, self.count = chunk, count

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield HEAD
        for _ in range(self.count):
            yield self.chunk
        yield TAIL + DONE


def upstream_transport(chunk: bytes, count: int) -> httpx2.MockTransport:
    """An in-process OpenAI upstream."""

    async def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=Upstream(chunk, count))

    return httpx2.MockTransport(handle)


def proxy_config(base_url: str = "http://upstream.bench", tap_max_bytes: int = 0) -> ProxyConfig:
    """`through` (pass-through, OpenAI both sides) and `translated` (Anthropic frontend, OpenAI upstream)."""
    up = UpstreamConfig("bench", "openai", base_url, KEY_ENV, read_timeout=60)
    return ProxyConfig(
        models=(ModelRoute("through", "passthrough", up, "gpt"), ModelRoute("translated", "translate", up, "gpt")),
        tap_max_bytes=tap_max_bytes,
    )


def request_for(mode: str) -> tuple[str, dict[str, object]]:
    """Path and body of a streamed request for a mode (`direct` reads the upstream itself)."""
    messages = [{"role": "user", "content": "go"}]
    if mode == "translate":
        return "/v1/messages", {"model": "translated", "max_tokens": 64, "messages": messages, "stream": True}
    model = "through" if mode == "passthrough" else "gpt"
    return "/v1/chat/completions", {"model": model, "messages": messages, "stream": True}


async def drain(client: httpx2.AsyncClient, mode: str) -> int:
    """Stream one response to its end; the number of bytes received."""
    path, body = request_for(mode)
    received = 0
    async with client.stream("POST", path, json=body) as response:
        async for chunk in response.aiter_raw():
            received += len(chunk)
    return received


def in_process_client(mode: str, chunk: bytes, count: int, *, tap: bool = False) -> httpx2.AsyncClient:
    """A client of the proxy in a mode, or of the upstream itself for `direct`; `tap` installs a trace tap that
    keeps up to `TAP_MAX_BYTES` per direction."""
    transport = upstream_transport(chunk, count)
    if mode == "direct":
        return httpx2.AsyncClient(transport=transport, base_url="http://upstream.bench")
    config = proxy_config(tap_max_bytes=TAP_MAX_BYTES if tap else 0)
    app = create_app(config, transport=transport, on_exchange=(lambda exchange: None) if tap else None)
    return httpx2.AsyncClient(transport=StreamingASGITransport(app), base_url="http://proxy.bench", timeout=60)


async def per_chunk() -> dict[str, float]:
    """Microseconds per upstream chunk, per mode (best of 3)."""
    chunk = delta("tok ")
    out: dict[str, float] = {}
    for mode in ("direct", "passthrough", "translate"):
        best = float("inf")
        for _ in range(3):
            async with in_process_client(mode, chunk, CHUNKS) as client:
                start = time.perf_counter()
                await drain(client, mode)
                best = min(best, time.perf_counter() - start)
        out[mode] = best / CHUNKS * 1e6
    return out


async def upstream_endpoint(request: Request) -> StreamingResponse:
    """A real upstream socket: a short OpenAI stream, first chunk at once."""

    async def body() -> AsyncIterator[bytes]:
        yield HEAD
        for _ in range(5):
            yield delta("hello ")
        yield TAIL + DONE

    return StreamingResponse(body(), media_type="text/event-stream")


async def first_byte(client: httpx2.AsyncClient, url: str, mode: str) -> float:
    """Seconds from sending a request to its first body byte."""
    path, body = request_for(mode)
    start = time.perf_counter()
    elapsed = None
    async with client.stream("POST", f"{url}{path}", json=body) as response:
        async for _ in response.aiter_raw():
            if elapsed is None:
                elapsed = time.perf_counter() - start
    assert elapsed is not None, "empty response"
    return elapsed


def _serve(app_kind: str, port: int, upstream_url: str) -> None:
    """Child process body: serve the upstream or the proxy on 127.0.0.1:port until terminated."""
    import uvicorn

    from harness.proxy.server import uvicorn_config

    os.environ.setdefault(KEY_ENV, "bench-key-not-secret")
    if app_kind == "upstream":
        app = Starlette(routes=[Route("/v1/chat/completions", upstream_endpoint, methods=["POST"])])
    else:
        app = create_app(proxy_config(upstream_url))
    uvicorn.Server(uvicorn_config(app, "127.0.0.1", port)).run()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(app_kind: str, upstream_url: str = "") -> tuple[multiprocessing.process.BaseProcess, str]:
    """Serve in a child process (its own interpreter: no GIL shared with the client); wait until it answers."""
    port = _free_port()
    process = multiprocessing.get_context("spawn").Process(target=_serve, args=(app_kind, port, upstream_url))
    process.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process, url
        except OSError:
            time.sleep(0.05)
    process.terminate()
    raise TimeoutError(f"{app_kind} did not start within 30 s")


async def ttfb() -> dict[str, float]:
    """Median time to first byte in ms: the upstream directly, and through the proxy in each mode."""
    upstream, upstream_url = _start("upstream")
    proxy, proxy_url = _start("proxy", upstream_url)
    try:
        async with httpx2.AsyncClient(timeout=30) as client:
            samples: dict[str, list[float]] = {"direct": [], "passthrough": [], "translate": []}
            for mode in samples:  # warm-up: connections, imports, first-request paths
                await first_byte(client, upstream_url if mode == "direct" else proxy_url, mode)
            for _ in range(TTFB_RUNS):  # interleaved, so drift hits every mode alike
                for mode in samples:
                    url = upstream_url if mode == "direct" else proxy_url
                    samples[mode].append(await first_byte(client, url, mode))
    finally:
        for process in (proxy, upstream):
            process.terminate()
            process.join(10)
    return {mode: statistics.median(values) * 1000 for mode, values in samples.items()}


def rss_bytes() -> int:
    """Current resident set size of this process."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


async def memory(mode: str, *, tap: bool = False) -> tuple[float, float, float]:
    """(MB streamed, peak RSS growth in MB, seconds) for one large response through a mode."""
    chunk = delta("x" * 4000)
    count = MEGABYTES * 1024 * 1024 // len(chunk)
    peak = start = rss_bytes()
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, rss_bytes())
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    began = time.perf_counter()
    async with in_process_client(mode, chunk, count, tap=tap) as client:
        received = await drain(client, mode)
    elapsed = time.perf_counter() - began
    stop.set()
    sampler.join()
    return received / 1e6, (peak - start) / 1e6, elapsed


async def run() -> None:
    """Measure and print."""
    os.environ.setdefault(KEY_ENV, "bench-key-not-secret")
    costs = await per_chunk()
    print(f"per chunk ({CHUNKS} chunks, in-process), microseconds:")
    for mode, us in costs.items():
        print(f"  {mode:<12} {us:8.1f}")
    print(f"  translate / passthrough per chunk: {costs['translate'] / costs['passthrough']:.2f}x")
    over_pt = costs["passthrough"] - costs["direct"]
    over_tr = costs["translate"] - costs["direct"]
    print(f"  added over direct: passthrough {over_pt:.1f} us, translate {over_tr:.1f} us ({over_tr / over_pt:.2f}x)")
    firsts = await ttfb()
    print(
        f"time to first byte, loopback sockets, upstream and proxy in their own processes, median of {TTFB_RUNS}, ms:"
    )
    for mode, ms in firsts.items():
        print(f"  {mode:<12} {ms:8.2f}  ({ms / firsts['direct']:.2f}x direct)")
    print(f"memory while streaming ~{MEGABYTES} MB, resident set growth:")
    cases = [
        ("direct", False),
        ("passthrough", False),
        ("translate", False),
        ("passthrough", True),
        ("translate", True),
    ]
    for mode, tap in cases:
        mb, growth, seconds = await memory(mode, tap=tap)
        label = f"{mode}{' +tap' if tap else ''}"
        print(
            f"  {label:<17} {mb:6.1f} MB in {seconds:5.1f} s ({mb / seconds:7.1f} MB/s), peak growth {growth:6.1f} MB"
        )
    print(f"  (+tap: a trace tap installed, keeping at most {TAP_MAX_BYTES >> 20} MB of raw bytes per direction)")


def main() -> None:
    """Entry point for `python -m bench bench_proxy`."""
    asyncio.run(run())


if __name__ == "__main__":
    main()
