"""The AWS Bedrock Converse codec: `POST /model/{modelId}/converse` and `/converse-stream`.

Registered as `bedrock` on import. Module map: request.py (requests, the model id in the path,
provider_fields), blocks.py (content blocks <-> IR parts), response.py (non-streamed), stream_decode.py /
stream_encode.py (the ConverseStream event stream, framed by `harness.wire.eventstream`), errors.py (HTTP errors
named by `x-amzn-errortype`, exceptions inside a stream), auth.py (SigV4 signing, bearer API keys, the
signature-shape check and the key patterns to scrub), mapping.py (usage, stop reasons), losses.py (what the
wire cannot carry), schemas/ (JSON Schemas of the wire).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

from harness import ir
from harness.ir import Capability
from harness.protocols import registry
from harness.protocols.base import FramedDecoder, StreamDecoder
from harness.protocols.bedrock import auth, errors, request, response
from harness.protocols.bedrock.facts import FACTS
from harness.protocols.bedrock.losses import LOSSES, RESHAPES
from harness.protocols.bedrock.mapping import NAME
from harness.protocols.bedrock.reference import REFERENCE, BedrockReference
from harness.protocols.bedrock.stream_decode import BedrockStreamDecoder
from harness.protocols.bedrock.stream_encode import BedrockStreamEncoder
from harness.wire.eventstream import MEDIA_TYPE
from harness.wire.http import HttpRequest, HttpResponse

__all__ = ["LOSSES", "RESHAPES", "BedrockCodec", "BedrockStreamDecoder", "BedrockStreamEncoder"]


class BedrockCodec:
    """Bedrock Converse in all four directions (see the package docstring)."""

    name = NAME
    family = NAME
    stream_media_type = MEDIA_TYPE
    losses: ClassVar[Mapping[str, str]] = LOSSES
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.TOOLS,
            Capability.PARALLEL_TOOLS,
            Capability.NESTED_TOOL_SCHEMA,
            Capability.TOOL_CHOICE,
            Capability.VISION,
            Capability.FILES,
            Capability.THINKING,
            Capability.THINKING_SIGNATURE,
            Capability.JSON_SCHEMA,
            Capability.STOP_SEQUENCES,
            Capability.PROMPT_CACHE,
            Capability.TOP_P,
            Capability.STOP_MAX_TOKENS,
            Capability.STREAM_ERROR_FIRST,
            Capability.NOT_FOUND_ERROR,
            Capability.OVERLOADED_ERROR,
        }
    )
    """No json_object (Converse needs a schema), models_list (another service: bedrock, not bedrock-runtime) or
    retry_after (Bedrock sends none): see `losses`."""
    secret_headers: ClassVar[frozenset[str]] = auth.SECRET_HEADERS
    """Request headers a cassette must not keep (beyond the contract: for the scrubber, through the registry)."""
    key_patterns: ClassVar[tuple[re.Pattern[str], ...]] = auth.KEY_PATTERNS
    """Shapes of Bedrock credentials in text, for the scrubber's scanner."""
    reference: ClassVar[BedrockReference] = REFERENCE
    """What bedrock-runtime adds to what the encoders write (its request id header)."""

    def auth_problems(self, request_: HttpRequest) -> list[str]:
        """What is wrong with the shape of a request's SigV4 signature ([] when right), checked without keys: for
        the replay server (beyond the contract, reached through the registry)."""
        return auth.signature_problems(request_.headers)

    def decode_request(self, request_: HttpRequest) -> ir.Request:
        """A Converse or ConverseStream request -> IR (model and streaming from the path)."""
        return request.decode_request(request_)

    def encode_request(self, request_: ir.Request) -> HttpRequest:
        """IR -> `POST /model/{modelId}/converse[-stream]`, unsigned."""
        return request.encode_request(request_)

    def with_auth(self, request_: HttpRequest, api_key: str) -> HttpRequest:
        """The request signed with SigV4 from `ACCESS_KEY_ID:SECRET[:REGION[:TOKEN]]`, or carrying a Bedrock API
        key as a bearer token (see `harness.protocols.bedrock.auth`)."""
        return auth.with_auth(request_, api_key)

    def is_stream_request(self, request_: HttpRequest) -> bool:
        """Whether the path is `/converse-stream`."""
        return request.is_stream_request(request_)

    def decode_response(self, body: bytes) -> ir.Response:
        """A Converse response body -> IR."""
        return response.decode_response(body)

    def encode_response(self, response_: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
        """IR -> a Converse response (the request is not needed)."""
        return response.encode_response(response_)

    def stream_decoder(self) -> StreamDecoder:
        """A fresh ConverseStream decoder."""
        return FramedDecoder(self.name, BedrockStreamDecoder())

    def stream_encoder(self, *, request: ir.Request | None = None) -> BedrockStreamEncoder:
        """A fresh ConverseStream encoder (the request is not needed)."""
        return BedrockStreamEncoder()

    def decode_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
        """An HTTP error response -> IR error; never raises."""
        return errors.decode_error(status, headers, body)

    def encode_error(self, error: ir.IRError) -> HttpResponse:
        """IR error -> Bedrock's error response (`x-amzn-errortype`, the type's status)."""
        return errors.encode_error(error)


CODEC = registry.register(BedrockCodec(), facts=FACTS)
"""The registered codec instance."""
