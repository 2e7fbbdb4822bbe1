"""A scenario's scripted reply as IR: the response for non-streamed runs, the event stream for streamed ones.

Reference backends and replay feed these to a protocol's encoder, so every backend tells the same story and
`after_events` / `truncate_after` count the same events everywhere.
"""

from __future__ import annotations

from harness import ir
from harness.scenarios.model import Chunking, ReplyOk


def scripted_response(reply: ReplyOk, *, model: str | None = None) -> ir.Response:
    """The complete response a backend returns for a non-streamed run."""
    return ir.Response(
        id=reply.id, model=model, content=reply.content, stop_reason=reply.stop_reason, usage=reply.usage
    )


def scripted_events(
    reply: ReplyOk, chunking: Chunking | None = None, *, model: str | None = None
) -> list[ir.StreamEvent]:
    """The IR events a backend streams, cut per `chunking`, with the midstream error or truncation applied.

    A midstream error closes the blocks open at the cut before its `ErrorEvent`, so the result is a valid
    stream. A truncated reply is the bare prefix: no terminal event, the body just ends there.
    """
    chunking = chunking or Chunking()
    events = full_events(reply, chunking, model=model)
    if reply.midstream_error is not None:
        cut = reply.midstream_error.after_events
        if cut >= len(events):
            raise ValueError(f"midstream_error.after_events={cut} but the reply has only {len(events)} events")
        return [*events[:cut], *_closing_events(events[:cut]), ir.ErrorEvent(error=reply.midstream_error.error)]
    if reply.truncate_after is not None:
        cut = reply.truncate_after
        if cut >= len(events):
            raise ValueError(f"truncate_after={cut} but the reply has only {len(events)} events")
        return events[:cut]
    return events


def usage_at_start(reply: ReplyOk) -> ir.Usage | None:
    """What the backend reports when the stream starts: the reply's own `usage_at_start`, else the input figures
    of its usage (what a provider knows before it generates), None when it knows none."""
    if reply.usage_at_start is not None:
        return None if reply.usage_at_start == ir.Usage() else reply.usage_at_start
    usage = reply.usage
    start = ir.Usage(
        input_tokens=usage.input_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )
    return None if start == ir.Usage() else start


def full_events(reply: ReplyOk, chunking: Chunking, *, model: str | None = None) -> list[ir.StreamEvent]:
    """The complete event stream of a reply (no error or truncation applied)."""
    events: list[ir.StreamEvent] = [ir.MessageStart(id=reply.id, model=model, usage=usage_at_start(reply))]
    for index, part in enumerate(reply.content):
        events += _part_events(index, part, chunking)
    events = _with_usage_updates(events, reply.usage_updates)
    events.append(ir.Done(stop_reason=reply.stop_reason, usage=reply.usage))
    return events


_DELTAS = (ir.TextDelta, ir.ThinkingDelta, ir.ToolCallDelta)


def _with_usage_updates(events: list[ir.StreamEvent], updates: list[ir.Usage]) -> list[ir.StreamEvent]:
    """`updates` as usage events spread evenly over the deltas (update j after delta (j+1)n/(m+1)); with no
    delta to follow they come last."""
    if not updates:
        return events
    deltas = [i for i, e in enumerate(events) if isinstance(e, _DELTAS)]
    after: dict[int, list[ir.StreamEvent]] = {}
    for j, usage in enumerate(updates):
        nth = (j + 1) * len(deltas) // (len(updates) + 1)
        position = deltas[nth - 1] if nth >= 1 else len(events) - 1
        after.setdefault(position, []).append(ir.UsageEvent(usage=usage))
    out: list[ir.StreamEvent] = []
    for i, event in enumerate(events):
        out += [event, *after.get(i, [])]
    return out


def _pieces(text: str, size: int | None) -> list[str]:
    if text == "":
        return []
    if size is None:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def _part_events(index: int, part: ir.OutputPart, chunking: Chunking) -> list[ir.StreamEvent]:
    if isinstance(part, ir.TextPart):
        deltas: list[ir.StreamEvent] = [
            ir.TextDelta(index=index, text=t) for t in _pieces(part.text, chunking.text_chunk_size)
        ]
        return [ir.TextStart(index=index), *deltas, ir.TextEnd(index=index)]
    if isinstance(part, ir.ThinkingPart):
        deltas = [ir.ThinkingDelta(index=index, text=t) for t in _pieces(part.text, chunking.text_chunk_size)]
        return [ir.ThinkingStart(index=index), *deltas, ir.ThinkingEnd(index=index, signature=part.signature)]
    if isinstance(part, ir.RedactedThinkingPart):
        return [ir.RedactedThinking(index=index, data=part.data)]
    deltas = [
        ir.ToolCallDelta(index=index, arguments=a) for a in _pieces(part.arguments_raw, chunking.arguments_chunk_size)
    ]
    start = ir.ToolCallStart(index=index, id=part.id, name=part.name, call_type=part.call_type)
    return [start, *deltas, ir.ToolCallEnd(index=index)]


def _closing_events(prefix: list[ir.StreamEvent]) -> list[ir.StreamEvent]:
    """End events for the blocks still open at the end of `prefix`, in the order they opened."""
    open_blocks: dict[int, ir.StreamEvent] = {}
    for event in prefix:
        if isinstance(event, ir.TextStart | ir.ThinkingStart | ir.ToolCallStart):
            open_blocks[event.index] = event
        elif isinstance(event, ir.TextEnd | ir.ThinkingEnd | ir.ToolCallEnd):
            open_blocks.pop(event.index, None)
    closers: list[ir.StreamEvent] = []
    for index, start in open_blocks.items():
        if isinstance(start, ir.TextStart):
            closers.append(ir.TextEnd(index=index))
        elif isinstance(start, ir.ThinkingStart):
            closers.append(ir.ThinkingEnd(index=index))
        else:
            closers.append(ir.ToolCallEnd(index=index))
    return closers
