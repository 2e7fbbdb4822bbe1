"""The facts of AWS Bedrock Converse (see `harness.protocols.facts`)."""

from __future__ import annotations

import re
from urllib.parse import quote

from harness.ir import Capability
from harness.protocols import facts
from harness.protocols.bedrock.auth import DEFAULT_REGION, PLANTED_ACCESS_KEY, endpoint_host, rejection
from harness.protocols.bedrock.reference import REQUEST_ID_HEADER

OPERATIONS = ("converse", "converse-stream")
"""The generation operations a frontend request may call (the last path segment)."""


def quote_model(model: str) -> str:
    """A model id as boto3 writes it into the path: percent-encoded, `:` and `/` too (an inference-profile ARN)."""
    return quote(model, safe="")


MODEL_IN_PATH = facts.ModelInPath(
    pattern=re.compile(r"^/model/(?P<model>.+)/(?P<action>[A-Za-z-]+)$"),
    rewrite="/model/{model}/{action}",
    label_format="POST /model/{{model}}/{action}",
    shape="/model/MODEL_ID/converse or /model/MODEL_ID/converse-stream",
    actions=OPERATIONS,
    quote=quote_model,
)
"""The model id is the path before the operation; an ARN's `/` arrives percent-decoded, so it may span segments."""
ROUTES = (facts.Route("/model/{target:path}"),)
"""One route for both operations: `/model/{modelId}/converse` and `/model/{modelId}/converse-stream`."""
MODEL_LIST = None
"""No model listing: ListFoundationModels belongs to the `bedrock` control plane, not bedrock-runtime."""
REAL_BASE_URL = f"https://{endpoint_host(DEFAULT_REGION)}"
"""Where to record from (another region: `https://bedrock-runtime.<region>.amazonaws.com`)."""
KEY_ENV = ("BEDROCK_API_KEY", "AWS_BEARER_TOKEN_BEDROCK")
"""Variables holding the key string `with_auth` takes, first set wins: `ACCESS_KEY_ID:SECRET[:REGION[:TOKEN]]`
or a Bedrock API key (`auth.key_from_environment` builds the former from AWS_ACCESS_KEY_ID & co)."""
DEFAULT_MODEL = "us.amazon.nova-micro-v1:0"
"""Model recorded when none is given (cheap, streams, takes tools; an inference profile id)."""
TEXT_CHUNK_SIZE = 13
"""Characters per text delta, as recorded (Nova ~13, Claude 8 to 36); tool input arrives whole or in a few
fragments (one delta in 3 of the 4 recorded calls), so argument chunking stays whole."""
RESPONSE_HEADERS = {"x-amzn-requestid": "a UUID"}
"""Headers every Bedrock response carries beside content-type (errors add x-amzn-errortype)."""

CAPABILITIES = frozenset(
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


FACTS = facts.ProtocolFacts(
    frontend=facts.Frontend(routes=ROUTES, model=MODEL_IN_PATH, request_id_header=REQUEST_ID_HEADER),
    model_list=MODEL_LIST,
    sdk=facts.Sdk(
        driver="harness.drivers.bedrock_sdk",
        package="boto3",
        http_client="httpx2",
        # No models_list (bedrock-runtime has none) and no retry_after (Bedrock sends none).
        capabilities=CAPABILITIES,
    ),
    real=facts.RealEndpoint(REAL_BASE_URL, KEY_ENV, DEFAULT_MODEL),
    upstream_model=DEFAULT_MODEL,
    wire_specs=(facts.WireSpec("harness.protocols.bedrock.spec", "bedrock"),),
    secrets=facts.Secrets(
        headers=frozenset({"x-amz-security-token"}),
        key_patterns=(r"(?:AKIA|ASIA)[A-Z0-9]{16}", r"Signature=[0-9a-f]{64}", r"ABSK[A-Za-z0-9+/=]{20,}"),
        # An upstream key is a credential pair the proxy signs with (SigV4), as for real, never a bearer key.
        key_shape=PLANTED_ACCESS_KEY + ":{key}",
        check=rejection,
    ),
    chunking=facts.TypicalChunking(text_chunk_size=TEXT_CHUNK_SIZE),
)
"""AWS Bedrock Converse."""
