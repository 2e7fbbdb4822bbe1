"""The protocol-neutral request."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from harness.ir.base import IRModel, JSONObject
from harness.ir.content import ContentPart


class Message(IRModel):
    """One turn of the conversation."""

    role: Literal["system", "user", "assistant", "tool"]
    """Who speaks; `system` here is an in-conversation system/developer message (the leading one is
    `Request.system`)."""
    content: list[ContentPart] = Field(default_factory=list)
    """Content parts in order."""


class Tool(IRModel):
    """A function the model may call."""

    name: str
    """Function name."""
    description: str | None = None
    """What the function does."""
    parameters: JSONObject = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON Schema of the arguments object."""


class ToolChoiceAuto(IRModel):
    """The model decides whether to call a tool."""

    kind: Literal["auto"] = "auto"
    """Tag."""


class ToolChoiceNone(IRModel):
    """The model must not call tools."""

    kind: Literal["none"] = "none"
    """Tag."""


class ToolChoiceRequired(IRModel):
    """The model must call some tool."""

    kind: Literal["required"] = "required"
    """Tag."""


class ToolChoiceTool(IRModel):
    """The model must call the named tool."""

    kind: Literal["tool"] = "tool"
    """Tag."""
    name: str
    """Name of the tool to call."""


ToolChoice = Annotated[
    ToolChoiceAuto | ToolChoiceNone | ToolChoiceRequired | ToolChoiceTool,
    Field(discriminator="kind"),
]


class ResponseFormatText(IRModel):
    """Free text output."""

    kind: Literal["text"] = "text"
    """Tag."""


class ResponseFormatJsonObject(IRModel):
    """Any JSON object."""

    kind: Literal["json_object"] = "json_object"
    """Tag."""


class ResponseFormatJsonSchema(IRModel):
    """JSON matching a schema."""

    kind: Literal["json_schema"] = "json_schema"
    """Tag."""
    name: str = "response"
    """Schema name (OpenAI requires one)."""
    schema_: JSONObject = Field(alias="schema")
    """The JSON Schema."""
    strict: bool | None = None
    """Whether the provider must enforce the schema strictly."""


ResponseFormat = Annotated[
    ResponseFormatText | ResponseFormatJsonObject | ResponseFormatJsonSchema,
    Field(discriminator="kind"),
]


class ThinkingConfig(IRModel):
    """Extended thinking / reasoning settings."""

    enabled: bool = True
    """Whether the model should think before answering."""
    budget_tokens: int | None = None
    """Token budget for thinking, when the protocol has one."""


class Request(IRModel):
    """A generation request in protocol-neutral terms."""

    model: str
    """Model name as the client asked for it."""
    system: str | None = None
    """Leading system prompt (OpenAI first system/developer message, Anthropic `system`, Gemini
    `systemInstruction`)."""
    messages: list[Message] = Field(default_factory=list)
    """Conversation turns, oldest first."""
    tools: list[Tool] = Field(default_factory=list)
    """Functions the model may call."""
    tool_choice: ToolChoice | None = None
    """How the model must use tools; None means the protocol default."""
    parallel_tool_calls: bool | None = None
    """Whether several tool calls may come in one turn; None means the protocol default."""
    temperature: float | None = None
    """Sampling temperature."""
    top_p: float | None = None
    """Nucleus sampling mass."""
    max_tokens: int | None = None
    """Upper bound on generated tokens."""
    stop: list[str] = Field(default_factory=list)
    """Stop sequences."""
    response_format: ResponseFormat | None = None
    """Output format constraint."""
    stream: bool = False
    """Whether the client asked for a stream."""
    thinking: ThinkingConfig | None = None
    """Thinking settings; None means the protocol default."""
    provider_fields: dict[str, JSONObject] = Field(default_factory=dict)
    """Escape hatch: provider name -> raw request fields that have no IR equivalent."""
