"""The AWS Bedrock Converse codec: `POST /model/{modelId}/converse` and `/converse-stream`.

Registered as `bedrock` on import. Module map: request.py (requests, the model id in the path,
provider_fields), blocks.py (content blocks <-> IR parts), response.py (non-streamed), stream_decode.py /
stream_encode.py (the ConverseStream event stream, framed by `harness.wire.eventstream`), errors.py (HTTP errors
named by `x-amzn-errortype`, exceptions inside a stream), auth.py (SigV4 signing, bearer API keys, the
signature-shape check and the key patterns to scrub), mapping.py (usage, stop reasons), losses.py (what the
wire cannot carry), schemas/ (JSON Schemas of the wire).
"""

from __future__ import annotations

from harness.protocols import registry
from harness.protocols.bedrock import auth, errors, request, response
from harness.protocols.bedrock.facts import CAPABILITIES, FACTS
from harness.protocols.bedrock.losses import LOSSES, RESHAPES
from harness.protocols.bedrock.mapping import NAME
from harness.protocols.bedrock.reference import REFERENCE
from harness.protocols.bedrock.stream_decode import BedrockStreamDecoder
from harness.protocols.bedrock.stream_encode import BedrockStreamEncoder
from harness.protocols.kit import ComposedCodec
from harness.wire.eventstream import MEDIA_TYPE

__all__ = ["CAPABILITIES", "CODEC", "LOSSES", "RESHAPES", "BedrockStreamDecoder", "BedrockStreamEncoder"]


CODEC = registry.register(
    ComposedCodec(
        name=NAME,
        capabilities=CAPABILITIES,
        losses=LOSSES,
        reshapes=RESHAPES,
        stream_media_type=MEDIA_TYPE,
        reference=REFERENCE,  # what bedrock-runtime adds to what the encoders write (its request id header)
        decode_request=request.decode_request,  # model and streaming from the path
        encode_request=request.encode_request,  # POST /model/{modelId}/converse[-stream], unsigned
        with_auth=auth.with_auth,  # SigV4 from ACCESS_KEY_ID:SECRET[:REGION[:TOKEN]], or a bearer API key
        is_stream_request=request.is_stream_request,  # the path is /converse-stream
        decode_response=response.decode_response,
        response_encoder=lambda reply, _request: response.encode_response(reply),
        stream_decoder_factory=BedrockStreamDecoder,
        stream_encoder_factory=lambda _request: BedrockStreamEncoder(),
        decode_error=errors.decode_error,
        encode_error=errors.encode_error,  # x-amzn-errortype, the type's status
    ),
    facts=FACTS,
)
"""The registered codec."""
