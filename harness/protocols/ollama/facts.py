"""The facts of Ollama's native API (see `harness.protocols.facts`)."""

from __future__ import annotations

from typing import Any

from harness.ir import Capability
from harness.protocols import facts
from harness.protocols.ollama.request import CHAT_PATH
from harness.protocols.ollama.tags import TAGS_PATH

MODIFIED_AT = "1970-01-01T00:00:00Z"
"""`modified_at` of a model the proxy lists (a fixed, documented placeholder: no local file backs it)."""


def model_entry(model: facts.ListedModel) -> dict[str, Any]:
    """One model in Ollama's `/api/tags` shape, as the proxy lists it."""
    return {"name": model.name, "model": model.name, "modified_at": MODIFIED_AT, "size": 0, "digest": "", "details": {}}


def model_envelope(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Ollama's list body."""
    return {"models": entries}


CAPABILITIES = frozenset(
    {
        Capability.TOOLS,
        Capability.PARALLEL_TOOLS,
        Capability.NESTED_TOOL_SCHEMA,
        Capability.VISION,
        Capability.THINKING,
        Capability.JSON_OBJECT,
        Capability.JSON_SCHEMA,
        Capability.STOP_SEQUENCES,
        Capability.MODELS_LIST,
        Capability.TOP_P,
        Capability.STOP_MAX_TOKENS,
        Capability.NOT_FOUND_ERROR,
        Capability.OVERLOADED_ERROR,
    }
)
"""No tool_choice, cache figures, signatures or Retry-After on Ollama's wire. No stream that begins with an
error: Ollama answers an error that comes before any content with its HTTP status and a JSON body
(`streamResponse` in ollama's server/routes.go writes the `{"error"}` line only once content was written)."""


FACTS = facts.ProtocolFacts(
    frontend=facts.Frontend(routes=(facts.Route(CHAT_PATH),), model=facts.ModelInBody()),
    model_list=facts.ModelList(
        paths=(TAGS_PATH,), item_paths=(), entry=model_entry, envelope=model_envelope, claims=None
    ),
    sdk=facts.Sdk(
        driver="harness.drivers.ollama_sdk",
        package="ollama",
        http_client="httpx",
        capabilities=(CAPABILITIES - {Capability.NESTED_TOOL_SCHEMA}) | {Capability.STREAM_ERROR_FIRST},
    ),
    # A local server: no key; OLLAMA_HOST (often host:port) moves it.
    real=facts.RealEndpoint("http://127.0.0.1:11434", (), "llama3.2", host_env="OLLAMA_HOST"),
    upstream_model="llama3.2",
    secrets=facts.Secrets(),
    # One token per line; whole tool calls.
    chunking=facts.TypicalChunking(text_chunk_size=3),
    text_runs_joined=True,  # one `message.content`
    upstream_request=facts.UpstreamRequest(
        # Ollama's server binds any body as JSON, whatever its content type says: a wrong one only warns.
        headers=(facts.HeaderRule("content-type", "content type", value="application/json", read=False),),
        fields=frozenset({"model", "messages", "tools", "format", "options", "stream", "keep_alive", "think"}),
        rejects_unknown_fields=False,  # Go's encoding/json leaves an unknown field unread: a deviation
        source="https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion (parameters "
        "of POST /api/chat); the `ollama` SDK's ChatRequest",
    ),
)
"""Ollama native `/api/chat`."""
