"""Content parts of messages and responses, a union discriminated on `kind`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator

from harness.ir.base import IRModel, JSONValue


class TextPart(IRModel):
    """Plain text."""

    kind: Literal["text"] = "text"
    """Tag of this part."""
    text: str
    """The text."""


class Base64Image(IRModel):
    """Image bytes carried inline."""

    type: Literal["base64"] = "base64"
    """Tag of this image source."""
    media_type: str
    """MIME type such as `image/png`."""
    data: str
    """Base64-encoded image bytes (no data-URL prefix)."""


class UrlImage(IRModel):
    """Image referenced by URL."""

    type: Literal["url"] = "url"
    """Tag of this image source."""
    url: str
    """http(s) URL of the image."""


ImageSource = Annotated[Base64Image | UrlImage, Field(discriminator="type")]


class ImagePart(IRModel):
    """An image given to the model."""

    kind: Literal["image"] = "image"
    """Tag of this part."""
    source: ImageSource
    """Where the image bytes are."""


FILE_FORMS = ("data", "url", "file_id")
"""The forms a file part takes, exactly one at a time (`FilePart`)."""


def _file_forms(schema: dict[str, Any]) -> None:
    """`FilePart._one_form` in the JSON Schema: exactly one form given (the others absent or null), and inline
    data with its media type. Without it the schema took a part the models refuse (hypothesis found an inline
    part without `media_type`)."""
    null = {"type": "null"}

    def only(form: str, *also: str) -> dict[str, Any]:
        given = {name: {"type": "string"} for name in (form, *also)}
        others = {name: null for name in FILE_FORMS if name != form}
        return {"required": [form, *also], "properties": {**given, **others}}

    schema["oneOf"] = [only("data", "media_type"), only("url"), only("file_id")]


class FilePart(IRModel):
    """A document given to the model, not an image, in one of three forms: inline bytes (`data`, with its
    `media_type`), a URL the provider fetches (`url`), or the id of a file stored with the provider (`file_id`).
    Each protocol maps the forms it has (Chat `file`, Responses `input_file`, Anthropic `document`, Gemini
    `inlineData` / `fileData`, Bedrock `document`); a form it lacks is a capability gap (Capability.FILES,
    FILE_URL, FILE_ID)."""

    model_config = ConfigDict(json_schema_extra=_file_forms)

    kind: Literal["file"] = "file"
    """Tag of this part."""
    media_type: str | None = None
    """MIME type such as `application/pdf` or `text/plain` (required with `data`; a URL or stored file may have
    none: most protocols give none for those)."""
    data: str | None = None
    """Base64-encoded file bytes (no data-URL prefix)."""
    url: str | None = None
    """An http(s) URL the provider fetches the file from."""
    file_id: str | None = None
    """The id of a file stored with the provider (its Files API): meaningful to that provider's store only."""
    filename: str | None = None
    """The file's name where the client gave one."""

    @model_validator(mode="after")
    def _one_form(self) -> FilePart:
        forms = [name for name in FILE_FORMS if getattr(self, name) is not None]
        if len(forms) != 1:
            raise ValueError(f"a file part has exactly one of data, url and file_id, got {forms or 'none'}")
        if self.data is not None and self.media_type is None:
            raise ValueError("an inline file part (data) needs its media_type")
        return self

    @property
    def form(self) -> Literal["data", "url", "file_id"]:
        """Which of the three forms this part has."""
        return "data" if self.data is not None else "url" if self.url is not None else "file_id"


class ToolCallPart(IRModel):
    """A call the model asks the client to make."""

    kind: Literal["tool_call"] = "tool_call"
    """Tag of this part."""
    id: str
    """Call id; synthesized deterministically where the protocol has none (see the protocol's module)."""
    name: str
    """Name of the tool to call."""
    arguments: JSONValue = None
    """Arguments parsed from JSON (normally an object); None when `arguments_raw` is not valid JSON."""
    arguments_raw: str = ""
    """Arguments as the wire carried them (JSON text), kept to show what was actually sent."""
    call_type: str | None = None
    """None: a function call, whose arguments are JSON. Otherwise a call the client executes whose input is not a
    function's: `custom` (a custom tool's free text, in `arguments_raw`) or a built-in client tool (`local_shell`,
    `shell`, `apply_patch`: its action as JSON). Only a protocol with `Capability.CLIENT_TOOL_CALLS` carries one."""


class ToolResultPart(IRModel):
    """The client's answer to a tool call."""

    kind: Literal["tool_result"] = "tool_result"
    """Tag of this part."""
    tool_call_id: str
    """Id of the call this answers."""
    name: str | None = None
    """Name of the tool that was called (Gemini's functionResponse.name needs it)."""
    content: list[Annotated[TextPart | ImagePart, Field(discriminator="kind")]] = Field(default_factory=list)
    """What the tool returned (each part with its `kind` tag, as the IR schema requires)."""
    is_error: bool = False
    """Whether the tool failed."""


class ThinkingPart(IRModel):
    """Visible reasoning, with the signature some providers require to be sent back."""

    kind: Literal["thinking"] = "thinking"
    """Tag of this part."""
    text: str
    """Reasoning text (or summary)."""
    signature: str | None = None
    """Opaque signature (Anthropic `signature`, Gemini `thoughtSignature`)."""


class RedactedThinkingPart(IRModel):
    """Reasoning the provider returned only in encrypted form."""

    kind: Literal["redacted_thinking"] = "redacted_thinking"
    """Tag of this part."""
    data: str
    """Opaque encrypted payload, to be sent back unchanged."""


ContentPart = Annotated[
    TextPart | ImagePart | FilePart | ToolCallPart | ToolResultPart | ThinkingPart | RedactedThinkingPart,
    Field(discriminator="kind"),
]
"""Any content part."""

OutputPart = Annotated[
    TextPart | ToolCallPart | ThinkingPart | RedactedThinkingPart,
    Field(discriminator="kind"),
]
"""A part a model can produce in a response."""
