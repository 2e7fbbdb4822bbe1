"""What the Anthropic Messages wire cannot carry of the IR, and why (the codec's `losses` table).

Round-trip properties project IR values through exactly these entries; the request-side diff reads them too.
"""

from __future__ import annotations

from types import MappingProxyType

from harness.protocols.anthropic.mapping import DEFAULT_MAX_TOKENS, MISSING_MESSAGE_ID

LOSSES = MappingProxyType(
    {
        "Request.max_tokens": f"required on the wire: None is sent as {DEFAULT_MAX_TOKENS}",
        "Request.parallel_tool_calls": (
            "carried as tool_choice.disable_parallel_tool_use, which needs a tool_choice (auto is sent when the "
            "IR has none) and does not exist on tool_choice none (dropped there)"
        ),
        "Request.response_format": (
            "only json_schema has a wire form (output_config.format, schema only): text is the default and "
            "decodes as None, json_object is not sent, the schema name and strict flag are not carried"
        ),
        "Request.thinking": "disabled thinking has no budget: budget_tokens is dropped when enabled is False",
        "Message.role": (
            "the wire has only user and assistant turns: tool messages travel as user turns of tool_result "
            "blocks (a user message mixing both decodes as a tool message then a user message), and "
            "in-conversation system messages are sent as user turns"
        ),
        "Message.content": (
            "blocks with no IR part (document, search_result, server_tool_use and server-tool results, images "
            "by file id) are left out of the IR; the raw messages stay in provider_fields['anthropic'] so the "
            "Anthropic encoder restores them while the IR messages are unchanged"
        ),
        "ToolResultPart.name": (
            "not on the wire: recovered on decode from the preceding assistant tool_use with the same id "
            "(None when there is none)"
        ),
        "ToolCallPart.arguments_raw": (
            "the wire carries `input` as a JSON object: the raw text is re-serialized compactly on decode, and "
            "arguments that are not an object are sent as {}"
        ),
        "Response.content": (
            "server-tool blocks (server_tool_use, web_search_tool_result, ...) and citations (citations_delta, "
            "text block citations) have no IR form: decoders skip those blocks (IR indices stay dense) and keep "
            "the text"
        ),
        "Response.id": f"required on the wire: None is sent as {MISSING_MESSAGE_ID!r}",
        "Response.model": "required on the wire: None is sent as ''",
        "MessageStart.id": f"required on the wire: None is sent as {MISSING_MESSAGE_ID!r}",
        "MessageStart.model": "required on the wire: None is sent as ''",
        "MessageStart.usage": "required in message_start: None is sent as zero input and output tokens",
        "Usage.input_tokens": (
            "the wire counts fresh input apart from cache reads and writes and requires it: None is sent as 0 "
            "and decodes as the cached total; fewer input tokens than cached ones cannot be expressed (clamped)"
        ),
        "Usage.output_tokens": "required on the wire: None is sent as 0",
        "UsageEvent": "no wire event of its own: mid-stream usage is folded into message_delta's usage",
        "StopReason.kind": "content_filter is sent as refusal; error and other are sent as end_turn",
        "StopReason.raw": "re-derived from the wire stop_reason on decode",
        "StopReason.sequence": "carried only with stop_reason stop_sequence",
        "IRError.kind": (
            "network and malformed_stream are sent as api_error (decoded as server); an invalid_request "
            "message that reads like a context-window overflow decodes as context_window_exceeded"
        ),
        "IRError.message": (
            "a context_window_exceeded error whose message does not say so is prefixed 'prompt is too long: ' "
            "(the kind travels only in the message of a 400 invalid_request_error)"
        ),
        "IRError.status": "derived from the error type on encode; None mid-stream",
        "IRError.retry_after": "an `event: error` inside a stream has no headers, so no retry-after",
        "IRError.code": "the Anthropic error type, derived from the kind unless the code already is one",
    }
)
