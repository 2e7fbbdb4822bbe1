"""The facts of Cloudflare Workers AI's native route (see `harness.protocols.facts`).

Not yet served as a proxy frontend (`frontend=None`): its route and matrix place land with the integration of
issue 16.
"""

from __future__ import annotations

from harness.protocols import facts
from harness.protocols.cloudflare.paths import KEY_ENV

FACTS = facts.ProtocolFacts(
    frontend=None,
    model_list=None,
    sdk=facts.Sdk(driver="harness.drivers.cloudflare_http", package="httpx2", http_client="httpx2"),
    real=facts.RealEndpoint("https://api.cloudflare.com", KEY_ENV, "@cf/meta/llama-3.1-8b-instruct"),
    upstream_model="@cf/meta/llama-3.1-8b-instruct",
    secrets=facts.Secrets(headers=frozenset({"cf-aig-authorization"})),
    chunking=facts.TypicalChunking(text_chunk_size=4),  # about one token per event
    gateways={},
)
"""Cloudflare Workers AI (native)."""
