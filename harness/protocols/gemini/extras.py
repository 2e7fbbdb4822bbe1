"""What a Gemini response object says beyond the IR, kept as provider extras (`ir.ProviderExtras`) so that the
Gemini encoder can write it back: unknown top-level fields and unknown usageMetadata fields (`serviceTier`)."""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols.gemini.fields import PROTOCOL as NAME

KNOWN_KEYS = frozenset({"candidates", "usageMetadata", "modelVersion", "responseId", "promptFeedback", "error"})
"""Top-level keys of a response object the decoder reads; the others are kept as extras."""

USAGE_KEYS = frozenset(
    {
        "promptTokenCount",
        "candidatesTokenCount",
        "totalTokenCount",
        "cachedContentTokenCount",
        "thoughtsTokenCount",
        "promptTokensDetails",
        "cacheTokensDetails",
    }
)
"""usageMetadata keys the decoder reads or the encoder derives; the others (`serviceTier`, ...) are extras."""


def decode_extras(obj: dict[str, Any]) -> ir.ProviderExtras | None:
    """The top-level fields of a response object, and of its usageMetadata, that the IR has no place for."""
    found: dict[str, Any] = {k: v for k, v in obj.items() if k not in KNOWN_KEYS}
    meta = obj.get("usageMetadata")
    if isinstance(meta, dict):
        extra = {k: v for k, v in meta.items() if k not in USAGE_KEYS}
        if extra:
            found["usageMetadata"] = extra
    return {NAME: found} if found else None
