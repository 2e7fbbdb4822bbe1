"""The Ollama reference backend: what an Ollama server says beyond what the encoders write, and how its bodies
split into wire events for the shape comparison (`harness.protocols.shape`).

Measured against the corpus (docs/shape.md). A real reply's final object carries the durations (nanoseconds)
of the whole call, the model load, the prompt evaluation and the generation; Ollama Cloud adds an
`x-request-id` header. `created_at` is fixed per reply so the same scenario always records the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.ollama._fields import PROTOCOL
from harness.protocols.reference import number, token
from harness.protocols.shape import WireEvent
from harness.wire.http import HttpResponse

DIFFERENCES: Mapping[str, str] = MappingProxyType(
    {
        "path ours response *_duration": (
            "the only non-streamed recording is from Ollama Cloud, which reports only `total_duration`; a local "
            "server reports all four durations (as the streamed local recording and docs.ollama.com/api/usage "
            "show for a non-streaming call), and so does the reference"
        ),
        "event real chunk:empty": (
            "Ollama Cloud sends a line with an empty message before the final one; the IR never carries an empty "
            "delta, and a local server sends none"
        ),
        "sequence both @2 chunk:thinking > chunk:content > chunk:empty > done *": "the empty line: see above",
    }
)
"""Shape differences from the real wire that remain, with their reasons (see `Reference.differences`)."""

_OPAQUE = frozenset({"arguments"})
"""A tool call's `arguments` object holds the user's data, not the wire's shape."""

HEX = "0123456789abcdef"


def durations(usage: ir.Usage, seed: str) -> dict[str, int]:
    """The final object's durations in nanoseconds: a plausible local server (prompt at ~0.5 ms and generation at
    ~5 ms a token, plus load and overhead), derived from the seed."""
    prompt = (usage.input_tokens or 0) * 500_000 + number(seed + "/p", 1_000_000, 9_000_000)
    generation = (usage.output_tokens or 0) * 5_000_000 + number(seed + "/e", 1_000_000, 9_000_000)
    load = number(seed + "/l", 20_000_000, 90_000_000)
    return {
        "total_duration": load + prompt + generation + number(seed + "/t", 100_000, 900_000),
        "load_duration": load,
        "prompt_eval_duration": prompt,
        "eval_duration": generation,
    }


def created_at(seed: str) -> str:
    """A fixed `created_at` for a reply (RFC 3339 with nanoseconds, as Ollama writes it)."""
    day, minute, second = number(seed + "/day", 1, 28), number(seed + "/m", 0, 59), number(seed + "/s", 0, 59)
    return f"2025-08-{day:02d}T12:{minute:02d}:{second:02d}.{token(seed, 9, '0123456789')}Z"


class OllamaReference:
    """What an Ollama server adds: the durations on the final object, a fixed `created_at`, a request id."""

    differences: Mapping[str, str] = DIFFERENCES

    def events(self, events: list[ir.StreamEvent], *, request: ir.Request, seed: str) -> list[ir.StreamEvent]:
        """`created_at` on the start, the durations on the final line."""
        out: list[ir.StreamEvent] = []
        for event in events:
            if isinstance(event, ir.MessageStart):
                event = event.model_copy(update={"extras": {PROTOCOL: {"created_at": created_at(seed)}}})
            elif isinstance(event, ir.Done):
                extras = {PROTOCOL: durations(event.usage or ir.Usage(), seed)}
                event = event.model_copy(update={"extras": ir.merge_extras(extras, event.extras)})
            out.append(event)
        return out

    def response(self, response: ir.Response, *, request: ir.Request, seed: str) -> ir.Response:
        """The durations and a fixed `created_at`."""
        extras = {PROTOCOL: {"created_at": created_at(seed), **durations(response.usage, seed)}}
        return response.model_copy(update={"extras": ir.merge_extras(extras, response.extras)})

    def error(self, response: HttpResponse, *, error: ir.IRError, seed: str) -> HttpResponse:
        """Errors as the encoder writes them."""
        return response

    def headers(self, *, stream: bool, status: int, seed: str) -> dict[str, str]:
        """Ollama Cloud's request id."""
        h = token(seed + "/request", 32, HEX)
        return {"x-request-id": f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{h[16:20]}-{h[20:]}"}


REFERENCE = OllamaReference()
"""The Ollama reference (the codec's `reference`)."""


def wire_events(body: bytes, *, stream: bool, status: int) -> list[WireEvent]:
    """The typed events of an `/api/chat` body: each NDJSON line typed by what its message carries
    (`chunk:content`, `chunk:thinking`, `chunk:tool_calls`) or `done` for the final one; or the whole body
    (`response`, or `error` for status >= 400 and for an `{"error": ...}` line)."""
    if status >= 400 or not stream:
        data = common.load_json(PROTOCOL, body, what="body")
        kind = "error" if status >= 400 or (isinstance(data, dict) and "error" in data) else "response"
        return [WireEvent(kind, data, _OPAQUE)]
    out: list[WireEvent] = []
    for number_, line in enumerate(body.splitlines()):
        if not line.strip():
            continue
        data = common.load_json(PROTOCOL, line, what=f"line {number_ + 1}")
        out.append(WireEvent(line_type(data), data, _OPAQUE))
    return out


def line_type(data: Any) -> str:
    """What one stream line carries, as an event type (see `wire_events`)."""
    if not isinstance(data, dict):
        return "line:other"
    if "error" in data:
        return "error"
    if data.get("done"):
        return "done"
    message = data.get("message")
    message = message if isinstance(message, dict) else {}
    features = [k for k in ("thinking", "content", "tool_calls") if message.get(k)]
    return "chunk:" + "+".join(features or ["empty"])
