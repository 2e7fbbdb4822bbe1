"""Usage, stop reasons and the final response."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from harness.ir.base import IRModel, ProviderExtras
from harness.ir.content import OutputPart

StopKind = Literal["end_turn", "max_tokens", "stop_sequence", "tool_use", "content_filter", "refusal", "error", "other"]


class StopReason(IRModel):
    """Why generation stopped."""

    kind: StopKind
    """Provider-neutral reason."""
    raw: str | None = None
    """The provider's own value (`finish_reason`, `stop_reason`, `finishReason`, `done_reason`)."""
    sequence: str | None = None
    """The stop sequence that matched, when the provider says which."""


class Usage(IRModel):
    """Token accounting; None means the provider did not report that figure."""

    input_tokens: int | None = None
    """Prompt tokens, including cached ones."""
    output_tokens: int | None = None
    """Generated tokens, including reasoning tokens."""
    cache_read_tokens: int | None = None
    """Prompt tokens served from cache."""
    cache_write_tokens: int | None = None
    """Prompt tokens written to cache."""
    reasoning_tokens: int | None = None
    """Generated tokens spent on reasoning."""

    def merged(self, newer: Usage | None) -> Usage:
        """This usage updated by the fields `newer` reports (later figures win)."""
        if newer is None:
            return self
        updates = {k: v for k, v in newer.model_dump().items() if v is not None}
        return self.model_copy(update=updates)


class Response(IRModel):
    """A complete generation result."""

    id: str | None = None
    """Provider's response id."""
    model: str | None = None
    """Model name the provider reported."""
    content: list[OutputPart] = Field(default_factory=list)
    """Output parts in order."""
    stop_reason: StopReason | None = None
    """Why generation stopped; None if the stream never said."""
    usage: Usage = Field(default_factory=Usage)
    """Token accounting."""
    extras: ProviderExtras | None = None
    """Fields of the provider's response that the IR has no place for (`system_fingerprint`, `service_tier`,
    Ollama's durations, ...), keyed by protocol; written back only by that protocol's encoder."""
