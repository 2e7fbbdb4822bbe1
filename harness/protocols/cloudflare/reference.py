"""The Workers AI reference backend: what api.cloudflare.com says beyond what the encoders write.

Every answer that passes Cloudflare's edge, a stream or an error too, carries a `cf-ray` header (16 hex digits
and the data center, `9f74ce61c87211fd-ORD`, as the corpus's OpenAI recordings through Cloudflare show); it is
derived from the seed, so a scenario always records the same bytes. The corpus holds no Workers AI answer, so
the shape is not measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness import ir
from harness.protocols.reference import token
from harness.wire.http import HttpResponse

HEX = "0123456789abcdef"


def ray_id(seed: str) -> str:
    """A `cf-ray` value: 16 hex digits and a data center."""
    return f"{token(seed + '/ray', 16, HEX)}-SJC"


class CloudflareReference:
    """What Cloudflare adds: the `cf-ray` header of its edge."""

    differences: Mapping[str, str] = MappingProxyType({})
    """None measured (no Workers AI recording in the corpus)."""

    def events(self, events: list[ir.StreamEvent], *, request: ir.Request, seed: str) -> list[ir.StreamEvent]:
        """The events unchanged."""
        return events

    def response(self, response: ir.Response, *, request: ir.Request, seed: str) -> ir.Response:
        """The response unchanged."""
        return response

    def error(self, response: HttpResponse, *, error: ir.IRError, seed: str) -> HttpResponse:
        """The error envelope unchanged."""
        return response

    def headers(self, *, stream: bool, status: int, seed: str) -> dict[str, str]:
        """`cf-ray`, on every answer."""
        return {"cf-ray": ray_id(seed)}


REFERENCE = CloudflareReference()
"""The Workers AI reference (the codec's `reference`)."""
