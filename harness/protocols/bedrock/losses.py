"""What the Bedrock Converse wire cannot carry of the IR (`LOSSES`, keys in the grammar of
`harness.diff.losses`), and how it reshapes IR values in ways no key can say (`RESHAPES`, free text).

Round-trip properties project IR values through both tables; the diffs apply `LOSSES`. Wire data with no IR
form at all (documents not given as bytes, videos, cache points, guardrails, images in S3, system and server
tools, citations, trace, performance and service-tier settings) never reaches the IR: requests keep it in
provider_fields["bedrock"], responses drop it. It is no loss of an IR value, so no key names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness.protocols.bedrock.errors import CONTEXT_PREFIX

_REQUIRED = "required on the wire"
_START = "messageStart carries only the role"

LOSSES: Mapping[str, str] = MappingProxyType(
    {
        "Request.parallel_tool_calls": "Converse has no parallel tool-call setting: not sent, decodes as None",
        "ToolChoiceNone": (
            "toolChoice is auto, any or tool: none is not sent (the tools still are, so the model may call one), "
            "decodes as None"
        ),
        "ResponseFormatText": "text is the default output and has no wire form: not sent, decodes as None",
        "ResponseFormatJsonObject": "outputConfig needs a schema: json_object is not sent, decodes as None",
        "ResponseFormatJsonSchema.strict": "jsonSchema has a name, the schema and a description, no strict flag",
        "UrlImage": "Converse takes image bytes or an S3 location, no URL: an image by URL is not sent",
        "FilePart.filename": (
            "a document's `name` is required and allows only alphanumerics, single spaces, hyphens, parentheses and "
            "brackets: a file name is sent without its extension, other characters as hyphens, and none as "
            "'document' (documents.py)"
        ),
        "Message.role:system": (
            "messages have only user and assistant turns: an in-conversation system message is sent as a user turn"
        ),
        "ToolResultPart.name": (
            "toolResult blocks carry no tool name: decoding recovers it from the assistant toolUse with the same id "
            "(None when there is none)"
        ),
        "ToolCallPart.arguments_raw": (
            "toolUse `input` is a JSON document: whole tool calls come back as its compact JSON text (streamed "
            "input fragments travel verbatim)"
        ),
        "Response.id": "a Converse response has no id (the service's request id is the x-amzn-requestid header)",
        "Response.model": "a Converse response names no model (the model is the request path's)",
        "Response.stop_reason:None": f"stopReason is {_REQUIRED}: sent as end_turn",
        "MessageStart.id": f"{_START}: no id",
        "MessageStart.model": f"{_START}: no model",
        "MessageStart.usage": f"{_START}: its usage figures are folded into the final metadata event's usage",
        "UsageEvent": "no wire event of its own: mid-stream usage is folded into the final metadata event's usage",
        "Done.stop_reason:None": f"messageStop's stopReason is {_REQUIRED}: sent as end_turn",
        "Done.usage:None": f"metadata's usage is {_REQUIRED}: sent as zero input and output tokens",
        "Usage.input_tokens:None": f"inputTokens is {_REQUIRED}: sent as 0 fresh tokens",
        "Usage.output_tokens:None": f"outputTokens is {_REQUIRED}: sent as 0",
        "Usage.reasoning_tokens": "Converse usage has no reasoning-token figure",
        "StopReason.kind:refusal": "no stopReason of its own: sent as content_filtered (a filter stepped in)",
        "StopReason.kind:other": "no stopReason for it: sent as end_turn",
        "StopReason.raw": "re-derived from the wire stopReason",
        "StopReason.sequence": "Converse does not say which stop sequence matched",
        "IRError.kind:network": "no exception type of its own: sent as InternalServerException, decodes as server",
        "IRError.kind:malformed_stream": (
            "no exception type of its own: sent as ModelStreamErrorException (424), decodes as server"
        ),
        "IRError.kind:context_window_exceeded": (
            "no exception type of its own: a ValidationException whose message reads like a context-window overflow "
            "decodes as context_window_exceeded, any other as invalid_request"
        ),
        "IRError.code": "the exception type: kept when it is one of the same kind, else the kind's",
        "IRError.retry_after": "Bedrock sends no Retry-After header and no delay in its error bodies",
    }
)
"""IR values the Bedrock Converse wire does not carry, by loss key."""

RESHAPES: Mapping[str, str] = MappingProxyType(
    {
        "Request.tool_choice without tools": "toolConfig needs at least one tool: a choice without tools is not sent",
        "ThinkingConfig.budget_tokens of disabled thinking": (
            "thinking disabled has no budget: not sent (inert: request_rules.inert_settings)"
        ),
        "Message(role=tool) without content": "an empty tool turn is sent as an empty user turn, decodes as user",
        "FilePart of a media type without a document format": (
            "a document's format is one of pdf, csv, doc, docx, xls, xlsx, html, txt, md: a file of another media "
            "type is not sent"
        ),
        "ToolCallPart.arguments that are not JSON": "toolUse input must be a JSON document: None is sent as {}",
        "Usage.input_tokens below the cached tokens": (
            "the wire counts fresh input apart from cache reads and writes: an input below the cached total cannot "
            "be expressed, the fresh count is clamped to 0"
        ),
        "IRError.status follows the exception type": (
            "sent with the status of its exception type; an exception inside a stream has none"
        ),
        "IRError.message of context_window_exceeded": (
            f"a message that does not read like a context overflow is prefixed {CONTEXT_PREFIX!r}, the only way the "
            "wire says context_window_exceeded"
        ),
    }
)
"""How the wire reshapes IR values it carries, in words (see the module docstring)."""
