"""The facts of swink-agent's proxy stream, `POST /v1/stream` (see `harness.protocols.facts`).

Not yet served as a proxy frontend (`frontend=None`): its route and matrix place land with the integration of
issue 16. There is no public real endpoint: a swink proxy is a user's own deployment.
"""

from __future__ import annotations

from harness.protocols import facts

FACTS = facts.ProtocolFacts(
    frontend=None,
    model_list=None,
    sdk=facts.Sdk(driver="harness.drivers.swink_http", package="httpx2", http_client="httpx2"),
    real=None,
    upstream_model="claude-sonnet-4-5-20250929",  # a swink proxy fronts an agent's provider; any model name
    secrets=facts.Secrets(),
    chunking=facts.TypicalChunking(text_chunk_size=5),  # one event per delta, as swink's ProxyStreamFn emits
    gateways={},
)
"""swink proxy stream."""
