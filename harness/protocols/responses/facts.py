"""The facts of the OpenAI Responses API (see `harness.protocols.facts`).

A frontend on `POST /v1/responses` (the model in the body; SSE without `[DONE]`). Its clients are the `openai`
SDK, which lists models at the same `GET /v1/models` as for Chat Completions, with the same headers: the listing
is Chat Completions' own, shared, not a second shape. So are the key shapes and account headers.

Requests that name state the OpenAI server keeps (`previous_response_id`, `conversation`, a stored `prompt`,
item references: `losses.STATEFUL`) are refused by the proxy when the upstream is not a Responses server, rather
than sent without the history they refer to.
"""

from __future__ import annotations

from harness import ir
from harness.ir import Capability
from harness.protocols import facts
from harness.protocols.openai.facts import FAMILY as CHAT_COMPLETIONS
from harness.protocols.responses import compaction, stored, wire_rules
from harness.protocols.responses.losses import stateful_fields
from harness.protocols.responses.request_encode import PATH
from harness.protocols.responses.websocket import ResponsesSocket


def server_state(request: ir.Request) -> tuple[str, ...]:
    """The features of a decoded request that name state an OpenAI server keeps (`losses.STATEFUL`)."""
    return tuple(stateful_fields(request))


CAPABILITIES = frozenset(
    {
        Capability.TOOLS,
        Capability.PARALLEL_TOOLS,
        Capability.NESTED_TOOL_SCHEMA,
        Capability.TOOL_CHOICE,
        Capability.VISION,
        Capability.FILES,
        Capability.FILE_URL,  # input_file's file_url
        Capability.FILE_ID,  # input_file's file_id: OpenAI's Files, as Chat Completions' file_id
        Capability.CLIENT_TOOL_CALLS,  # custom_tool_call, local_shell_call, shell_call, apply_patch_call
        Capability.THINKING,
        Capability.THINKING_SIGNATURE,
        Capability.JSON_OBJECT,
        Capability.JSON_SCHEMA,
        Capability.PROMPT_CACHE,
        Capability.MODELS_LIST,
        Capability.RETRY_AFTER,
        Capability.TOP_P,
        Capability.STOP_MAX_TOKENS,
        Capability.STREAM_ERROR_FIRST,
        Capability.NOT_FOUND_ERROR,
        Capability.OVERLOADED_ERROR,
    }
)
"""No stop_sequences: the Responses API has no `stop` parameter (see `losses`)."""

SDK_CAPABILITIES = CAPABILITIES - {Capability.CLIENT_TOOL_CALLS}
"""What the `openai` SDK's `responses.create` can ask for and surface: what the wire carries but the client tool
calls (custom, shell and patch calls)."""


FACTS = facts.ProtocolFacts(
    frontend=facts.Frontend(
        routes=(facts.Route(PATH), facts.Route(compaction.COMPACT_PATH, answer=compaction.compact)),
        model=facts.ModelInBody(),
        server_state=server_state,
        wire_rules=wire_rules.RULES,
        # encrypted_content is "opaque and non-inspectable", there to be passed back (openresponses.org,
        # Specification: Reasoning); items are keyed by output_index and item_id (docs/gateways.md, LR12).
        opaque_signatures=True,
        concurrent_blocks=True,
        request_id_header="x-request-id",  # https://platform.openai.com/docs/api-reference/debugging-requests
        reads_retry_after=True,  # the openai SDK, as for Chat Completions
        websocket=ResponsesSocket,
    ),
    model_list=CHAT_COMPLETIONS.model_list,
    sdk=facts.Sdk(
        driver="harness.drivers.responses_sdk",
        package="openai",
        http_client="httpx2",
        capabilities=SDK_CAPABILITIES,
        # Over WebSocket mode (`responses.connect()`): no model listing (a refused turn's Retry-After comes in its
        # `error` event's `error.headers`).
        socket_capabilities=SDK_CAPABILITIES - {Capability.MODELS_LIST},
    ),
    real=facts.RealEndpoint("https://api.openai.com", ("OPENAI_API_KEY",), "gpt-4o-mini"),
    upstream_model="gpt-4o-mini",
    wire_specs=(
        facts.WireSpec("harness.protocols.responses.spec", "openai"),
        facts.WireSpec("harness.protocols.responses.spec", "openresponses"),
    ),
    secrets=CHAT_COMPLETIONS.secrets,
    # output_text.delta carries a token or two, as api.openai.com streams; function arguments in fragments.
    chunking=facts.TypicalChunking(text_chunk_size=4, arguments_chunk_size=6),
    stored_responses=stored.STORED,
)
"""OpenAI Responses."""
