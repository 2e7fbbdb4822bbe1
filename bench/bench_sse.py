"""SSE framing throughput of `harness.wire.sse.SSEDecoder`, as a ratio to httpx2's own SSE parser in the same run.

Three generated ~10 MB streams (Anthropic-style named events, OpenAI-style `data:` chunks ending in `[DONE]`,
Gemini-style CRLF events), cut into 1-4 KiB pieces as socket reads deliver them. httpx2 is driven through its
public API (`EventSource` over a `Response` whose content is the same chunk iterator), which includes its
incremental UTF-8 decoding: our decoder validates UTF-8 too, so both do the same work.
"""

from __future__ import annotations

import json
import random

import httpx2

from bench._timing import interleaved_best
from harness.wire.sse import SSEDecoder

TARGET_BYTES = 10 * 1024 * 1024
ROUNDS = 5


def _words(rng: random.Random, n: int) -> str:
    vocab = ["the", "model", "streams", "tokens", "über", "naïve", "→", "世界", "ok", "JSON", "proxy", "🎉"]
    return " ".join(rng.choice(vocab) for _ in range(n))


def anthropic_stream(rng: random.Random) -> bytes:
    """Anthropic Messages style: `event:` + `data:` per event, a ping, block starts/stops, text deltas."""
    parts = [b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_01","role":"assistant"}}\n\n']
    size, index = 0, 0
    while size < TARGET_BYTES:
        parts.append(
            b'event: content_block_start\ndata: {"type":"content_block_start","index":%d,'
            b'"content_block":{"type":"text","text":""}}\n\n' % index
        )
        parts.append(b'event: ping\ndata: {"type": "ping"}\n\n')
        for _ in range(200):
            text = _words(rng, rng.randint(1, 12))
            delta = {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}
            chunk = b"event: content_block_delta\ndata: " + json.dumps(delta, ensure_ascii=False).encode() + b"\n\n"
            parts.append(chunk)
            size += len(chunk)
        parts.append(b'event: content_block_stop\ndata: {"type":"content_block_stop","index":%d}\n\n' % index)
        index += 1
    parts.append(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    return b"".join(parts)


def openai_stream(rng: random.Random, newline: bytes = b"\n") -> bytes:
    """OpenAI Chat Completions style: `data: {chunk}` events, then `data: [DONE]`."""
    parts, size = [], 0
    while size < TARGET_BYTES:
        chunk = {
            "id": "chatcmpl-CoDWl5rS0pF10P0W0T",
            "object": "chat.completion.chunk",
            "created": 1766000000,
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "delta": {"content": _words(rng, rng.randint(1, 8))}, "finish_reason": None}],
        }
        event = b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + newline + newline
        parts.append(event)
        size += len(event)
    parts.append(b"data: [DONE]" + newline + newline)
    return b"".join(parts)


def tcp_reads(body: bytes, rng: random.Random) -> list[bytes]:
    """`body` cut into 1-4 KiB pieces, the sizes a socket read typically returns."""
    out, pos = [], 0
    while pos < len(body):
        n = rng.randint(1024, 4096)
        out.append(body[pos : pos + n])
        pos += n
    return out


def run_harness(chunks: list[bytes]) -> int:
    decoder = SSEDecoder()
    count = 0
    for chunk in chunks:
        count += len(decoder.feed(chunk))
    return count + len(decoder.close())


def run_httpx2(chunks: list[bytes]) -> int:
    response = httpx2.Response(
        200,
        headers={"content-type": "text/event-stream"},
        content=iter(chunks),
        request=httpx2.Request("POST", "http://bench.test/"),
    )
    return sum(1 for _ in httpx2.EventSource(response))


def best_times(chunks: list[bytes]) -> tuple[float, int, float, int]:
    """Fastest of ROUNDS runs (seconds) and event count, for us and httpx2, interleaved so load hits both alike."""
    timings = interleaved_best(
        {"harness": lambda: run_harness(chunks), "httpx2": lambda: run_httpx2(chunks)}, rounds=ROUNDS
    )
    ours, theirs = timings["harness"], timings["httpx2"]
    return ours.seconds, ours.result, theirs.seconds, theirs.result


def main() -> None:
    """Print MB/s and events/s for both parsers on each stream, and our speed as a ratio to httpx2's."""
    rng = random.Random(20250101)
    streams = {
        "anthropic (LF, event+data)": anthropic_stream(rng),
        "openai (LF, data only)": openai_stream(rng),
        "gemini-style (CRLF)": openai_stream(rng, b"\r\n"),
    }
    header = f"{'stream':30} {'MB':>6} {'events':>8} {'harness MB/s':>13} {'ev/s':>10} {'httpx2 MB/s':>12} {'ev/s':>10}"
    print(header, "ratio")
    for name, body in streams.items():
        chunks = tcp_reads(body, rng)
        ours, ours_count, theirs, theirs_count = best_times(chunks)
        if ours_count != theirs_count:
            raise SystemExit(f"{name}: event counts differ: harness {ours_count}, httpx2 {theirs_count}")
        mb = len(body) / 1e6
        print(
            f"{name:30} {mb:6.1f} {ours_count:8d} {mb / ours:13.1f} {ours_count / ours:10.0f} "
            f"{mb / theirs:12.1f} {theirs_count / theirs:10.0f} {theirs / ours:4.2f}x"
        )
