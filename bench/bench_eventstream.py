"""AWS event stream framing throughput of `harness.wire.eventstream.EventStreamDecoder`, as a ratio to botocore's
own parser (`botocore.eventstream.EventStreamBuffer`, what boto3 runs for every `converse_stream`) in the same run.

One generated ~10 MB Bedrock ConverseStream body (messageStart, text and tool-argument deltas, block stops,
messageStop, metadata; the `:event-type` / `:content-type` / `:message-type` string headers and the `p` padding
real Bedrock frames carry), cut into 1-4 KiB pieces as socket reads deliver them. Both parsers check both CRCs
and parse the headers; neither parses the JSON payloads.
"""

from __future__ import annotations

import json
import random

from botocore.eventstream import EventStreamBuffer

from bench._timing import interleaved_best
from harness.wire.eventstream import EventStreamDecoder, encode_message

TARGET_BYTES = 10 * 1024 * 1024
ROUNDS = 5
_PAD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def frame(event_type: str, payload: dict[str, object], rng: random.Random) -> bytes:
    """One ConverseStream event frame as Bedrock sends it (sorted keys, `p` padding)."""
    body = {**payload, "p": _PAD[: rng.randint(1, 60)]}
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, data)


def converse_stream(rng: random.Random) -> bytes:
    """A long text block then a tool call, as one ConverseStream body of about TARGET_BYTES."""
    vocab = ["the", "model", "streams", "tokens", "über", "naïve", "→", "世界", "ok", "JSON", "proxy", "🎉"]
    parts = [frame("messageStart", {"role": "assistant"}, rng)]
    size = 0
    while size < TARGET_BYTES * 0.9:
        text = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 12)))
        part = frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}}, rng)
        parts.append(part)
        size += len(part)
    parts.append(frame("contentBlockStop", {"contentBlockIndex": 0}, rng))
    start = {"toolUse": {"name": "get_weather", "toolUseId": "tooluse_6a1pPvnc99GLKO3KGkUA2N"}}
    parts.append(frame("contentBlockStart", {"contentBlockIndex": 1, "start": start}, rng))
    while size < TARGET_BYTES:
        fragment = json.dumps({"city": rng.choice(vocab)})[: rng.randint(2, 12)]
        part = frame("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": fragment}}}, rng)
        parts.append(part)
        size += len(part)
    parts.append(frame("contentBlockStop", {"contentBlockIndex": 1}, rng))
    parts.append(frame("messageStop", {"stopReason": "tool_use"}, rng))
    usage = {"inputTokens": 419, "outputTokens": 16, "totalTokens": 435}
    parts.append(frame("metadata", {"metrics": {"latencyMs": 355}, "usage": usage}, rng))
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
    """Our decoder over the chunks; returns the message count."""
    decoder = EventStreamDecoder()
    count = 0
    for chunk in chunks:
        count += len(decoder.feed(chunk))
    return count + len(decoder.close())


def run_botocore(chunks: list[bytes]) -> int:
    """botocore's buffer over the chunks, as `botocore.eventstream.EventStream` drives it; returns the count."""
    buffer = EventStreamBuffer()
    count = 0
    for chunk in chunks:
        buffer.add_data(chunk)
        for message in buffer:
            count += 1
            _ = message.headers, message.payload
    return count


def main() -> None:
    """Print MB/s and messages/s for both parsers, and our speed as a ratio to botocore's."""
    rng = random.Random(20250101)
    body = converse_stream(rng)
    chunks = tcp_reads(body, rng)
    timings = interleaved_best(
        {"harness": lambda: run_harness(chunks), "botocore": lambda: run_botocore(chunks)}, rounds=ROUNDS
    )
    ours, theirs = timings["harness"], timings["botocore"]
    if ours.result != theirs.result:
        raise SystemExit(f"message counts differ: harness {ours.result}, botocore {theirs.result}")
    mb = len(body) / 1e6
    head = f"{'stream':24} {'MB':>6} {'messages':>9} {'harness MB/s':>13} {'msg/s':>10} {'botocore MB/s':>14}"
    print(f"{head} {'msg/s':>10}")
    print(
        f"{'bedrock converse-stream':24} {mb:6.1f} {ours.result:9d} {mb / ours.seconds:13.1f} "
        f"{ours.result / ours.seconds:10.0f} {mb / theirs.seconds:14.1f} {theirs.result / theirs.seconds:10.0f} "
        f"{theirs.seconds / ours.seconds:4.2f}x"
    )
