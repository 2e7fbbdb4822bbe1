"""vercel/ai's recorded provider answers, read where `fetch` put the snapshot (see tests/protocols/mirror.py).

Each `*.chunks.txt` holds the JSON payload of every SSE event of one recorded stream, one a line (the `data: [DONE]`
line of chat-style streams is not kept), and each `*.json` one recorded response body. Some files hold several
consecutive responses of a multi-step run (each begins with `response.created` / `message_start`); they are split
there, as each was its own HTTP response. The facts a test expects are read from the capture itself here, by plain
JSON reading independent of the codecs, so a decoder that drops or alters a fact fails.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from typing import Any

import pytest

from harness import ir
from harness.protocols import decode_events, registry
from harness.stream import accumulate
from tests.protocols.mirror import VERCEL_AI

FIXTURES = "__fixtures__"


def listing() -> list[str]:
    """Every fixture path in the snapshot (empty when the snapshot is absent)."""
    if not (VERCEL_AI.path / "HEAD").is_file():
        return []
    done = subprocess.run(
        ["git", "--git-dir", str(VERCEL_AI.path), "ls-tree", "-r", "--name-only", "HEAD"],
        capture_output=True,
        timeout=60,
        check=True,
    )
    return [p for p in done.stdout.decode().splitlines() if f"/{FIXTURES}/" in p]


def params(paths: list[Any]) -> list[Any]:
    """pytest params over `paths`, or one skipped param saying how to get the snapshot."""
    if paths:
        return paths
    why = f"vercel/ai snapshot not found at {VERCEL_AI.path} (fetch github:vercel/ai or set {VERCEL_AI.env})"
    return [pytest.param("absent", marks=pytest.mark.skip(reason=why))]


def events(path: str) -> list[dict[str, Any]]:
    """The recorded event payloads of a `.chunks.txt` file."""
    return [json.loads(line) for line in VERCEL_AI.read(path).splitlines() if line.strip()]


def body(path: str) -> bytes:
    """A recorded `.json` body, as bytes."""
    return VERCEL_AI.read(path).encode("utf-8")


def split(payloads: list[dict[str, Any]], start: str) -> list[list[dict[str, Any]]]:
    """The responses of a multi-step file: a new one begins at each event whose `type` is `start`."""
    out: list[list[dict[str, Any]]] = []
    for payload in payloads:
        if payload.get("type") == start or not out:
            out.append([])
        out[-1].append(payload)
    return out


def sse(payloads: list[dict[str, Any]], *, named: bool = False, done: bool = False) -> bytes:
    """The wire bytes of a stream: one `data:` event per payload (with `event: <type>` when `named`), and a final
    `data: [DONE]` when `done` (chat-style streams end with it; the fixture format drops it)."""
    lines = []
    for payload in payloads:
        name = f"event: {payload['type']}\n" if named else ""
        lines.append(f"{name}data: {json.dumps(payload, ensure_ascii=False)}\n\n")
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode("utf-8")


@dataclass
class Facts:
    """What an answer says, in a form both the capture and the IR can be read into."""

    texts: list[str] = field(default_factory=list)
    """Answer text blocks, in order (chat and Gemini: one joined string, as those wires have no block boundary)."""
    thinking: str = ""
    """All reasoning text, joined."""
    calls: list[tuple[str | None, str, Any]] = field(default_factory=list)
    """Tool calls: (id, name, parsed arguments)."""
    stop: str | None = None
    """The provider's stop reason, as the wire spells it."""
    usage: tuple[int | None, int | None] = (None, None)
    """(input tokens including cached ones, output tokens including reasoning)."""

    COUNT = 5
    """Facts compared per answer."""


def decoded(codec_name: str, data: bytes, *, stream: bool) -> ir.Response:
    """The IR answer the harness's codec reads from wire bytes; a stream that ends in an error fails the test."""
    codec = registry.get(codec_name)
    if not stream:
        return codec.decode_response(data)
    result = accumulate(decode_events(codec, [data]))
    assert result.error is None, result.error
    return result.response


def ir_facts(response: ir.Response, *, join: bool, ids: bool = True) -> Facts:
    """The facts of an IR answer (`join`: text blocks as one string; `ids`: keep call ids)."""
    texts = [p.text for p in response.content if isinstance(p, ir.TextPart)]
    thinking = "".join(p.text for p in response.content if isinstance(p, ir.ThinkingPart))
    calls = [(p.id if ids else None, p.name, p.arguments) for p in response.content if isinstance(p, ir.ToolCallPart)]
    usage = response.usage or ir.Usage()
    return Facts(
        texts=["".join(texts)] if join else texts,
        thinking=thinking,
        calls=calls,
        stop=response.stop_reason.raw if response.stop_reason else None,
        usage=(usage.input_tokens, usage.output_tokens),
    )


def arguments(raw: Any) -> Any:
    """Parsed tool-call arguments (a string of JSON, or already an object; empty means no arguments)."""
    if isinstance(raw, str):
        return json.loads(raw) if raw.strip() else {}
    return raw
