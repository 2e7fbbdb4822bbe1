"""`close()` tells a tail the end of the stream left unfinished (`CutOff`) from a fault met before the end (the
sticky `FramingError` a `feed` met), for every framing decoder: the protocol decoders that forgive a stream that
ended early catch `CutOff` only, so a malformed whole line is never forgiven as a cut-off one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from harness.wire import (
    CutOff,
    EventStreamDecoder,
    EventStreamFramingError,
    FramingError,
    JSONArrayDecoder,
    NDJSONDecoder,
    SSEDecoder,
    encode_message,
)

MESSAGE = encode_message({":event-type": "chunk", ":message-type": "event"}, b'{"a":1}')
BAD_CRC = MESSAGE[:-1] + bytes([MESSAGE[-1] ^ 0xFF])

# (decoder, a stream whose last piece the end cut off, a stream with a malformed whole piece after a good one)
CASES: dict[str, tuple[Callable[[], Any], bytes, bytes]] = {
    "sse": (SSEDecoder, b"data: 1\n\ndata: \xff", b"data: 1\n\ndata: \xff\n\n"),
    "ndjson": (NDJSONDecoder, b'{"a":1}\n{"b":', b'{"a":1}\n{bad\n'),
    "jsonarray": (JSONArrayDecoder, b'[{"a":1},{"b":', b'[{"a":1},]'),
    "eventstream": (EventStreamDecoder, MESSAGE + MESSAGE[:20], MESSAGE + BAD_CRC),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_tail_cut_off_by_the_end_raises_cut_off_at_close(name: str) -> None:
    make, cut, _ = CASES[name]
    decoder = make()
    assert len(decoder.feed(cut)) == 1  # the whole first piece is read
    with pytest.raises(CutOff) as info:
        decoder.close()
    assert info.value.offset is not None and info.value.offset > 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_malformed_whole_piece_before_the_end_is_no_cut_off_at_close(name: str) -> None:
    make, _, malformed = CASES[name]
    decoder = make()
    assert len(decoder.feed(malformed)) == 1  # the good piece first; the error waits for the next call
    with pytest.raises(FramingError) as info:
        decoder.close()
    assert not isinstance(info.value, CutOff), info.value


def test_an_event_stream_cut_off_is_still_its_truncated_framing_error() -> None:
    decoder = EventStreamDecoder()
    decoder.feed(MESSAGE[:5])
    with pytest.raises(EventStreamFramingError) as info:
        decoder.close()
    assert isinstance(info.value, CutOff)
    assert info.value.reason == "truncated"
    assert str(info.value) == "event stream: stream ends inside a message (5 bytes of a 12-byte prelude) at byte 0"
