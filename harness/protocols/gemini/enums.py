"""Gemini enums in their integer form.

Google's generated REST clients (gapic: the Go `cloud.google.com/go/ai/generativelanguage` client behind
`github.com/google/generative-ai-go`, the Java and Node gapic clients) ask for `$alt=json;enum-encoding=int`: the
API then writes every enum as its proto number (`"finishReason": 1`), and those clients send their own enums as
numbers too. The numbers are those of `google.ai.generativelanguage.v1beta` (note LANGUAGE = 6, OTHER = 5).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

FINISH_REASON: Mapping[int, str] = MappingProxyType(
    {
        0: "FINISH_REASON_UNSPECIFIED",
        1: "STOP",
        2: "MAX_TOKENS",
        3: "SAFETY",
        4: "RECITATION",
        5: "OTHER",
        6: "LANGUAGE",
        7: "BLOCKLIST",
        8: "PROHIBITED_CONTENT",
        9: "SPII",
        10: "MALFORMED_FUNCTION_CALL",
        11: "IMAGE_SAFETY",
        12: "UNEXPECTED_TOOL_CALL",
        13: "TOO_MANY_TOOL_CALLS",
    }
)
"""Candidate.FinishReason."""

BLOCK_REASON: Mapping[int, str] = MappingProxyType(
    {0: "BLOCK_REASON_UNSPECIFIED", 1: "SAFETY", 2: "OTHER", 3: "BLOCKLIST", 4: "PROHIBITED_CONTENT", 5: "IMAGE_SAFETY"}
)
"""PromptFeedback.BlockReason."""

CALLING_MODE: Mapping[int, str] = MappingProxyType(
    {0: "MODE_UNSPECIFIED", 1: "AUTO", 2: "ANY", 3: "NONE", 4: "VALIDATED"}
)
"""FunctionCallingConfig.Mode."""

SCHEMA_TYPE: Mapping[int, str] = MappingProxyType(
    {0: "TYPE_UNSPECIFIED", 1: "STRING", 2: "NUMBER", 3: "INTEGER", 4: "BOOLEAN", 5: "ARRAY", 6: "OBJECT", 7: "NULL"}
)
"""Schema.type (Type)."""


def enum_name(table: Mapping[int, str], value: Any) -> Any:
    """The enum's name for its integer form (an unknown number as `<number>` in text); any other value as given.
    Booleans are not numbers here."""
    if isinstance(value, int) and not isinstance(value, bool):
        return table.get(value, str(value))
    return value
