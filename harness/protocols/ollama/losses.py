"""What Ollama's `/api/chat` wire cannot carry of the IR (`LOSSES`, keys in the grammar of
`harness.diff.losses`), and how it reshapes IR values in ways no key can say (`RESHAPES`, free text).

Round-trip properties project IR values through both tables; the diffs apply `LOSSES`. `RESHAPES` entries are
the same meaning in other words (left to the diff's rules in `harness.diff.request_rules`, or proposed there) or
only happen to IR values no decoder produces.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

_ONLY_COUNTS = "Ollama reports only prompt_eval_count and eval_count"
_AS_SERVER = "an error is a status and a flat message: sent as 500, which decodes as server"

LOSSES: Mapping[str, str] = MappingProxyType(
    {
        "FilePart": "a message carries text and `images` only, no file: a file part is not sent (no files capability)",
        "Request.tool_choice": "Ollama has no tool_choice; the model always decides",
        "Request.parallel_tool_calls": "Ollama has no parallel_tool_calls switch",
        "ThinkingConfig.budget_tokens": "`think` is a boolean or a level string; there is no token budget",
        "ResponseFormatJsonSchema.name": "`format` carries the bare schema; the name is dropped",
        "ResponseFormatJsonSchema.strict": "`format` carries the bare schema; there is no strict flag",
        "UrlImage": "images are inline base64 only: an image given by URL is not sent",
        "Base64Image.media_type": (
            "images carry no media type: decoding sniffs PNG/JPEG/GIF/WEBP magic bytes, anything else is "
            "application/octet-stream"
        ),
        "ToolResultPart.is_error": "tool messages have no error flag",
        "ToolCallPart.arguments_raw": "arguments travel as an object: the text comes back as its compact JSON",
        "ThinkingPart.signature": "Ollama thinking has no signature",
        "RedactedThinkingPart": "Ollama has no redacted thinking: such blocks are not sent",
        "Response.id": "Ollama replies have no id",
        "MessageStart.id": "Ollama stream lines have no id",
        "StopReason.kind:stop_sequence": "a matched stop sequence is done_reason `stop`, which decodes as end_turn",
        "StopReason.raw": "re-derived: the done_reason Ollama would send",
        "StopReason.sequence": "done_reason does not say which stop sequence matched",
        "Usage.cache_read_tokens": _ONLY_COUNTS,
        "Usage.cache_write_tokens": _ONLY_COUNTS,
        "Usage.reasoning_tokens": _ONLY_COUNTS,
        "UsageEvent": "usage is reported on the final line only; mid-stream usage is folded into it",
        "IRError.kind:network": _AS_SERVER,
        "IRError.kind:malformed_stream": _AS_SERVER,
        "IRError.kind:context_window_exceeded": (
            "sent as a 400 with the message: it decodes as context_window_exceeded only when the message reads "
            "like a context overflow, else as invalid_request"
        ),
        "IRError.code": "Ollama errors have no code",
    }
)
"""IR values the Ollama wire does not carry, by loss key."""

RESHAPES: Mapping[str, str] = MappingProxyType(
    {
        "Message(role=tool) per result": (
            "each tool result is its own `tool` message; the parts around it keep the message's role "
            "(request_rules.one_result_per_tool_message)"
        ),
        "Message.content layout": (
            "one `content` string per message: text parts are joined with '\\n', thinking parts likewise into "
            "`thinking`; parts come back as thinking, text, images, tool calls (request_rules.text_layout)"
        ),
        "ToolResultPart.content text": (
            "a tool message has one `content` string: text parts are joined with '\\n', images follow "
            "(request_rules.text_layout)"
        ),
        "Response.content layout": (
            "a non-streamed reply has one content, thinking and tool_calls field: all text is joined, all thinking "
            "is joined, parts come back as thinking, text, tool calls; a stream keeps the order, but adjacent "
            "blocks of one kind merge (a response rule is proposed)"
        ),
        "IRError.status follows the kind": (
            "sent as the status of the kind (common.KIND_STATUS), which decodes to the same kind"
        ),
    }
)
"""How the wire reshapes IR values it carries, in words (see the module docstring)."""
