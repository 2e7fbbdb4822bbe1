"""The diff engine on two 10,000-event traces, as a ratio to a reference measured in the same run.

The traces are the stream one SDK saw, as the runner's JSON view (`{"response", "events", "error"}`): a
thinking block, a long text block and a tool call whose arguments arrive in fragments, usage, `done`. The right
trace differs in two places: one text delta near the end carries other text, and one thinking delta is missing.

Contenders, each on the same pair of views:
- `compare`: `harness.diff.compare` (every normalization rule on both sides, then deepdiff), what the runner does
  for each case's response side;
- `normalize`: the rules alone, to split the cost;
- `pipeline`: what the judge does for a case's response side (`harness.diff.response_divergences` on two run
  traces, an Anthropic client's baseline against its translation through an OpenAI backend): both SDK views
  built from the events (the cache of views emptied each time), the declared losses, the rules, the diff;
- `deepdiff raw`: `diff_views` on the views without normalization (deepdiff on the 10k-event lists);
- `reference`: `==` on the two views plus `json.dumps` of both (the least any comparison must do: touch all).

`BENCH_DIFF_EVENTS` sets the events per trace (default 10000), `BENCH_DIFF_ROUNDS` the timed rounds (default 5).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass

from bench._timing import Timing, interleaved_best
from harness import ir
from harness.diff import Divergence, compare, diff_views, pipeline, response_divergences
from harness.diff import normalize as n
from harness.stream import accumulate, validate
from harness.trace import Run, RunTrace, SdkView

EVENTS_ENV = "BENCH_DIFF_EVENTS"
ROUNDS_ENV = "BENCH_DIFF_ROUNDS"
USAGE = ir.Usage(input_tokens=1200, output_tokens=9000, reasoning_tokens=900)
CHANGED_FROM_END = 40
"""The changed text delta sits this many deltas before the end of the text block."""


@dataclass(frozen=True)
class Pair:
    """Two traces and where they differ."""

    left: list[ir.StreamEvent]
    right: list[ir.StreamEvent]
    changed: int
    """Index (in `left`) of the text delta the right trace changed."""
    missing: int
    """Index (in `left`) of the thinking delta the right trace lacks."""


def build_events(total: int) -> list[ir.StreamEvent]:
    """A valid stream of `total` events: a tenth thinking, a tenth tool-argument fragments, the rest text."""
    thinking, fragments = total // 10, total // 10
    text = total - thinking - fragments - 10  # message_start, 3 x (start, end), usage, done: 9; the tool args' `{`
    if text < CHANGED_FROM_END + 1:
        raise ValueError(f"{total} events are too few for the trace's shape")
    events: list[ir.StreamEvent] = [
        ir.MessageStart(id="msg_left", model="bench-model", usage=ir.Usage(input_tokens=1200))
    ]
    events += [ir.ThinkingStart(index=0), *[ir.ThinkingDelta(index=0, text=f"step {i}. ") for i in range(thinking)]]
    events.append(ir.ThinkingEnd(index=0, signature="sig-bench"))
    events += [
        ir.TextStart(index=1),
        *[ir.TextDelta(index=1, text=f"word{i} ") for i in range(text)],
        ir.TextEnd(index=1),
    ]
    events += [ir.ToolCallStart(index=2, id="call_1", name="record"), ir.ToolCallDelta(index=2, arguments='{"items":[')]
    events += [
        ir.ToolCallDelta(index=2, arguments=f"{i}," if i < fragments - 1 else f"{i}]}}") for i in range(fragments)
    ]
    events += [ir.ToolCallEnd(index=2), ir.UsageEvent(usage=USAGE), ir.Done(stop_reason=ir.StopReason(kind="tool_use"))]
    return events


def build_pair(total: int) -> Pair:
    """The left trace and a right one with one text delta changed near the end and one thinking delta missing."""
    left = build_events(total)
    text_end = next(i for i, e in enumerate(left) if isinstance(e, ir.TextEnd))
    changed = text_end - CHANGED_FROM_END
    missing = next(i for i, e in enumerate(left) if isinstance(e, ir.ThinkingDelta)) + total // 20
    right = list(left)
    right[changed] = ir.TextDelta(index=1, text="CHANGED ")
    del right[missing]
    # Ids and models differ between any two runs: the rules must absorb that without a divergence.
    right[0] = ir.MessageStart(id="msg_right", model="other-model", usage=ir.Usage(input_tokens=1200))
    return Pair(left, right, changed, missing)


def view(events: list[ir.StreamEvent]) -> n.View:
    """The runner's JSON view of a streamed run: the accumulated response, the events, no error."""
    response = accumulate(events).response
    return {"response": ir.to_json(response), "events": ir.events_to_json(events), "error": None}


def reference(left: n.View, right: n.View) -> int:
    """Equality of the two views plus serializing both: the cost floor of touching every value."""
    equal = left == right
    return len(json.dumps(left)) + len(json.dumps(right)) + int(equal)


def check(found: list[Divergence], pair: Pair) -> None:
    """The engine must report the changed text and the missing thinking text, and nothing about ids or models."""
    paths = [d.path for d in found]
    if any(".id" in p or ".model" in p for p in paths):
        raise SystemExit(f"bench_diff: ids or models diverge after normalization: {paths}")
    texts = [d for d in found if d.path.endswith(".text")]
    if len(texts) < 2 or not any("CHANGED" in str(d.right) for d in texts):
        raise SystemExit(f"bench_diff: expected the changed text and the missing thinking delta, got {paths}")


@dataclass(frozen=True)
class Row:
    """One contender's figures."""

    name: str
    timing: Timing


def traces(pair: Pair) -> tuple[RunTrace, RunTrace]:
    """The pair as a frontend baseline and a translated run (an Anthropic client, through an OpenAI backend)."""
    baseline = Run("baseline_frontend", "anthropic", "anthropic", "long-output", True)
    translated = Run("translated", "anthropic", "openai", "long-output", True)
    return (
        RunTrace.of(baseline, "bench", sdk=SdkView(events=pair.left)),
        RunTrace.of(translated, "bench", sdk=SdkView(events=pair.right)),
    )


def judged(reference_run: RunTrace, translated: RunTrace) -> int:
    """The case's response side as the judge compares it, its SDK views built afresh."""
    pipeline.clear_views()
    return len(response_divergences(reference_run, translated))


def contenders(
    left: n.View, right: n.View, runs_of: tuple[RunTrace, RunTrace], *, raw: bool
) -> dict[str, Callable[[], int]]:
    """The callables to time; `raw` adds deepdiff on the un-normalized views (slow on long lists)."""
    runs: dict[str, Callable[[], int]] = {
        "reference": lambda: reference(left, right),
        "normalize": lambda: len(n.apply(left)["events"]) + len(n.apply(right)["events"]),
        "compare": lambda: len(compare(left, right)),
        "pipeline": lambda: judged(*runs_of),
    }
    if raw:
        runs["deepdiff raw"] = lambda: len(diff_views(left, right))
    return runs


def main() -> None:
    """Build the pair, check what the engine reports, time the contenders and print the table."""
    total = int(os.environ.get(EVENTS_ENV, "10000"))
    rounds = int(os.environ.get(ROUNDS_ENV, "5"))
    pair = build_pair(total)
    for side in (pair.left, pair.right):
        if validate(side):
            raise SystemExit(f"bench_diff: trace is not a valid stream: {validate(side)[:3]}")
    left, right = view(pair.left), view(pair.right)
    found = compare(left, right)
    check(found, pair)
    timings = interleaved_best(contenders(left, right, traces(pair), raw=True), rounds=rounds, warmup=1)
    events = len(pair.left) + len(pair.right)
    base = timings["reference"].best_ns
    print(f"traces: {len(pair.left)} and {len(pair.right)} events; {len(found)} divergences, first: {found[0].path}")
    print(f"{'contender':<14} {'ms':>9} {'events/s':>12} {'x reference':>12}")
    for name, timing in timings.items():
        rate = events / timing.seconds
        print(f"{name:<14} {timing.best_ns / 1e6:>9.2f} {rate:>12,.0f} {timing.best_ns / base:>12.1f}")


if __name__ == "__main__":
    main()
