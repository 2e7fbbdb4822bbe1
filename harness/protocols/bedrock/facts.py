"""The facts of AWS Bedrock Converse (see `harness.protocols.facts`).

Not yet served as a proxy frontend (`frontend=None`): its routes (`ROUTES`) and matrix place land with the
integration of issue 16.
"""

from __future__ import annotations

from harness.protocols import facts
from harness.protocols.bedrock.auth import DEFAULT_REGION, endpoint_host

ROUTES = ("POST /model/{modelId}/converse", "POST /model/{modelId}/converse-stream")
"""Frontend routes; the model id is the path segment, percent-encoded (an ARN's `:` and `/` too)."""
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
LITELLM_MODEL = "bedrock/converse/{model}"
"""How LiteLLM names a Converse upstream (with aws_access_key_id, aws_secret_access_key, aws_region_name)."""

FACTS = facts.ProtocolFacts(
    frontend=None,
    model_list=MODEL_LIST,
    sdk=facts.Sdk(driver="harness.drivers.bedrock_sdk", package="boto3", http_client="httpx2"),
    real=facts.RealEndpoint(REAL_BASE_URL, KEY_ENV, DEFAULT_MODEL),
    upstream_model=DEFAULT_MODEL,
    secrets=facts.Secrets(
        headers=frozenset({"x-amz-security-token"}),
        key_patterns=(r"(?:AKIA|ASIA)[A-Z0-9]{16}", r"Signature=[0-9a-f]{64}", r"ABSK[A-Za-z0-9+/=]{20,}"),
    ),
    chunking=facts.TypicalChunking(text_chunk_size=TEXT_CHUNK_SIZE),
    gateways={},
)
"""AWS Bedrock Converse."""
