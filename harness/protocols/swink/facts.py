"""The facts of swink-agent's proxy stream, `POST /v1/stream` (see `harness.protocols.facts`).

There is no public real endpoint: a swink proxy is a user's own deployment. The only answer is a stream, so
non-streamed cases are planned unsupported (`stream_only`).
"""

from __future__ import annotations

from harness.ir import Capability
from harness.protocols import facts
from harness.protocols.swink.events import STREAM_PATH
from harness.protocols.swink.request import TOP_LEVEL

CAPABILITIES = frozenset(
    {
        Capability.VISION,
        Capability.THINKING,
        Capability.THINKING_SIGNATURE,
        Capability.STOP_MAX_TOKENS,
        Capability.STREAM_ERROR_FIRST,
        Capability.NOT_FOUND_ERROR,
    }
)
"""Images and thinking (with signatures, on thinking_end) travel; tools, formats, stop sequences and top_p are
the server's (`ProxyRequestOptions` is temperature / max_tokens / session_id). A 404 (and `model_retired` in a
stream) says not found. No overloaded error: `StreamErrorKind` has no name for it, and `ProxyStreamFn` reads
a 503 as a network error (`classify.rs`)."""


FACTS = facts.ProtocolFacts(
    frontend=facts.Frontend(routes=(facts.Route(STREAM_PATH),), model=facts.ModelInBody()),
    model_list=None,  # swink's proxy protocol has no model listing
    sdk=facts.Sdk(
        driver="harness.drivers.swink_http",
        package="httpx2",
        http_client="httpx2",
        # No top_p (not in `ProxyRequestOptions`), and no not-found or overloaded error of its own:
        # `error_event_from_status(status, "", "Proxy")` reads a 404 as an unclassified client error (the empty body
        # never looks like a retired model) and a 503 as a network error.
        capabilities=CAPABILITIES - {Capability.NOT_FOUND_ERROR},
    ),
    real=None,
    upstream_model="claude-sonnet-4-5-20250929",  # a swink proxy fronts an agent's provider; any model name
    secrets=facts.Secrets(),
    chunking=facts.TypicalChunking(text_chunk_size=5),  # one event per delta, as swink's ProxyStreamFn emits
    stream_only=True,
    upstream_request=facts.UpstreamRequest(
        headers=(facts.HeaderRule("content-type", "content type", value="application/json"),),
        fields=TOP_LEVEL,
        always=frozenset({"system"}),  # a string; "" means no system prompt
        rejects_unknown_fields=False,  # serde without deny_unknown_fields leaves an unknown field unread
        source="swink-agent adapters/src/proxy.rs (the ProxyRequest body: model, system, messages, options)",
    ),
)
"""swink proxy stream."""
