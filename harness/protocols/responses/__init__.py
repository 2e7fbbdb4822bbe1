"""The OpenAI Responses API codec (`POST /v1/responses`), registered as `responses`.

Its facts live in this package: request_decode.py / request_encode.py (requests and their `provider_fields`
shape hints), items.py (output items <-> IR parts), response.py (the response object), stream_decode.py /
stream_state.py / stream_encode.py (the SSE event stream), errors.py (error bodies, `error` events,
`response.failed`), mapping.py (stop reasons, usage, reasoning effort), ids.py (id formats), losses.py (what the
wire cannot carry), schemas/ (JSON Schemas of every shape the encoders write).
"""

from __future__ import annotations

from harness import ir
from harness.protocols import registry
from harness.protocols.kit import ComposedCodec, guarded
from harness.protocols.responses import errors, request_decode, request_encode
from harness.protocols.responses import response as response_body
from harness.protocols.responses.facts import CAPABILITIES, FACTS
from harness.protocols.responses.losses import LOSSES, RESHAPES, STATEFUL, stateful_fields
from harness.protocols.responses.reader import NAME, dumps, load_object
from harness.protocols.responses.reference import REFERENCE, wire_events
from harness.protocols.responses.stream_decode import ResponsesStreamDecoder
from harness.protocols.responses.stream_encode import ResponsesStreamEncoder
from harness.wire.http import HttpRequest, HttpResponse

__all__ = [
    "CAPABILITIES",
    "CODEC",
    "LOSSES",
    "RESHAPES",
    "STATEFUL",
    "ResponsesStreamDecoder",
    "ResponsesStreamEncoder",
    "stateful_fields",
]


def encode_request(request: ir.Request) -> HttpRequest:
    """IR -> the request the `openai` SDK's `responses.create` would send (no auth)."""
    body = dumps(request_encode.encode_request_body(request))
    headers = {"content-type": "application/json", "accept": "application/json"}
    return HttpRequest(method="POST", path=request_encode.PATH, headers=headers, body=body)


def encode_response(response: ir.Response, request: ir.Request | None) -> HttpResponse:
    """IR -> a response object, echoing the request's settings when it is given."""
    body = dumps(response_body.encode_response_body(response, request))
    return HttpResponse(status=200, headers={"content-type": "application/json"}, body=body)


CODEC = registry.register(
    ComposedCodec(
        name=NAME,
        capabilities=CAPABILITIES,
        losses=LOSSES,
        reshapes=RESHAPES,
        reference=REFERENCE,  # what api.openai.com adds to what the encoders write (ids, echoed fields, ...)
        decode_request=guarded(NAME, lambda http: request_decode.decode_request(http.body)),
        encode_request=encode_request,
        is_stream_request=lambda http: load_object(http.body, what="request body").get("stream") is True,
        decode_response=guarded(NAME, response_body.decode_response),
        response_encoder=encode_response,
        stream_decoder_factory=ResponsesStreamDecoder,
        stream_encoder_factory=ResponsesStreamEncoder,  # its response objects echo the request's settings
        decode_error=errors.decode_error,
        encode_error=errors.encode_error,
        wire_events=wire_events,
    ),
    facts=FACTS,
)
"""The registered codec; its own SDK client drives its baseline."""
