"""What Chat Completions cannot carry of the IR (`LOSSES`, keys in the grammar of `harness.diff.losses`), and how
the wire reshapes IR values it does carry (`RESHAPES`, structural rules the key grammar cannot express).

Round-trip properties project IR values through both tables; the diffs apply `LOSSES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness.protocols.openai.profile import Profile
from harness.protocols.openai.response import PLACEHOLDER_ID

THINKING_BUDGET = "ThinkingConfig.budget_tokens"
NO_THINKING_SWITCH = "Request.thinking"
THINKING_IN_REQUESTS = "request.ThinkingPart"
"""The loss key a profile with a `request_reasoning_field` does not have."""

_STOP = "finish_reason has no value for it: sent as `stop`, which decodes as end_turn"

LOSSES: Mapping[str, str] = MappingProxyType(
    {
        THINKING_BUDGET: (
            "no thinking budget on the wire: the settings travel as a reasoning_effort level (see "
            "mapping.reasoning_effort) and come back enabled or not, without a budget"
        ),
        THINKING_IN_REQUESTS: (
            "Chat Completions has no request field for earlier reasoning: assistant thinking is not sent back "
            "(unless a profile's request_reasoning_field carries it); responses do carry its text, in the "
            "reasoning_content / reasoning extension of compatible servers"
        ),
        "ThinkingPart.signature": "no wire field for reasoning signatures",
        "RedactedThinkingPart": "no wire form: dropped",
        "ToolResultPart.name": (
            "tool messages carry no name: decoding recovers it from the assistant tool call with the same id "
            "(None when there is none)"
        ),
        "ToolResultPart.is_error": "tool messages have no error flag",
        "StopReason.kind:stop_sequence": _STOP,
        "StopReason.kind:refusal": _STOP + " (a non-streamed message with `refusal` text decodes as refusal)",
        "StopReason.kind:error": _STOP,
        "StopReason.kind:other": _STOP,
        "StopReason.raw": "re-derived from the wire finish_reason",
        "StopReason.sequence": "OpenAI does not say which stop sequence matched",
        "Usage.cache_write_tokens": "OpenAI reports no cache writes",
        "Usage.input_tokens:None": "required on the wire (prompt_tokens): None is sent as 0",
        "Usage.output_tokens:None": "required on the wire (completion_tokens): None is sent as 0",
        "MessageStart.id": f"required in every chunk: None is sent as {PLACEHOLDER_ID!r}",
        "MessageStart.model": "required in every chunk: None is sent as ''",
        "MessageStart.usage": "no usage at stream start: merged into the final usage chunk",
        "UsageEvent": "no mid-stream usage: merged into the final usage chunk",
        "Done.usage": "sent only when the client asked include_usage; None is sent as zeros",
        "Response.id": f"required on the wire: None is sent as {PLACEHOLDER_ID!r}",
        "Response.model": "required on the wire: None is sent as ''",
        "IRError.status": "derived from the kind on encode; None mid-stream",
        "IRError.retry_after": "a mid-stream error chunk has no headers, so no retry-after",
        "IRError.code": "kept only when it decodes to the same kind, else the kind's OpenAI code",
    }
)

RESHAPES: Mapping[str, str] = MappingProxyType(
    {
        "Message.content order": (
            "an assistant message is reasoning, content, then tool_calls: request parts are reordered that way (and "
            "a profile that sends thinking back joins its thinking parts into one); "
            "a non-streamed response joins its thinking and its texts into one part each; in a stream, adjacent "
            "text (or thinking) blocks join into one"
        ),
        "Message(role=tool)": "each tool result is its own `tool` message; consecutive ones decode as one IR message",
        "ImagePart outside user messages": (
            "system, assistant and tool-result content is text only on the wire: their images are dropped"
        ),
    }
)


def profile_losses(profile: Profile) -> Mapping[str, str]:
    """The losses of one profile's codec: Chat Completions' own, minus earlier thinking when the profile sends
    it back, with the whole thinking switch lost when the profile sends no `reasoning_effort`, plus the
    profile's own (which win on a shared key)."""
    table = {k: v for k, v in LOSSES.items() if not (k == THINKING_IN_REQUESTS and profile.request_reasoning_field)}
    if not profile.reasoning_effort:
        del table[THINKING_BUDGET]  # implied by the broader key below
        table[NO_THINKING_SWITCH] = "the provider has no thinking switch: `reasoning_effort` is not sent"
    return MappingProxyType({**table, **profile.losses})
