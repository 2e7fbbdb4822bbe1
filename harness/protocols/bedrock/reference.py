"""The Bedrock reference backend: what bedrock-runtime says beyond what the encoders write.

Every Bedrock answer, a streamed one too, names its request in an `x-amzn-requestid` header (a version-4
UUID), as the recorded errors show (tests/protocols/bedrock/recordings.py); it is derived from the seed, so a
scenario always records the same bytes. The corpus holds no Bedrock answer, so the shape is not measured.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from types import MappingProxyType

from harness import ir
from harness.wire.http import HttpResponse

REQUEST_ID_HEADER = "x-amzn-requestid"
"""The header AWS services name a request by."""


def request_id(seed: str) -> str:
    """A request id shaped like Bedrock's (a version-4 UUID), derived from `seed` so it is reproducible."""
    return str(uuid.UUID(bytes=hashlib.sha256(seed.encode("utf-8")).digest()[:16], version=4))


class BedrockReference:
    """What Bedrock adds: its request id header."""

    differences: Mapping[str, str] = MappingProxyType({})
    """None measured (no Bedrock recording in the corpus)."""

    def events(self, events: list[ir.StreamEvent], *, request: ir.Request, seed: str) -> list[ir.StreamEvent]:
        """The events unchanged."""
        return events

    def response(self, response: ir.Response, *, request: ir.Request, seed: str) -> ir.Response:
        """The response unchanged."""
        return response

    def error(self, response: HttpResponse, *, error: ir.IRError, seed: str) -> HttpResponse:
        """The error unchanged (its request id is a header)."""
        return response

    def headers(self, *, stream: bool, status: int, seed: str) -> dict[str, str]:
        """`x-amzn-requestid`, on every answer."""
        return {REQUEST_ID_HEADER: request_id(seed)}


REFERENCE = BedrockReference()
"""The Bedrock reference (the codec's `reference`)."""
