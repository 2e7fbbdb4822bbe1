"""Incremental IR events -> ConverseStream body (AWS event stream framing), shaped like real Bedrock.

Each event is one frame with the headers `:event-type`, `:content-type: application/json`, `:message-type:
event`, in that order, and a compact JSON payload with sorted keys plus a `p` padding string, as recorded from
Bedrock (`{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"abcdefgh"}`). The sequence follows the recordings:
messageStart; text and reasoning blocks without contentBlockStart (an empty block still gets one empty delta so
it exists on the wire); toolUse blocks with contentBlockStart (name, toolUseId) and input fragments; a reasoning
block's signature as its own delta before contentBlockStop; a redacted block as one redactedContent delta; then
messageStop (stopReason) and metadata (usage, metrics.latencyMs). A failure is an exception (or error) frame
(see errors.py); a failure before anything was sent is that frame alone, as Bedrock sends a validation error
inside a 200 stream. Bedrock extras fill in what the encoder's own frames lack: `MessageStart`'s in messageStart,
`Done`'s `additionalModelResponseFields` in messageStop and the others in metadata. A Bedrock `ProviderEvent` is
written back as it came; another protocol's is skipped.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.bedrock.blocks import redacted_to_wire
from harness.protocols.bedrock.errors import stream_error_frame
from harness.protocols.bedrock.mapping import NAME, dumps, stop_to_wire, usage_to_wire
from harness.protocols.bedrock.response import LATENCY_MS, with_extras
from harness.wire.eventstream import encode_frame, encode_headers

_STOP_EXTRAS = frozenset({"additionalModelResponseFields"})
"""Body-level extras that belong in messageStop (the others go with metadata)."""

PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
"""The alphabet of Bedrock's `p` padding; a frame carries a prefix of it (1 to 57 characters in recordings, which
is padding against length side channels: it means nothing)."""


def padding_length(frame: int) -> int:
    """The `p` length of the encoder's `frame`-th frame: spread over 1..57 like Bedrock's, yet reproducible."""
    return 1 + (frame * 23 + 5) % 57


_HEADS: dict[str, bytes] = {}


def _head(event_type: str) -> bytes:
    """The encoded headers of an event frame of this type."""
    head = _HEADS.get(event_type)
    if head is None:
        headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
        head = encode_headers(headers)
        if len(_HEADS) < 16:  # the six event types, once each
            _HEADS[event_type] = head
    return head


def event_frame(event_type: str, payload: dict[str, Any], *, padding: int = 1) -> bytes:
    """One event frame, its payload padded with the first `padding` characters of `PADDING`."""
    return encode_frame(_head(event_type), dumps({**payload, "p": PADDING[:padding]}))


def _delta_payload(wire: int, delta: dict[str, Any], padding: str) -> dict[str, Any]:
    """A contentBlockDelta payload, padded, its keys in sorted order (as `dumps` writes them): so its unsorted
    JSON, which a `common.JsonTemplate` is made of, is the sorted one."""
    return {"contentBlockIndex": wire, "delta": delta, "p": padding}


def _shape(outer: str, field: str, leaf: str) -> dict[str, Any]:
    """A delta `{field: leaf}`, nested in `{outer: ...}` when `outer` is given."""
    return {outer: {field: leaf}} if outer else {field: leaf}


_DELTA_HEAD = _head("contentBlockDelta")


class BedrockStreamEncoder:
    """Feed IR events one at a time, get the event stream bytes to send now."""

    def __init__(self) -> None:
        self._wire: dict[int, int] = {}  # IR content index -> contentBlockIndex (order of block starts)
        self._open: set[int] = set()
        self._empty: dict[int, dict[str, Any]] = {}  # open text / reasoning blocks without a delta -> empty delta
        self._held: ir.MessageStart | None = None
        self._usage = ir.Usage()  # UsageEvent figures, folded into metadata's usage
        self._extras: ir.ProviderExtras | None = None  # MessageStart's, for messageStart
        self._frames = 0
        self._templates: dict[tuple[int, str, str], common.JsonTemplate | None] = {}
        """Per contentBlockIndex and delta shape (`_leaf`), the template of its delta payload; None where the
        payload has no usable template."""

    def encode(self, event: ir.StreamEvent) -> bytes:
        """Bytes for one IR event (possibly empty)."""
        if isinstance(event, ir.ProviderEvent) and event.protocol != NAME:
            return b""  # another provider's event has no meaning on this wire
        if isinstance(event, ir.MessageStart):
            self._held = event  # sent with the first event that follows, unless that is a failure
            self._extras = event.extras
            self._usage = self._usage.merged(event.usage)  # messageStart has no usage: reported in metadata
            return b""
        out = b""
        if self._held is not None and not isinstance(event, ir.ErrorEvent):
            out += self._message_start()
        self._held = None
        return out + self._encode(event)

    def close(self) -> bytes:
        """Nothing follows metadata or an exception; a start never followed by anything is sent now."""
        held, self._held = self._held, None
        return self._message_start() if held is not None else b""

    def _frame(self, event_type: str, payload: dict[str, Any]) -> bytes:
        self._frames += 1
        return event_frame(event_type, payload, padding=padding_length(self._frames))

    def _message_start(self) -> bytes:
        return self._frame("messageStart", with_extras({"role": "assistant"}, self._extras))

    def _provider_event(self, event: ir.ProviderEvent) -> bytes:
        headers = {":event-type": event.type, ":content-type": "application/json", ":message-type": "event"}
        payload = event.data.encode("utf-8") if isinstance(event.data, str) else dumps(event.data)
        return encode_frame(encode_headers(headers), payload)

    def _encode(self, event: ir.StreamEvent) -> bytes:
        match event:
            case ir.TextStart():
                self._start(event.index)
                self._empty[event.index] = {"text": ""}
                return b""
            case ir.ThinkingStart():
                self._start(event.index)
                self._empty[event.index] = {"reasoningContent": {"text": ""}}
                return b""
            case ir.ToolCallStart():
                start = {"toolUse": {"name": event.name, "toolUseId": event.id}}
                return self._frame("contentBlockStart", {"contentBlockIndex": self._start(event.index), "start": start})
            case ir.RedactedThinking():
                self._start(event.index)
                delta = {"reasoningContent": {"redactedContent": redacted_to_wire(event.data)}}
                return self._delta(event.index, delta) + self._stop(event.index)
            case ir.TextDelta():
                return self._leaf(event.index, "", "text", event.text)
            case ir.ThinkingDelta():
                return self._leaf(event.index, "reasoningContent", "text", event.text)
            case ir.ToolCallDelta():
                return self._leaf(event.index, "toolUse", "input", event.arguments)
            case ir.TextEnd():
                return self._stop(event.index)
            case ir.ThinkingEnd():
                signature = b""
                if event.signature:
                    signature = self._delta(event.index, {"reasoningContent": {"signature": event.signature}})
                return signature + self._stop(event.index)
            case ir.ToolCallEnd():
                return self._stop(event.index)
            case ir.UsageEvent():
                self._usage = self._usage.merged(event.usage)  # no event of its own (see losses)
                return b""
            case ir.ProviderEvent():
                return self._provider_event(event)
            case ir.Done():
                return self._done(event)
            case ir.ErrorEvent():
                return stream_error_frame(event.error)
        raise TypeError(f"not an IR stream event: {event!r}")

    def _start(self, index: int) -> int:
        wire = len(self._wire)
        self._wire[index] = wire
        self._open.add(index)
        return wire

    def _index(self, index: int) -> int:
        if index not in self._wire:
            raise ValueError(f"IR event for content index {index}, which was never started")
        return self._wire[index]

    def _delta(self, index: int, delta: dict[str, Any]) -> bytes:
        self._empty.pop(index, None)
        wire = self._index(index)
        self._frames += 1
        return encode_frame(_DELTA_HEAD, dumps(_delta_payload(wire, delta, PADDING[: padding_length(self._frames)])))

    def _leaf(self, index: int, outer: str, field: str, leaf: str) -> bytes:
        """`_delta(index, _shape(outer, field, leaf))`, the payload written from a template (`common.JsonTemplate`,
        one per block and shape; the leaf and the padding its holes) instead of building and encoding it per delta.
        The framing (lengths, CRCs) is computed as for any frame."""
        wire = self._index(index)
        key = (wire, outer, field)
        if key not in self._templates:
            build = lambda hole, padding: _delta_payload(wire, _shape(outer, field, hole), padding)  # noqa: E731
            self._templates[key] = common.JsonTemplate.of(build, 2)
        template = self._templates[key]
        if template is None:
            return self._delta(index, _shape(outer, field, leaf))
        self._empty.pop(index, None)
        self._frames += 1
        payload = template.fill(leaf, PADDING[: padding_length(self._frames)])
        return encode_frame(_DELTA_HEAD, payload.encode())

    def _stop(self, index: int) -> bytes:
        out = b""
        if index in self._empty:  # Bedrock opens a text or reasoning block with a delta, even an empty one
            out = self._delta(index, self._empty[index])
        self._open.discard(index)
        return out + self._frame("contentBlockStop", {"contentBlockIndex": self._index(index)})

    def _done(self, event: ir.Done) -> bytes:
        # A grammar-valid stream has closed every block already; close any left so clients stay consistent.
        out = b"".join(self._stop(i) for i in sorted(self._open))
        stop = {"stopReason": stop_to_wire(event.stop_reason)}
        out += self._frame("messageStop", with_extras(stop, event.extras, _STOP_EXTRAS))
        usage = usage_to_wire(self._usage.merged(event.usage))
        metadata = {"metrics": {"latencyMs": LATENCY_MS}, "usage": usage}
        rest = {NAME: {k: v for k, v in (event.extras or {}).get(NAME, {}).items() if k not in _STOP_EXTRAS}}
        return out + self._frame("metadata", with_extras(metadata, rest))
