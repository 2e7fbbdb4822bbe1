"""The facts of the OpenAI Responses API (see `harness.protocols.facts`).

Not yet served as a proxy frontend (`frontend=None`): the built-in proxy's `/v1/responses` route and the matrix
frontend land with the Responses integration (issue 15, items 3-5).
"""

from __future__ import annotations

from harness.protocols import facts

FACTS = facts.ProtocolFacts(
    frontend=None,
    model_list=None,
    sdk=facts.Sdk(driver="harness.drivers.responses_sdk", package="openai", http_client="httpx2"),
    real=facts.RealEndpoint("https://api.openai.com", ("OPENAI_API_KEY",), "gpt-4o-mini"),
    upstream_model="gpt-4o-mini",
    secrets=facts.Secrets(
        headers=frozenset({"openai-organization", "openai-project"}),
        header_prefixes=("x-stainless-", "x-ratelimit-"),
        key_patterns=(r"sk-(?:proj-)?[A-Za-z0-9_\-]{20,}",),
    ),
    # output_text.delta carries a token or two, as api.openai.com streams; function arguments in fragments.
    chunking=facts.TypicalChunking(text_chunk_size=4, arguments_chunk_size=6),
    gateways={},
)
"""OpenAI Responses."""
