"""Per-event stream decode and encode cost of every registered codec, as a ratio to the `openai` SDK's own
per-chunk parsing of the same content, measured in the same run.

The content: one long realistic reply built directly as IR events (message start, a text block of 2,000 deltas of
1-6 words with non-ASCII, emoji, quotes, backslashes and newlines, a tool call whose ~2.4 KB of JSON arguments
arrive in 200 fragments cut at arbitrary characters, `Done` with usage). Each codec encodes it with its
`stream_encoder()` (timed: encode cost), and its `stream_decoder()` decodes the resulting bytes (timed: decode
cost) fed two ways: as 1-4 KiB socket reads, and one encoder output (one wire event) per chunk. Every decode is
accumulated and checked against the source content before any figure is printed: a wrong answer fast is no answer.

The reference is the SDK a proxy's user would otherwise parse the stream with: `openai.OpenAI` over an
`httpx2.MockTransport` whose response body is the `openai` codec's bytes of the same content, in the same chunks,
iterated through `client.chat.completions.create(stream=True)`. That is the SDK's whole per-chunk path (its
`SSEDecoder` over `iter_bytes`, `json.loads`, the in-band error check, `construct_type` into a
`ChatCompletionChunk`), which is what "parsing a chunk" costs an SDK user; driving `SSEDecoder` and
`ChatCompletionChunk.construct` by hand would skip parts of it. The one-off request cost (building and sending
the request through the mock transport, about 1 ms) is included once per stream, under 1% of a full stream.

All per-event figures divide the fastest run's time by the number of IR events of the source stream, the same
for every row, so a ratio is simply "time to handle this content / the SDK's time to parse this content". Decode
ratios compare like chunkings (socket reads with socket reads); encode is compared with the SDK's socket-read
parse. Timing: `bench._timing.interleaved_best` (one warm-up round, then best of 7 rounds, contenders
interleaved), by the wall clock; BENCH_CLOCK=cpu prints thread CPU time instead, which stays steady when other
work keeps the machine busy (the header says how much of the wall time the fastest runs spent on CPU).
Set BENCH_QUICK=1 for a tiny, one-round run (the smoke test uses it); figures from it mean nothing.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial

import httpx2
import openai

from bench._timing import Timing, interleaved_best
from bench.bench_sse import tcp_reads
from harness import ir
from harness.protocols import registry
from harness.protocols.base import Codec
from harness.stream import accumulate

QUICK_ENV = "BENCH_QUICK"
"""Environment variable that selects the tiny smoke-test size (`python -m bench` passes no arguments through)."""
CLOCK_ENV = "BENCH_CLOCK"
"""`cpu` prints figures from thread CPU time instead of the wall clock (for a machine other work keeps busy)."""
REFERENCE = "openai-sdk"
"""Row name of the reference."""
TOOL_NAME = "get_weather"
USAGE = ir.Usage(input_tokens=1843, output_tokens=2611)


@dataclass(frozen=True)
class Size:
    """How big a run is: content size and timing rounds."""

    text_deltas: int
    """Text deltas in the reply's text block."""
    arg_fragments: int
    """Fragments the tool call's argument JSON arrives in."""
    rounds: int
    """Timed rounds (best of)."""
    warmup: int
    """Untimed rounds first (imports, caches, pydantic validators)."""


FULL = Size(text_deltas=2000, arg_fragments=200, rounds=7, warmup=1)
QUICK = Size(text_deltas=40, arg_fragments=8, rounds=1, warmup=0)


@dataclass(frozen=True)
class Content:
    """The reply every protocol carries: its IR events and what a correct decode must yield."""

    events: list[ir.StreamEvent]
    text: str
    arguments: dict[str, object]


def _text_deltas(rng: random.Random, count: int) -> list[str]:
    # Words chosen so every encoder escapes something: non-ASCII, emoji (surrogate pairs in JSON \u escapes),
    # quotes, backslashes, newlines, and `<` / `&`, which HTML-safe JSON encoders escape.
    vocab = ["the", "proxy", "streams", "tokens", "über", "naïve", "→", "世界", "🎉", '"quoted"', "C:\\path", "a<b&c"]
    out = []
    for _ in range(count):
        words = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 6)))
        out.append(words + ("\n\n" if rng.random() < 0.05 else " "))
    return out


def _arguments(fragments: int) -> dict[str, object]:
    # Sized so the argument text is a few fragments of ~10-20 characters each, like real tool-call streams.
    days = [
        {"day": d, "city": "Zürich", "unit": "celsius", "hourly": d % 3 == 0} for d in range(max(1, fragments // 5))
    ]
    return {"location": "Zürich, CH", "days": days, "note": 'said "bring an umbrella" \\ maybe'}


def build_content(size: Size, seed: int = 20250101) -> Content:
    """The long reply of `size` as IR events, in the canonical order every decoder produces."""
    rng = random.Random(seed)
    deltas = _text_deltas(rng, size.text_deltas)
    arguments = _arguments(size.arg_fragments)
    raw = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    # Cut points spread evenly, at arbitrary characters (mid-key, mid-escape), as providers cut argument text.
    cuts = [len(raw) * i // size.arg_fragments for i in range(size.arg_fragments + 1)]
    events: list[ir.StreamEvent] = [ir.MessageStart(id="chatcmpl-bench", model="bench-model"), ir.TextStart(index=0)]
    events += [ir.TextDelta(index=0, text=text) for text in deltas]
    events += [ir.TextEnd(index=0), ir.ToolCallStart(index=1, id="call_bench_1", name=TOOL_NAME)]
    events += [ir.ToolCallDelta(index=1, arguments=raw[a:b]) for a, b in itertools.pairwise(cuts) if a < b]
    events += [ir.ToolCallEnd(index=1), ir.Done(stop_reason=ir.StopReason(kind="tool_use"), usage=USAGE)]
    return Content(events, "".join(deltas), arguments)


def encode_pieces(codec: Codec, events: Sequence[ir.StreamEvent]) -> list[bytes]:
    """The encoder's output for each event (and its close), empty outputs dropped: one wire event per piece."""
    encoder = codec.stream_encoder()
    pieces = [encoder.encode(event) for event in events]
    pieces.append(encoder.close())
    return [piece for piece in pieces if piece]


def run_encode(codec: Codec, events: Sequence[ir.StreamEvent]) -> int:
    """Encode the whole stream; returns the byte count."""
    encoder = codec.stream_encoder()
    size = 0
    for event in events:
        size += len(encoder.encode(event))
    return size + len(encoder.close())


def run_decode(codec: Codec, chunks: Sequence[bytes]) -> int:
    """Decode the whole stream; returns the IR event count."""
    decoder = codec.stream_decoder()
    count = 0
    for chunk in chunks:
        count += len(decoder.feed(chunk))
    return count + len(decoder.close())


def decoded_events(codec: Codec, chunks: Sequence[bytes]) -> list[ir.StreamEvent]:
    """All IR events of one decode (untimed; for the correctness check)."""
    decoder = codec.stream_decoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    return events + decoder.close()


def check_decode(name: str, events: list[ir.StreamEvent], content: Content) -> None:
    """Raise SystemExit unless the decoded events carry exactly the source content."""
    result = accumulate(events)
    response = result.response
    texts = [part.text for part in response.content if isinstance(part, ir.TextPart)]
    calls = [part for part in response.content if isinstance(part, ir.ToolCallPart)]
    problems = [*result.problems] + ([f"error {result.error}"] if result.error else [])
    if texts != [content.text]:
        problems.append(f"text differs ({len(''.join(texts))} chars in {len(texts)} blocks)")
    if [(c.name, c.arguments) for c in calls] != [(TOOL_NAME, content.arguments)]:
        problems.append(f"tool calls differ: {[(c.name, c.arguments_raw[:80]) for c in calls]}")
    if response.stop_reason is None or response.stop_reason.kind != "tool_use":
        problems.append(f"stop reason {response.stop_reason}")
    if (response.usage.input_tokens, response.usage.output_tokens) != (USAGE.input_tokens, USAGE.output_tokens):
        problems.append(f"usage {response.usage}")
    if problems:
        raise SystemExit(f"{name}: decoded stream differs from the source: {'; '.join(problems)}")


def sdk_client(chunks: Sequence[bytes]) -> openai.OpenAI:
    """An `openai` client whose every request is answered, in process, by a stream of exactly these chunks."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=iter(chunks))

    transport = httpx2.MockTransport(handler)
    return openai.OpenAI(
        api_key="bench", base_url="http://bench.test/v1", max_retries=0, http_client=httpx2.Client(transport=transport)
    )


def run_sdk(client: openai.OpenAI) -> int:
    """One streamed chat completion through the SDK, every chunk parsed; returns the chunk count."""
    stream = client.chat.completions.create(
        model="bench-model", messages=[{"role": "user", "content": "weather?"}], stream=True
    )
    return sum(1 for _ in stream)


def check_sdk(client: openai.OpenAI, content: Content) -> None:
    """Raise SystemExit unless the SDK saw exactly the source content (so it did the same work as the codecs)."""
    text, arguments, finish = [], [], None
    stream = client.chat.completions.create(
        model="bench-model", messages=[{"role": "user", "content": "w"}], stream=True
    )
    for chunk in stream:
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            arguments += [call.function.arguments or "" for call in choice.delta.tool_calls or [] if call.function]
            finish = choice.finish_reason or finish
    if "".join(text) != content.text or json.loads("".join(arguments)) != content.arguments or finish != "tool_calls":
        raise SystemExit(f"{REFERENCE}: parsed stream differs from the source (finish_reason {finish!r})")


@dataclass(frozen=True)
class Plan:
    """One protocol's encoded stream in both chunkings."""

    socket: list[bytes]
    """The body as 1-4 KiB socket reads."""
    pieces: list[bytes]
    """One encoder output (one wire event) per chunk."""

    @property
    def body_bytes(self) -> int:
        """Size of the whole body."""
        return sum(map(len, self.pieces))


def contenders(content: Content, stack: ExitStack) -> tuple[dict[str, Callable[[], int]], dict[str, Plan]]:
    """Every timed callable (three per codec, two for the SDK) and each protocol's chunkings, all checked first.

    SDK clients are entered on `stack` so the caller closes them after timing.
    """
    rng = random.Random(7)
    runs: dict[str, Callable[[], int]] = {}
    plans: dict[str, Plan] = {}
    for name in registry.names():
        codec = registry.get(name)
        pieces = encode_pieces(codec, content.events)
        plan = plans[name] = Plan(tcp_reads(b"".join(pieces), rng), pieces)
        for chunks in (plan.socket, plan.pieces):
            check_decode(name, decoded_events(codec, chunks), content)
        runs[f"{name}/socket"] = partial(run_decode, codec, plan.socket)
        runs[f"{name}/event"] = partial(run_decode, codec, plan.pieces)
        runs[f"{name}/encode"] = partial(run_encode, codec, content.events)
    # The reference parses the `openai` codec's bytes, in the same two chunkings the openai row is timed with.
    for mode, chunks in (("socket", plans["openai"].socket), ("event", plans["openai"].pieces)):
        client = stack.enter_context(sdk_client(chunks))
        check_sdk(client, content)
        runs[f"{REFERENCE}/{mode}"] = partial(run_sdk, client)
    return runs, plans


def print_table(
    content: Content, size: Size, plans: dict[str, Plan], timings: dict[str, Timing], *, cpu: bool = False
) -> None:
    """The figures, one row per protocol after the reference row; ratios below 1 mean faster than the SDK."""
    n = len(content.events)

    def per(key: str) -> float:
        return timings[key].per(n, cpu=cpu)

    sdk_socket, sdk_event = per(f"{REFERENCE}/socket"), per(f"{REFERENCE}/event")
    on_cpu = sum(t.cpu_ns for t in timings.values()) / sum(t.best_ns for t in timings.values())
    fragments = sum(isinstance(event, ir.ToolCallDelta) for event in content.events)
    print(
        f"content: {n} IR events ({size.text_deltas} text deltas, {fragments} argument fragments); best of "
        f"{size.rounds} rounds after {size.warmup} warm-up; us/ev = fastest run / {n}"
    )
    # Below ~90% the machine was busy and wall-clock ratios are noisy; BENCH_CLOCK=cpu gives steadier ones.
    print(
        f"clock: {'thread CPU time' if cpu else 'wall (perf_counter_ns)'}; the fastest wall-clock runs were "
        f"{on_cpu:.0%} on CPU"
    )
    print(f"reference: openai {openai.__version__} chat.completions.create(stream=True) over the openai codec's bytes")
    print("frames: non-empty encoder outputs (the chunks of the 1/chunk decode); events: IR events decoded")
    print("ratios: decode socket / SDK socket, decode 1/chunk / SDK 1/chunk, encode / SDK socket")
    print(
        f"{'protocol':12} {'frames':>6} {'events':>6} {'bytes':>8} {'dec socket':>10} {'dec 1/chunk':>11} "
        f"{'enc':>7} {'dec/SDK':>7} {'1ch/SDK':>7} {'enc/SDK':>7}"
    )
    openai_plan = plans["openai"]
    print(
        f"{REFERENCE:12} {len(openai_plan.pieces):6d} {timings[f'{REFERENCE}/socket'].result:6d} "
        f"{openai_plan.body_bytes:8d} {sdk_socket:10.1f} {sdk_event:11.1f} {'-':>7} {1:7.2f} {1:7.2f} {'-':>7}"
    )
    for name, plan in plans.items():
        socket, event, encode = (per(f"{name}/{mode}") for mode in ("socket", "event", "encode"))
        print(
            f"{name:12} {len(plan.pieces):6d} {timings[f'{name}/socket'].result:6d} {plan.body_bytes:8d} "
            f"{socket:10.1f} {event:11.1f} {encode:7.1f} {socket / sdk_socket:7.2f} {event / sdk_event:7.2f} "
            f"{encode / sdk_socket:7.2f}"
        )


def main(size: Size | None = None) -> None:
    """Time every registered codec's stream decode and encode against the openai SDK and print the table."""
    size = size or (QUICK if os.environ.get(QUICK_ENV) else FULL)
    content = build_content(size)
    with ExitStack() as stack:
        runs, plans = contenders(content, stack)
        timings = interleaved_best(runs, rounds=size.rounds, warmup=size.warmup)
    print_table(content, size, plans, timings, cpu=os.environ.get(CLOCK_ENV) == "cpu")
