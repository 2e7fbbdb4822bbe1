"""Stream events: message start, start/delta/end per content index, usage, and one terminal event."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import BaseModel, Field, ModelWrapValidatorHandler

from harness.ir.base import IRModel, JSONValue, ProviderExtras, built
from harness.ir.errors import IRError
from harness.ir.response import StopReason, Usage

M = TypeVar("M", bound=BaseModel)


class MessageStart(IRModel):
    """The stream has begun."""

    kind: Literal["message_start"] = "message_start"
    """Tag."""
    id: str | None = None
    """Provider's response id."""
    model: str | None = None
    """Model name the provider reported."""
    usage: Usage | None = None
    """Usage known at start (Anthropic reports input tokens here)."""
    extras: ProviderExtras | None = None
    """Fields of the provider's first event that the IR has no place for (`system_fingerprint`,
    `service_tier`, ...), keyed by protocol; written back only by that protocol's encoder."""


class TextStart(IRModel):
    """A text block opens."""

    kind: Literal["text_start"] = "text_start"
    """Tag."""
    index: int
    """Content index of the block."""
    refusal: bool = False
    """The block is the model's refusal, typed as one from its start (OpenAI's `refusal` content part): an
    encoder that has a refusal form writes it there; the answer's stop reason is `refusal`."""


class TextDelta(IRModel):
    """More text for an open text block."""

    kind: Literal["text_delta"] = "text_delta"
    """Tag."""
    index: int
    """Content index of the block."""
    text: str
    """The new text."""


class TextEnd(IRModel):
    """A text block closes."""

    kind: Literal["text_end"] = "text_end"
    """Tag."""
    index: int
    """Content index of the block."""


class ThinkingStart(IRModel):
    """A thinking block opens."""

    kind: Literal["thinking_start"] = "thinking_start"
    """Tag."""
    index: int
    """Content index of the block."""


class ThinkingDelta(IRModel):
    """More reasoning text for an open thinking block."""

    kind: Literal["thinking_delta"] = "thinking_delta"
    """Tag."""
    index: int
    """Content index of the block."""
    text: str
    """The new reasoning text."""


class ThinkingEnd(IRModel):
    """A thinking block closes, with its signature if any."""

    kind: Literal["thinking_end"] = "thinking_end"
    """Tag."""
    index: int
    """Content index of the block."""
    signature: str | None = None
    """Opaque signature of the block."""


class RedactedThinking(IRModel):
    """A whole redacted-thinking block (it has no deltas)."""

    kind: Literal["redacted_thinking"] = "redacted_thinking"
    """Tag."""
    index: int
    """Content index of the block."""
    data: str
    """Opaque encrypted payload."""


class ToolCallStart(IRModel):
    """A tool call opens."""

    kind: Literal["tool_call_start"] = "tool_call_start"
    """Tag."""
    index: int
    """Content index of the block."""
    id: str
    """Call id (synthesized where the protocol has none)."""
    name: str
    """Tool name."""
    call_type: str | None = None
    """`ToolCallPart.call_type`: None for a function call."""


class ToolCallDelta(IRModel):
    """A fragment of a tool call's JSON arguments."""

    kind: Literal["tool_call_delta"] = "tool_call_delta"
    """Tag."""
    index: int
    """Content index of the block."""
    arguments: str
    """The next fragment of the arguments' JSON text."""


class ToolCallEnd(IRModel):
    """A tool call closes; its arguments are complete."""

    kind: Literal["tool_call_end"] = "tool_call_end"
    """Tag."""
    index: int
    """Content index of the block."""


class UsageEvent(IRModel):
    """Usage figures reported mid-stream; later figures replace earlier ones field by field."""

    kind: Literal["usage"] = "usage"
    """Tag."""
    usage: Usage
    """The figures."""


class Done(IRModel):
    """Terminal event of a successful stream."""

    kind: Literal["done"] = "done"
    """Tag."""
    stop_reason: StopReason | None = None
    """Why generation stopped; None if the provider never said (e.g. OpenRouter streams with no
    finish_reason)."""
    usage: Usage | None = None
    """Final usage, when reported with the terminal event."""
    extras: ProviderExtras | None = None
    """Fields of the provider's closing events that the IR has no place for (Ollama's durations, Gemini's
    `finishMessage`, ...), keyed by protocol; written back only by that protocol's encoder."""


class ProviderEvent(IRModel):
    """A wire event the IR has no form for (an event type added after the decoder was written), kept rather
    than dropped. It opens or closes nothing: the grammar allows it anywhere between the start and the terminal
    event, the accumulator skips it, and only the encoder of `protocol` writes it back (as it came)."""

    kind: Literal["provider_event"] = "provider_event"
    """Tag."""
    protocol: str
    """Registry name of the protocol whose decoder kept it."""
    type: str
    """The wire's own name for the event (an SSE `event:` name or a `type` field)."""
    data: JSONValue = None
    """The event's payload as parsed JSON (its raw text when it is not JSON)."""


class ErrorEvent(IRModel):
    """Terminal event of a failed stream."""

    kind: Literal["error"] = "error"
    """Tag."""
    error: IRError
    """What went wrong."""


StreamEvent = Annotated[
    MessageStart
    | TextStart
    | TextDelta
    | TextEnd
    | ThinkingStart
    | ThinkingDelta
    | ThinkingEnd
    | RedactedThinking
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | UsageEvent
    | ProviderEvent
    | Done
    | ErrorEvent,
    Field(discriminator="kind"),
]
"""Any stream event."""

DeltaEvent = TextDelta | ThinkingDelta | ToolCallDelta
"""The event that carries a block's next piece."""

_DELTAS: dict[str, tuple[type[DeltaEvent], str, str]] = {
    "text": (TextDelta, "text_delta", "text"),
    "thinking": (ThinkingDelta, "thinking_delta", "text"),
    "tool_call": (ToolCallDelta, "tool_call_delta", "arguments"),
}


def delta(block: Literal["text", "thinking", "tool_call"], index: int, text: str) -> DeltaEvent:
    """The next piece of a `block` block: `TextDelta(index=index, text=text)`, `ThinkingDelta(...)` or
    `ToolCallDelta(index=index, arguments=text)`, equal field for field (fields set included) to the validated
    event. A decoder builds one for every piece of every stream, so a plain int and str, which validation keeps
    as they are, skip pydantic's validation (`built`, about twice as fast); anything else is validated."""
    cls, kind, field = _DELTAS[block]
    if type(index) is int and type(text) is str:
        return built(cls, {"kind": kind, "index": index, field: text}, {"index", field})
    return cls.model_validate({"index": index, field: text})


TERMINAL_KINDS = frozenset({"done", "error"})
"""Event kinds that end a stream."""

EVENT_CLASSES = frozenset(get_args(get_args(StreamEvent)[0]))
"""The classes a `StreamEvent` is one of."""


def events_kept(data: Any, handler: ModelWrapValidatorHandler[M], field: str = "events") -> M:
    """A model validated from `data` (a wrap validator's), its `field` a list of stream events kept as they are
    when every one is exactly of an event class: what validation makes of such a list (a new list of the same
    events: a model instance is not revalidated), without its cost, which for a union of fifteen classes is as
    much as building the events (a model holding a run's events is made several times per run). The list is
    validated as before when anything else is given (JSON input, dicts, a subclass), and so is every other field.
    The validation it wraps sees None for `field`: an after-validator reading it must be defined after the wrap
    validator calling this, so that it runs on the finished model (`RunTrace`)."""
    events = data.get(field) if type(data) is dict else None
    if type(events) is not list or not EVENT_CLASSES.issuperset(map(type, events)):
        return handler(data)
    model = handler({**data, field: None})
    model.__dict__[field] = list(events)
    return model
