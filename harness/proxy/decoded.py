"""Requests decoded to IR once per exact content. The tap decodes what the proxy sent upstream back to IR for
the trace; in a matrix run the same upstream request goes out again and again (every frontend translating a
scenario to the same backend sends the same bytes), and a codec's `decode_request` is a function of the request
alone, so each distinct one is decoded once. (The client's own requests are not worth it: each run's carries its
own run key.)"""

from __future__ import annotations

from harness import ir
from harness.protocols import Codec, HttpRequest

DECODED_LIMIT = 4096
"""Distinct requests kept decoded (a run's worth many times over); past it, the memory starts afresh."""

_Key = tuple[str, str, str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...], bytes]


class DecodedRequests:
    """`codec.decode_request(request)`, remembered by the codec's name and everything the request holds (method,
    path, query, headers, body, in order). IR is immutable, so one decoded request can stand in every exchange that
    sent those bytes. A request that does not decode is not remembered: its DecodeError is raised afresh."""

    def __init__(self, limit: int = DECODED_LIMIT) -> None:
        self.limit = limit
        self._decoded: dict[_Key, ir.Request] = {}

    def __call__(self, codec: Codec, request: HttpRequest) -> ir.Request:
        """The request decoded with `codec` (raises what `codec.decode_request` raises)."""
        key = (
            codec.name,
            request.method,
            request.path,
            tuple(request.query.items()),
            tuple(request.headers.items()),
            request.body,
        )
        decoded = self._decoded.get(key)
        if decoded is None:
            decoded = codec.decode_request(request)
            if len(self._decoded) >= self.limit:
                self._decoded.clear()
            self._decoded[key] = decoded
        return decoded
