"""The codec contract: a stream decoder raises only `DecodeError`, framing errors included (issue 22)."""

from __future__ import annotations

import pytest

from harness.protocols import DecodeError, registry

INVALID_UTF8 = b'data: {"a": "\xff\xfe"}\n\n'


@pytest.mark.parametrize("name", registry.names())
def test_invalid_utf8_in_a_stream_raises_decode_error_naming_the_protocol(name: str) -> None:
    decoder = registry.get(name).stream_decoder()
    with pytest.raises(DecodeError) as caught:
        decoder.feed(INVALID_UTF8 * 2)
        decoder.close()
    assert caught.value.offset is not None or caught.value.protocol
