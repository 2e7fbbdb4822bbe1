"""Wire protocols: one codec per protocol, profiles for provider flavours, reached through the registry."""

from harness.protocols.base import (
    Codec,
    DecodeError,
    StreamDecoder,
    StreamEncoder,
    decode_events,
    encode_events,
)
from harness.protocols.registry import get, names, register
from harness.wire.http import HttpRequest, HttpResponse

__all__ = [
    "Codec",
    "DecodeError",
    "HttpRequest",
    "HttpResponse",
    "StreamDecoder",
    "StreamEncoder",
    "decode_events",
    "encode_events",
    "get",
    "names",
    "register",
]
