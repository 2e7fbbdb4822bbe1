"""What the Responses wire cannot carry of the IR (`LOSSES`, keys in the grammar of `harness.diff.losses`), how it
reshapes IR values it does carry (`RESHAPES`, prose the key grammar cannot express), and what of the wire a
stateless translation cannot carry at all (`STATEFUL`).

Round-trip properties project IR values through `LOSSES` and `RESHAPES`; the diffs apply `LOSSES`.

Wire data with no IR form never reaches the IR, so no loss key names it: requests keep it in
`provider_fields["responses"]` (hosted tools, `item_reference` items, `include`, `metadata`, `store`, ...), for
the same codec to send again; responses drop it (hosted-tool items, annotations, logprobs, item ids). A
reasoning item's full `reasoning_text` is thinking like its summary: decoded the same, re-sent as it came by the
same codec, and written as a summary by the encoder otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness import ir
from harness.protocols.responses.ids import PLACEHOLDER_RESPONSE_ID
from harness.protocols.responses.reader import NAME, hint_table
from harness.protocols.responses.request_decode import SHAPE

_REQUIRED = "required on the wire"
_COMPLETED = "no status for it: the response ends `completed`, which decodes as end_turn (tool_use with a call)"

LOSSES: Mapping[str, str] = MappingProxyType(
    {
        "Request.stop": "the Responses API has no stop sequences: not sent",
        "ThinkingConfig.budget_tokens": (
            "no thinking budget on the wire: the settings travel as a reasoning.effort level (see "
            "mapping.reasoning_effort) and come back enabled or not, without a budget"
        ),
        "ToolResultPart.name": (
            "function_call_output carries no tool name: decoding recovers it from the function_call with the same "
            "call_id (None when there is none)"
        ),
        "ToolResultPart.is_error": "function_call_output has no error flag",
        "request.FilePart.media_type:None": "an input_file's file_url has no media type: not sent, decodes as None",
        "StopReason.kind:stop_sequence": _COMPLETED,
        "StopReason.kind:refusal": _COMPLETED + " (a `refusal` content part decodes as refusal: a non-streamed "
        "answer's text, and a streamed text block that began as a refusal, `TextStart.refusal`, are sent as one)",
        "StopReason.kind:error": _COMPLETED + " (a non-streamed `failed` response decodes as error)",
        "StopReason.kind:other": _COMPLETED,
        "StopReason.raw": "re-derived from the wire status (or incomplete_details.reason)",
        "StopReason.sequence": "no stop sequences, so none matched",
        "Response.stop_reason:None": "a finished response has a status: None is sent as completed",
        "Done.stop_reason:None": "a finished stream ends with a status: None is sent as completed",
        "Usage.input_tokens:None": f"{_REQUIRED}: sent as 0",
        "Usage.output_tokens:None": f"{_REQUIRED}: sent as 0",
        "Usage.cache_read_tokens:None": f"{_REQUIRED} (input_tokens_details.cached_tokens): sent as 0",
        "Usage.cache_write_tokens:None": f"{_REQUIRED} by the SDK's types (input_tokens_details): sent as 0",
        "Usage.reasoning_tokens:None": f"{_REQUIRED} (output_tokens_details.reasoning_tokens): sent as 0",
        "MessageStart.usage": "no usage at stream start (response.created has usage null): merged into the final usage",
        "UsageEvent": "no mid-stream usage: merged into the final response's usage",
        "MessageStart.id:None": f"{_REQUIRED}: sent as {PLACEHOLDER_RESPONSE_ID!r}",
        "MessageStart.model:None": f"{_REQUIRED}: sent as ''",
        "Response.id:None": f"{_REQUIRED}: sent as {PLACEHOLDER_RESPONSE_ID!r}",
        "Response.model:None": f"{_REQUIRED}: sent as ''",
        "IRError.status": "derived from the kind on encode; None mid-stream",
        "IRError.code": "kept only when it decodes to the same kind, else the kind's code (or, without one, its type)",
    }
)
"""IR values the Responses wire does not carry, by loss key."""

RESHAPES: Mapping[str, str] = MappingProxyType(
    {
        "Message runs of one role": (
            "items carry no turn boundary: consecutive assistant messages (and consecutive tool messages) decode as "
            "one message, except where one ends and the next begins with parts the encoder groups into one item "
            "(text and text, unsigned thinking and thinking)"
        ),
        "Message(role=tool) text, ToolResultPart in other turns": (
            "tool results are function_call_output items, which decode as a tool message; other parts of a tool "
            "turn are sent as a user message"
        ),
        "ImagePart, FilePart in assistant messages": "assistant message content is text only on the wire: dropped",
        "StopReason.kind follows the output": (
            "a completed response with a function_call item decodes as tool_use, one without as end_turn"
        ),
        "a leading system message without Request.system": (
            "a leading text-only system message decodes as the system prompt (the IR convention)"
        ),
        "Response.id, MessageStart.id not in the resp_ format": (
            "a response id is `resp_` and 50 hex digits: another protocol's id is sent as one derived from it "
            "(the diffs treat ids as volatile); tool call ids travel unchanged, as a tool result must name them"
        ),
        "IRError.retry_after mid-stream": "an `error` event inside a stream has no headers, so no retry-after",
        "ToolCallDelta of a built-in client call": (
            "a `local_shell`, `shell` or `apply_patch` call's fields are JSON the stream sends whole with its item "
            "(`client_calls`): its deltas arrive as one"
        ),
    }
)
"""How the wire reshapes IR values it carries, in words."""

STATEFUL: Mapping[str, str] = MappingProxyType(
    {
        "previous_response_id": "the earlier turns are held by the server; a stateless backend never sees them",
        "conversation": "the conversation's items are held by the server",
        "prompt": "a stored prompt template, expanded by the server",
        "item_reference": "an input item that names a stored item instead of carrying it",
        "reasoning": "a reasoning input item with neither summary nor encrypted_content names a stored item",
    }
)
"""Request features that rely on state the OpenAI server keeps: a translation to any other backend cannot carry
them, and one that drops them answers a different conversation than the client asked about."""


def stateful_fields(request: ir.Request) -> list[str]:
    """The `STATEFUL` features a request decoded by this codec relies on (empty for any other request)."""
    raw = request.provider_fields.get(NAME, {})
    found = [key for key in ("previous_response_id", "conversation", "prompt") if raw.get(key) is not None]
    opaque = hint_table(raw.get(SHAPE), "opaque").values()
    kinds = {item.get("type") for item in opaque if isinstance(item, dict)}
    found += [kind for kind in ("item_reference", "reasoning") if kind in kinds]
    return found
