"""What the Gemini wire cannot carry of the IR (`LOSSES`, keys in the grammar of `harness.diff.losses`), and how
it reshapes IR values in ways no key can say (`RESHAPES`, free text).

Round-trip properties project IR values through both tables; the diffs apply `LOSSES`. `RESHAPES` entries are
the same meaning in other words (left to the diff's rules in `harness.diff.request_rules`, or proposed there) or
only happen to IR values no decoder produces.

Wire data with no IR form at all never reaches an IR value, so no key names it: the parts of Gemini's code
execution (`executableCode`, `codeExecutionResult`), of Gemini 3's built-in tools (`toolCall`, `toolResponse`) and
a generated image (`inlineData` in an answer) are kept in a stream as provider events that only this encoder writes
back, and left out of a non-streamed response; another protocol's client never sees them (the text before and after
them, the stop reason and the usage it does). A candidate's `groundingMetadata` (Google Search, File Search)
is not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

_AS_INTERNAL = "no Google status for it: sent as 502 INTERNAL, which decodes as server"

LOSSES: Mapping[str, str] = MappingProxyType(
    {
        "Request.parallel_tool_calls": "Gemini has no switch for parallel function calls",
        "Message.role:system": "Gemini has only user and model turns: a later system message is sent as a user turn",
        "ResponseFormatJsonSchema.name": "Gemini response schemas have no name",
        "ResponseFormatJsonSchema.strict": "Gemini has no strict flag; responseJsonSchema always constrains output",
        "RedactedThinkingPart": "Gemini has no encrypted-thinking part; it is left out",
        "FilePart.filename": "an inlineData blob has no name the Gemini API takes: not sent, decodes as None",
        "request.FilePart.media_type:None": (
            "a fileData part needs a mimeType: a URL file without one is sent with the type its URL names (else "
            "application/octet-stream), which decodes as that type"
        ),
        "ToolCallPart.arguments_raw": "functionCall.args is a JSON object: the text comes back as its compact JSON",
        "Usage.cache_write_tokens": "Gemini reports no cache writes",
        "Usage.output_tokens:None": (
            "output is sent as candidatesTokenCount + thoughtsTokenCount: None beside reasoning_tokens comes back "
            "as reasoning_tokens"
        ),
        "StopReason.raw": "re-derived: the finishReason Gemini would send",
        "StopReason.sequence": "Gemini does not say which stop sequence matched",
        "StopReason.kind:stop_sequence": "a matched stop sequence is finishReason STOP (end_turn)",
        "StopReason.kind:refusal": "a refusal is sent as finishReason SAFETY (content_filter)",
        "Done.stop_reason:None": (
            "a stream must end with a finishReason: none is sent as FINISH_REASON_UNSPECIFIED (other)"
        ),
        "IRError.kind:context_window_exceeded": (
            "sent as INVALID_ARGUMENT: a message that reads like a context overflow decodes as "
            "context_window_exceeded, any other as invalid_request"
        ),
        "IRError.kind:network": _AS_INTERNAL,
        "IRError.kind:malformed_stream": _AS_INTERNAL,
        "IRError.code": "becomes the google.rpc status string of the kind (the IR code when it is one of the kind)",
    }
)
"""IR values the Gemini wire does not carry, by loss key."""

RESHAPES: Mapping[str, str] = MappingProxyType(
    {
        "ThinkingConfig.budget_tokens of disabled thinking": (
            "thinking off is thinkingBudget 0, which leaves no budget (inert: request_rules.inert_settings)"
        ),
        "TextPart runs in model turns": (
            "a model turn or response is a run of parts with no block boundary: adjacent text parts come back as "
            "one, empty ones not at all (requests: request_rules.text_layout; responses: a rule is proposed)"
        ),
        "ThinkingPart runs in model turns": (
            "adjacent thought parts come back as one thinking block unless a thoughtSignature ended the first; an "
            "empty one without signature not at all"
        ),
        "ToolResultPart.content text": (
            "functionResponse.response holds one text: text parts are joined, images follow (request_rules.text_layout)"
        ),
        "MessageStart.usage from the first chunk": (
            "every chunk carries the usage known so far, and the start is the first chunk: its input figures "
            "(prompt and cached counts) become the start's usage, nothing else; an answer whose first chunk is its "
            "last reports its final input there"
        ),
        "Usage.cache_read_tokens of 0": (
            "proto3 JSON leaves zero counts out, as Gemini does: a cache read of 0 is not sent and decodes as None "
            "(zero and absent mean the same: no cache use)"
        ),
        "Usage.output_tokens below reasoning_tokens": (
            "candidatesTokenCount = output - reasoning cannot go below 0: such an output comes back as reasoning_tokens"
        ),
    }
)
"""How the wire reshapes IR values it carries, in words (see the module docstring)."""
