"""What the Workers AI native route cannot carry of the IR (`LOSSES`, keys in the grammar of
`harness.diff.losses`), and how it reshapes IR values in ways no key can say (`RESHAPES`, free text).

The native input schema of the text models has no tool_choice, parallel-call switch, stop sequences or thinking
switch, and the native output form (what the encoder writes) has no id, model, finish reason or reasoning.
Replies of newer models in the OpenAI form carry more, and the decoder reads it all (see `response`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

_SCHEMA = "the native input schema has no such field (the model decides)"
_NATIVE_OUT = "the native reply form has no finish_reason"
_ENVELOPE = "errors are {code, message} entries and a status"

LOSSES: Mapping[str, str] = MappingProxyType(
    {
        "FilePart": (
            "the native input schema has text and image content only: a file part is not sent (no files capability)"
        ),
        "Request.tool_choice": _SCHEMA,
        "Request.parallel_tool_calls": _SCHEMA,
        "Request.stop": _SCHEMA,
        "ThinkingConfig": "no thinking switch in the native schema (reasoning models think by default)",
        "ResponseFormatJsonSchema.name": "JSON mode takes the bare schema: the name is dropped",
        "ResponseFormatJsonSchema.strict": "JSON mode takes the bare schema: there is no strict flag",
        "ResponseFormatText": "no response_format means text: the default is not sent",
        "ToolResultPart.is_error": "tool messages have no error flag",
        "request.ThinkingPart": "messages have no field for earlier reasoning: it is not sent back",
        "request.RedactedThinkingPart": "messages have no field for earlier reasoning: it is not sent back",
        "response.ThinkingPart": "the native reply form has no reasoning field (OpenAI-form replies do, and decode)",
        "response.RedactedThinkingPart": "the native reply form has no reasoning field",
        "response.ToolCallPart.id": "non-streamed native replies give calls as {name, arguments} without ids",
        "response.ToolCallPart.arguments_raw": "non-streamed native replies give arguments as an object",
        "Response.id": "the native reply form has no id",
        "Response.model": "the native reply form has no model (it is in the request path)",
        "MessageStart.id": "native stream events have no id",
        "MessageStart.model": "native stream events have no model",
        "UsageEvent": "usage is reported by the final native event only; mid-stream usage is folded into it",
        "StopReason.kind:max_tokens": _NATIVE_OUT + ": a cut answer decodes as end_turn",
        "StopReason.kind:stop_sequence": _NATIVE_OUT + ": decodes as end_turn",
        "StopReason.kind:content_filter": _NATIVE_OUT + ": decodes as end_turn",
        "StopReason.kind:refusal": _NATIVE_OUT + ": decodes as end_turn",
        "StopReason.kind:error": _NATIVE_OUT + ": decodes as end_turn",
        "StopReason.kind:other": _NATIVE_OUT + ": decodes as end_turn",
        "StopReason.raw": "re-derived: the native form sends no finish_reason",
        "StopReason.sequence": "no finish reason says which stop sequence matched",
        "Usage.cache_write_tokens": "usage has prompt_tokens_details.cached_tokens only",
        "Usage.reasoning_tokens": "the native usage object has no reasoning figure",
        "IRError.kind:network": _ENVELOPE + ": sent as a 500 internal error (3043), which decodes as server",
        "IRError.kind:malformed_stream": _ENVELOPE + ": sent as a 500 internal error (3043), which decodes as server",
        "IRError.kind:context_window_exceeded": (
            "sent as 400 / 5021 with the message: it decodes as context_window_exceeded only when the message "
            "reads like a context overflow, else as invalid_request"
        ),
        "IRError.code": "re-derived: the Workers AI error code of the kind",
        "IRError.status": "an error event inside a stream has no status (HTTP errors keep theirs)",
        "IRError.retry_after": "an error event inside a stream has no Retry-After (HTTP errors carry the header)",
    }
)
"""IR values the Workers AI native wire does not carry, by loss key."""

RESHAPES: Mapping[str, str] = MappingProxyType(
    {
        "Message.content text joined": "one `content` per message: text parts are joined without a separator",
        "Message(role=tool) per result": "each tool result is its own `tool` message",
        "Response.content layout": (
            "a non-streamed native reply has one `response` and one `tool_calls`: text is joined, calls follow"
        ),
        "Request.model in the path": "the model is the path after /ai/run/; the account id is kept in provider_fields",
        "prompt": "a bare `prompt` decodes as one user message (the encoder always sends `messages`)",
    }
)
"""How the wire reshapes IR values it carries, in words."""
