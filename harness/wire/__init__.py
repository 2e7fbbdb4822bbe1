"""Framing only: incremental SSE, NDJSON, JSON-array and AWS event stream decoders and encoders, plain HTTP messages.

Imports nothing else of the harness. Every decoder is chunk-boundary independent (any split of the same bytes
gives the same output) and raises `FramingError` with a byte offset on malformed input (`CutOff` at `close()` for a
tail the end of the stream left unfinished).
"""

from harness.wire.errors import CutOff, FramingError, WireError
from harness.wire.eventstream import EventMessage, EventStreamDecoder, EventStreamFramingError, encode_message
from harness.wire.http import HttpRequest, HttpResponse
from harness.wire.jsonarray import JSONArrayDecoder, JSONArrayEncoder
from harness.wire.ndjson import NDJSONDecoder, encode_ndjson
from harness.wire.sse import SSEDecoder, SSEEvent, encode_sse, encode_sse_comment, iter_sse

__all__ = [
    "CutOff",
    "EventMessage",
    "EventStreamDecoder",
    "EventStreamFramingError",
    "FramingError",
    "HttpRequest",
    "HttpResponse",
    "JSONArrayDecoder",
    "JSONArrayEncoder",
    "NDJSONDecoder",
    "SSEDecoder",
    "SSEEvent",
    "WireError",
    "encode_message",
    "encode_ndjson",
    "encode_sse",
    "encode_sse_comment",
    "iter_sse",
]
