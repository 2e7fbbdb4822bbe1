"""What swink's proxy protocol cannot carry of the IR (`LOSSES`, keys in the grammar of `harness.diff.losses`),
and how it reshapes IR values in ways no key can say (`RESHAPES`, free text).

The request has a fixed shape (`model`, `system`, `messages`, `options` with temperature / max_tokens /
session_id): tools, sampling beyond temperature, stop sequences, output formats and the thinking switch belong
to the proxy server, not to the wire.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

_FIXED = "the request's options schema is fixed (temperature, max_tokens, session_id)"
_NO_OPTIONAL_FIGURES = "swink's Usage has no optional counters: an unreported figure is sent as 0"
_UNNAMED = "swink's StreamErrorKind has no name for it: the error event carries no error_kind and decodes as server"

LOSSES: Mapping[str, str] = MappingProxyType(
    {
        "FilePart": "ProxyMessage content holds text and images only: a file part is not sent (no files capability)",
        "Request.tools": "ProxyRequest has no tools: the proxy server owns the tool set",
        "Request.tool_choice": _FIXED,
        "Request.parallel_tool_calls": _FIXED,
        "Request.top_p": _FIXED,
        "Request.stop": _FIXED,
        "ResponseFormatText": _FIXED,
        "ResponseFormatJsonObject": _FIXED,
        "ResponseFormatJsonSchema": _FIXED,
        "ThinkingConfig": _FIXED,
        "Request.stream:False": "the protocol has only a streamed answer: every request is a stream request",
        "ToolResultPart.name": "tool_result messages carry only tool_call_id",
        "request.ToolCallPart.arguments_raw": "arguments travel as a JSON value: the text comes back compact",
        "RedactedThinkingPart": "no swink content block carries redacted thinking: such blocks are not sent",
        "Response.id": "the stream's `start` event has no id",
        "Response.model": "the stream's `start` event has no model",
        "MessageStart.id": "the stream's `start` event has no id",
        "MessageStart.model": "the stream's `start` event has no model",
        "UsageEvent": "usage is reported on the terminal `done` only; mid-stream usage is folded into it",
        "StopReason.kind:stop_sequence": "swink has no stop-sequence reason: sent as `stop`, decoded as end_turn",
        "StopReason.kind:content_filter": "sent as `stop`, decoded as end_turn",
        "StopReason.kind:refusal": "sent as `stop`, decoded as end_turn",
        "StopReason.kind:other": "sent as `stop`, decoded as end_turn",
        "StopReason.raw": "re-derived: the stop_reason swink would send",
        "StopReason.sequence": "stop_reason does not say which stop sequence matched",
        "Usage.input_tokens:None": _NO_OPTIONAL_FIGURES,
        "Usage.output_tokens:None": _NO_OPTIONAL_FIGURES,
        "Usage.cache_read_tokens:None": _NO_OPTIONAL_FIGURES,
        "Usage.cache_write_tokens:None": _NO_OPTIONAL_FIGURES,
        "IRError.kind:permission": "HTTP 403 decodes as permission; inside a stream: " + _UNNAMED,
        "IRError.kind:invalid_request": "inside a stream: " + _UNNAMED,
        "IRError.kind:overloaded": "inside a stream: " + _UNNAMED,
        "IRError.kind:timeout": "inside a stream: " + _UNNAMED,
        "IRError.kind:malformed_stream": "sent as 502 (server) or as an error event without error_kind",
        "IRError.kind:network": "HTTP 502 decodes as server (a network error inside a stream keeps its kind)",
        "IRError.code": "re-derived: swink's error_kind name for the kind, when it has one",
        "IRError.status": "an error event inside the stream has no status",
        "IRError.retry_after": "an error event inside the stream has no Retry-After (HTTP errors carry the header)",
    }
)
"""IR values the swink wire does not carry, by loss key."""

RESHAPES: Mapping[str, str] = MappingProxyType(
    {
        "Request.system empty string": '`system` is always sent; "" is decoded as no system prompt',
        "Message(role=tool_result) per result": "each tool result is its own `tool_result` message",
        "assistant turn bookkeeping": (
            "provider, model_id, usage, cost, stop_reason and timestamps of earlier turns have no IR form: dropped "
            "on decode, written as neutral values (the request's model, zeros, timestamp 0)"
        ),
        "Done cost": "the terminal `done` carries a `cost`, which has no IR form: dropped on decode, sent as zeros",
        "content_index renumbered": "blocks get dense IR indices in the order they open",
        "non-streamed answer": (
            "there is no non-streamed form: encode_response writes the stream that says the response, and "
            "decode_response folds a stream body into its response"
        ),
    }
)
"""How the wire reshapes IR values it carries, in words."""
