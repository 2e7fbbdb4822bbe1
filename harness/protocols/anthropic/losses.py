"""What the Anthropic Messages wire cannot carry of the IR (`LOSSES`, keys in the grammar of
`harness.diff.losses`), and how it reshapes IR values in ways no key can say (`RESHAPES`, free text).

Round-trip properties project IR values through both tables; the diffs apply `LOSSES`. What `RESHAPES` names is
either the same meaning in other words (left to the diff's rules, e.g. `request_rules.inert_settings`) or listed
there because it only happens to IR values no decoder produces (e.g. a usage with fewer input than cached tokens).

Wire data with no IR form at all (documents by file id or as content, search_result and server-tool blocks, citations,
images by file id, server tools) never reaches the IR: requests keep it in provider_fields["anthropic"],
responses drop it. It is no loss of an IR value, so no key names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness.protocols.anthropic.errors import CONTEXT_PREFIX
from harness.protocols.anthropic.mapping import DEFAULT_MAX_TOKENS, MISSING_MESSAGE_ID

_REQUIRED = "required on the wire"
_ERROR_AS_SERVER = "no error type of its own: sent as api_error with status 502, which decodes as server"

LOSSES: Mapping[str, str] = MappingProxyType(
    {
        "Request.max_tokens:None": (
            f"{_REQUIRED}: a request without one is sent with max_tokens {DEFAULT_MAX_TOKENS}. Leaving it unset is "
            "the client's choice that no Anthropic upstream can honour, so the upstream request says 4096"
        ),
        "ResponseFormatText": "text is the default output and has no wire form: not sent, decodes as None",
        "ResponseFormatJsonObject": "Anthropic has no JSON mode: json_object is not sent, decodes as None",
        "ResponseFormatJsonSchema.name": "output_config.format carries the bare schema, no name",
        "ResponseFormatJsonSchema.strict": "output_config.format has no strict flag",
        "Message.role:system": (
            "the wire has only user and assistant turns: an in-conversation system message is sent as a user turn"
        ),
        "FilePart.filename": (
            "a document block has no file name (its optional `title` is a title, not a name): not sent, decodes as None"
        ),
        "request.FilePart.media_type:None": (
            "a document's URL source has no media type: a URL file's is not sent and decodes as None"
        ),
        "ToolResultPart.name": (
            "tool_result blocks carry no tool name: decoding recovers it from the assistant tool_use with the same "
            "id (None when there is none)"
        ),
        "ToolCallPart.arguments_raw": (
            "tool_use `input` is a JSON object: whole tool calls come back as its compact JSON text (streamed "
            "input_json_delta fragments travel verbatim)"
        ),
        "Response.id:None": f"{_REQUIRED}: sent as {MISSING_MESSAGE_ID!r}",
        "Response.model:None": f"{_REQUIRED}: sent as ''",
        "MessageStart.id:None": f"{_REQUIRED} in message_start: sent as {MISSING_MESSAGE_ID!r}",
        "MessageStart.model:None": f"{_REQUIRED} in message_start: sent as ''",
        "MessageStart.usage:None": f"{_REQUIRED} in message_start: sent as zero input and output tokens",
        "Done.usage:None": "message_delta's usage needs output_tokens: sent as {'output_tokens': 0}",
        "Usage.input_tokens:None": f"{_REQUIRED} in a message's usage: sent as 0",
        "Usage.output_tokens:None": f"{_REQUIRED} in every usage: sent as 0",
        "UsageEvent": "no wire event of its own: mid-stream usage is folded into message_delta's usage",
        "StopReason.kind:content_filter": "no stop_reason for it: sent as refusal (a classifier stepped in)",
        "StopReason.kind:error": "no stop_reason for it: sent as end_turn",
        "StopReason.kind:other": "no stop_reason for it: sent as end_turn (pause_turn would ask to resend)",
        "StopReason.raw": "re-derived from the wire stop_reason",
        "IRError.kind:network": _ERROR_AS_SERVER,
        "IRError.kind:malformed_stream": _ERROR_AS_SERVER,
        "IRError.kind:context_window_exceeded": (
            "no error type of its own: a 400 invalid_request_error whose message reads like a context-window "
            "overflow decodes as context_window_exceeded, any other as invalid_request"
        ),
        "IRError.code": "the Anthropic error type: kept when it is one of the same kind, else the kind's",
    }
)
"""IR values the Anthropic wire does not carry, by loss key."""

RESHAPES: Mapping[str, str] = MappingProxyType(
    {
        "Request.tool_choice None beside parallel_tool_calls": (
            "disable_parallel_tool_use rides on tool_choice: with no choice, tool_choice auto is sent (auto is "
            "every protocol's default; a diff rule 'auto equals None' is proposed)"
        ),
        "Request.parallel_tool_calls under tool_choice none": (
            "tool_choice none has no disable_parallel_tool_use: not sent (inert: request_rules.inert_settings)"
        ),
        "ThinkingConfig.budget_tokens of disabled thinking": (
            "thinking disabled has no budget: not sent (inert: request_rules.inert_settings)"
        ),
        "Message(role=tool) without content": "an empty tool turn is sent as an empty user turn, decodes as user",
        "ToolCallPart.arguments that are not an object": "tool_use input must be an object: sent as {}",
        "Usage cache counts of None": (
            "a message's usage (and message_delta's, once the input is known) always carries "
            "cache_creation_input_tokens and cache_read_input_tokens, as the real API does: an unknown count is "
            "sent as 0, which means the same (no cache use)"
        ),
        "Usage.input_tokens below the cached tokens": (
            "the wire counts fresh input apart from cache reads and writes: an input below the cached total "
            "cannot be expressed, the fresh count is clamped to 0"
        ),
        "StopReason.sequence beside another kind": "stop_sequence is sent only with stop_reason stop_sequence",
        "IRError.status follows the error type": (
            "sent as the status of the error type; an `event: error` in a stream has none"
        ),
        "IRError.retry_after mid-stream": "an `event: error` inside a stream has no headers, so no retry-after",
        "IRError.message of context_window_exceeded": (
            f"a message that does not read like a context overflow is prefixed {CONTEXT_PREFIX!r}, the only "
            "way the wire says context_window_exceeded"
        ),
    }
)
"""How the wire reshapes IR values it carries, in words (see the module docstring)."""
