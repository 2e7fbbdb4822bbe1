"""Checks the runner adds to a run beyond the scenario's own: they look at what the proxy did on the wire, which
the SDK may hide.

- `frontend_wire`: the stream the proxy sent decodes cleanly with its own protocol's decoder and follows the
  event grammar (an Anthropic stream with `data: [DONE]` after message_stop is wrong even though the Anthropic
  SDK skips unnamed events).
- `stream.text_not_buffered`: text reached the client while the upstream was still sending it. Chunk ordinals,
  not clock times, so the verdict does not depend on machine load.
- `secret_leak`: the upstream key the proxy holds (planted by the runner) appears nowhere the client or the
  trace can see.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness.diff import LEAK_CHECK
from harness.protocols import registry
from harness.proxy import Exchange
from harness.record.scrub import find_secrets
from harness.stream import validate
from harness.trace.model import Check

MIN_TEXT_CHUNKS = 3
"""Upstream text chunks below which buffering is not judged: a short answer may fairly arrive in one piece."""
LEAK = LEAK_CHECK
"""Name of the secret-leak check (the judge makes a failed one a proxy bug whatever else happened)."""
FRONTEND_WIRE = "frontend_wire"
"""Name of the check that the client's stream decodes cleanly with its own protocol."""
TEXT_NOT_BUFFERED = "stream.text_not_buffered"
"""Name of the check that text was not held back."""


def frontend_wire(protocol: str, chunks: Sequence[bytes]) -> Check:
    """The frontend stream decoded with `protocol`'s own decoder: no decode error, no grammar violation."""
    decoder = registry.get(protocol).stream_decoder()
    events = []
    try:
        for chunk in chunks:
            events += decoder.feed(chunk)
        events += decoder.close()
    except ValueError as exc:  # DecodeError or FramingError: both carry the byte offset
        return Check(name=FRONTEND_WIRE, passed=False, expected=f"a valid {protocol} stream", actual=str(exc))
    violations = [str(v) for v in validate(events)]
    return Check(
        name=FRONTEND_WIRE, passed=not violations, expected=f"a valid {protocol} stream", actual=violations or "valid"
    )


def on_translated_stream(frontend: str, exchange: Exchange) -> list[Check]:
    """The runner's own checks on a translated stream: what the client received decodes cleanly with its
    protocol, and its text was not held back."""
    out: list[Check] = []
    if exchange.frontend_status == 200 and exchange.frontend_chunks and not exchange.truncated:
        out.append(frontend_wire(frontend, exchange.frontend_chunks))
    buffering = text_buffering(exchange)
    if buffering is not None:
        out.append(buffering)
    return out


def text_buffering(exchange: Exchange) -> Check | None:
    """Whether text was held back until the upstream had sent all of it; None when there is too little to judge."""
    upstream, sent = exchange.upstream_text_chunks, exchange.frontend_text_chunks
    if len(upstream) < MIN_TEXT_CHUNKS or not sent or exchange.truncated:
        return None
    buffered = min(sent) >= upstream[-1]
    actual = {
        "upstream_text_chunks": len(upstream),
        "last_upstream_text_chunk": upstream[-1],
        "first_client_text_after_upstream_chunk": min(sent),
        "client_text_chunks": len(sent),
    }
    expected = f"text sent before upstream chunk {upstream[-1]} (the last one carrying text)"
    return Check(name=TEXT_NOT_BUFFERED, passed=not buffered, expected=expected, actual=actual)


def leaks(parts: Mapping[str, str], planted: str) -> list[str]:
    """Names of the parts that contain the planted key, or a real-looking key (`harness.record.scrub`)."""
    return [name for name, text in parts.items() if find_secrets(text, [planted])]


def leak_check(where: list[str]) -> Check:
    """The secret-leak check result for the parts found to carry a key."""
    actual = f"upstream key found in {', '.join(where)}" if where else "none found"
    expected = "no upstream key in anything the client or the trace sees"
    return Check(name=LEAK, passed=not where, expected=expected, actual=actual)
