"""Quirk: Gemini carries a thinking block's signature on the part after it. When the stream ends in an error right
after the block, that part never comes, so the encoder sends the signature on an empty text part before the error
(found by `conformance fuzz`, anthropic->gemini stream: the signature was lost and the gate blamed the proxy)."""

from __future__ import annotations

from harness import ir
from harness.protocols import decode_events, encode_events
from tests.protocols.gemini.support import CODEC

ERROR = ir.IRError.of(ir.ErrorKind.SERVER, "The server had an error while processing your request.")


def test_a_signature_pending_at_a_midstream_error_is_sent_before_the_error() -> None:
    events = [
        ir.MessageStart(id="r1", model="gemini-2.5-flash"),
        ir.ThinkingStart(index=0),
        ir.ThinkingDelta(index=0, text="0"),
        ir.ThinkingEnd(index=0, signature="c2lnbmF0dXJl"),
        ir.ErrorEvent(error=ERROR),
    ]
    body = encode_events(CODEC, events)
    assert body.count(b'"thoughtSignature":"c2lnbmF0dXJl"') == 1
    assert body.index(b"thoughtSignature") < body.index(b'"error"')
    decoded = decode_events(CODEC, [body])
    ends = [e for e in decoded if isinstance(e, ir.ThinkingEnd)]
    assert [e.signature for e in ends] == ["c2lnbmF0dXJl"]
    assert isinstance(decoded[-1], ir.ErrorEvent) and decoded[-1].error.kind is ir.ErrorKind.SERVER


def test_no_signature_no_extra_part_before_the_error() -> None:
    events = [
        ir.MessageStart(id="r1", model="gemini-2.5-flash"),
        ir.ThinkingStart(index=0),
        ir.ThinkingDelta(index=0, text="0"),
        ir.ThinkingEnd(index=0),
        ir.ErrorEvent(error=ERROR),
    ]
    body = encode_events(CODEC, events)
    assert b"thoughtSignature" not in body
    assert body.count(b"data: ") == 2  # the thought, then the error
