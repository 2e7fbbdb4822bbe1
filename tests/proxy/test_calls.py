"""`calls.body_chunks`: the upstream body read raw when nothing is to be decoded, the same chunks as `aiter_bytes`."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator

import httpx2
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.proxy.calls import body_chunks


class _Chunks(httpx2.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def _response(chunks: list[bytes], encoding: str | None, read: bool) -> httpx2.Response:
    headers = {"content-encoding": encoding} if encoding else {}
    if read:  # a transport that hands over a body it has read already
        return httpx2.Response(200, headers=headers, content=b"".join(chunks))
    return httpx2.Response(200, headers=headers, stream=_Chunks(chunks))


async def _all(chunks: AsyncIterator[bytes]) -> list[bytes]:
    return [chunk async for chunk in chunks]


@settings(max_examples=60, deadline=None)
@given(
    pieces=st.lists(st.binary(max_size=40), max_size=12),
    encoding=st.sampled_from([None, "identity", "gzip"]),
    read=st.booleans(),
)
def test_body_chunks_are_the_chunks_aiter_bytes_gives(pieces: list[bytes], encoding: str | None, read: bool) -> None:
    if encoding == "gzip":
        packer = zlib.compressobj(wbits=31)
        body = packer.compress(b"".join(pieces)) + packer.flush()
        pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
    expected = asyncio.run(_all(_response(pieces, encoding, read).aiter_bytes()))
    assert asyncio.run(_all(body_chunks(_response(pieces, encoding, read)))) == expected
