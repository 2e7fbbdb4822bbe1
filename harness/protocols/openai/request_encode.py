"""IR request -> wire request body for `POST <base>/chat/completions`.

Reads the `_shape` hints the same codec's decoder left in `provider_fields[<profile name>]` so a decoded request
re-encodes as the client sent it. Thinking settings travel as a `reasoning_effort` level. What Chat Completions
cannot carry (see `OpenAICodec.losses`) is left out: thinking budgets and signatures, tool-result error flags
and images, images in system messages.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from harness import ir
from harness.ir import Capability
from harness.protocols.openai.mapping import reasoning_effort
from harness.protocols.openai.profile import JSONDict, Profile
from harness.protocols.openai.request_decode import SHAPE


class _RequestEncoder:
    """One request's encoding state: the profile, the shape hints and the index of the next wire message."""

    def __init__(self, profile: Profile, request: ir.Request) -> None:
        self.profile = profile
        raw = dict(request.provider_fields.get(profile.name, {}))
        shape = raw.pop(SHAPE, {})
        self.raw: JSONDict = raw
        self.shape: JSONDict = shape if isinstance(shape, dict) else {}
        self.system_roles: Iterator[Any] = iter(self.shape.get("system_roles") or [])
        self.wire: list[JSONDict] = []

    def emit(self, message: JSONDict) -> None:
        """Append a wire message, restoring the extra fields the decoder saw on it."""
        extras = (self.shape.get("messages") or {}).get(str(len(self.wire)))
        if isinstance(extras, dict):
            message.update(extras)
        self.wire.append(message)

    def system_role(self) -> str:
        """`system` or `developer`, as the client wrote this system message."""
        role = next(self.system_roles, "system")
        return role if role in ("system", "developer") else "system"

    def image(self, part: ir.ImagePart, key: str) -> JSONDict:
        """An `image_url` part (inline images as data URLs)."""
        src = part.source
        url = src.url if isinstance(src, ir.UrlImage) else f"data:{src.media_type};base64,{src.data}"
        spec: JSONDict = {"url": url}
        detail = (self.shape.get("image_detail") or {}).get(key)
        if detail is not None:
            spec["detail"] = detail
        return {"type": "image_url", "image_url": spec}

    def file(self, part: ir.FilePart) -> JSONDict:
        """A `file` part: the bytes as a data URL in `file_data`, or a stored file's `file_id` where the provider's
        store is OpenAI's (its `file_id` capability); and the name when there is one. The part has no URL form,
        and another store's id means nothing here: both are refused (the planner sends neither: no capability)."""
        if part.url is not None:
            raise ValueError("Chat Completions' file part has no URL form (file_url)")
        spec: JSONDict
        if part.data is not None:
            spec = {"file_data": f"data:{part.media_type};base64,{part.data}"}
        elif Capability.FILE_ID in self.profile.capabilities:
            spec = {"file_id": part.file_id}
        else:
            raise ValueError(
                f"a file_id ({part.file_id}) names a file stored with another provider than {self.profile.name}"
            )
        if part.filename is not None:
            spec["filename"] = part.filename
        return {"type": "file", "file": spec}

    def part(self, part: ir.TextPart | ir.ImagePart | ir.FilePart, key: str) -> JSONDict:
        """One part of a user content array."""
        if isinstance(part, ir.TextPart):
            return {"type": "text", "text": part.text}
        return self.image(part, key) if isinstance(part, ir.ImagePart) else self.file(part)

    def texts(self, texts: list[str]) -> str | list[JSONDict]:
        """Text-only content: one text is a plain string, several are text parts, none is ""."""
        if len(texts) == 1:
            return texts[0]
        if not texts:
            return ""
        return [{"type": "text", "text": t} for t in texts]

    def tool_results(self, parts: Sequence[ir.ContentPart]) -> None:
        """One `tool` message per tool result (OpenAI tool messages carry text only)."""
        for part in parts:
            if isinstance(part, ir.ToolResultPart):
                texts = [c.text for c in part.content if isinstance(c, ir.TextPart)]
                self.emit(
                    {
                        "role": "tool",
                        "tool_call_id": self.profile.encode_tool_id(part.tool_call_id),
                        "content": self.texts(texts),
                    }
                )

    def user(self, parts: Sequence[ir.ContentPart]) -> None:
        """A user turn: its tool results first (as `tool` messages), then its text, images and files."""
        self.tool_results(parts)
        rest = [p for p in parts if isinstance(p, ir.TextPart | ir.ImagePart | ir.FilePart)]
        if rest or not parts:
            index = len(self.wire)
            if all(isinstance(p, ir.TextPart) for p in rest):
                content: Any = self.texts([p.text for p in rest if isinstance(p, ir.TextPart)])
            else:
                content = [self.part(p, f"{index}.{j}") for j, p in enumerate(rest)]
            self.emit({"role": "user", "content": content})

    def assistant(self, parts: Sequence[ir.ContentPart]) -> None:
        """An assistant turn: text content, tool calls, and thinking where the profile sends it back."""
        texts = [p.text for p in parts if isinstance(p, ir.TextPart)]
        calls = [p for p in parts if isinstance(p, ir.ToolCallPart)]
        message: JSONDict = {"role": "assistant"}
        if texts:
            message["content"] = texts[0] if len(texts) == 1 else [{"type": "text", "text": t} for t in texts]
        else:
            # OpenAI's own form: content null beside tool calls, "" for an empty turn.
            message["content"] = None if calls else ""
        if calls:
            message["tool_calls"] = [
                {
                    "id": self.profile.encode_tool_id(c.id),
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_raw},
                }
                for c in calls
            ]
        thinking = "".join(p.text for p in parts if isinstance(p, ir.ThinkingPart))
        if thinking and self.profile.request_reasoning_field:
            message[self.profile.request_reasoning_field] = thinking
        self.emit(message)
        self.tool_results(parts)

    def messages(self, request: ir.Request) -> list[JSONDict]:
        """The wire `messages` array: the system prompt first, then each IR message."""
        if request.system is not None:
            content: Any = request.system
            if self.shape.get("system_parts"):
                content = [{"type": "text", "text": request.system}]
            self.emit({"role": self.system_role(), "content": content})
        for message in request.messages:
            if message.role == "system":
                texts = [p.text for p in message.content if isinstance(p, ir.TextPart)]
                self.emit({"role": self.system_role(), "content": self.texts(texts)})
            elif message.role == "user":
                self.user(message.content)
            elif message.role == "assistant":
                self.assistant(message.content)
            else:
                self.tool_results(message.content)
                others = [p for p in message.content if not isinstance(p, ir.ToolResultPart)]
                if others:
                    self.user(others)
        return self.wire

    def tools(self, request: ir.Request) -> list[JSONDict]:
        """The `tools` array, with the extra function keys (e.g. `strict`) the decoder saw."""
        out: list[JSONDict] = []
        extras_by_index = self.shape.get("tools") or {}
        for i, tool in enumerate(request.tools):
            function: JSONDict = {"name": tool.name}
            if tool.description is not None:
                function["description"] = tool.description
            function["parameters"] = tool.parameters
            extras = extras_by_index.get(str(i))
            if isinstance(extras, dict):
                function.update(extras)
            out.append({"type": "function", "function": function})
        return out

    def response_format(self, fmt: ir.ResponseFormat) -> JSONDict:
        """`response_format` for text, json_object or json_schema."""
        if not isinstance(fmt, ir.ResponseFormatJsonSchema):
            return {"type": fmt.kind}
        inner: JSONDict = {"name": fmt.name, "schema": fmt.schema_}
        if fmt.strict is not None:
            inner["strict"] = fmt.strict
        extras = self.shape.get("json_schema")
        if isinstance(extras, dict):
            inner.update(extras)
        return {"type": "json_schema", "json_schema": inner}


def _tool_choice(choice: ir.ToolChoice) -> Any:
    if isinstance(choice, ir.ToolChoiceTool):
        return {"type": "function", "function": {"name": choice.name}}
    return choice.kind


def encode_request_body(profile: Profile, request: ir.Request) -> JSONDict:
    """The JSON body of a Chat Completions request for an IR request."""
    e = _RequestEncoder(profile, request)
    body: JSONDict = {"model": request.model, "messages": e.messages(request)}
    if "body_model" in e.shape:  # a deployment-path client (Azure) wrote another model, or none, in the body
        if e.shape["body_model"] is None:
            del body["model"]
        else:
            body["model"] = e.shape["body_model"]
    if request.tools:
        body["tools"] = e.tools(request)
    if request.tool_choice is not None:
        body["tool_choice"] = _tool_choice(request.tool_choice)
    if request.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.max_tokens is not None:
        body[e.shape.get("max_tokens_field") or profile.max_tokens_field] = request.max_tokens
    if request.stop:
        single = e.shape.get("stop_string") and len(request.stop) == 1
        body["stop"] = request.stop[0] if single else list(request.stop)
    if request.response_format is not None:
        body["response_format"] = e.response_format(request.response_format)
    if request.thinking is not None and profile.reasoning_effort:
        body["reasoning_effort"] = e.shape.get("reasoning_effort") or reasoning_effort(request.thinking)
    if request.stream:
        body["stream"] = True
    if "stream_options" in e.shape:
        if e.shape["stream_options"] is not None:
            body["stream_options"] = e.shape["stream_options"]
    elif request.stream and profile.sends_stream_options:
        body["stream_options"] = {"include_usage": True}
    for key, value in e.raw.items():
        body.setdefault(key, value)
    return profile.encode_request(body, request)


def include_usage(profile: Profile, request: ir.Request | None) -> bool:
    """Whether a streamed answer to `request` ends with the usage-only chunk (default: yes)."""
    if request is None:
        return True
    shape = request.provider_fields.get(profile.name, {}).get(SHAPE)
    if isinstance(shape, dict) and "stream_options" in shape:
        options = shape["stream_options"]
        return isinstance(options, dict) and options.get("include_usage") is True
    return True


def target(profile: Profile, request: ir.Request) -> tuple[str, dict[str, str]]:
    """Path and query of the request: the model is a path segment for deployment-style endpoints (Azure), and
    the query is the profile's (e.g. `api-version`) unless the decoded client request carried its own."""
    shape = request.provider_fields.get(profile.name, {}).get(SHAPE)
    query = shape.get("query") if isinstance(shape, dict) else None
    if not isinstance(query, dict):
        query = dict(profile.query)
    return profile.path(request.model), {str(k): str(v) for k, v in query.items()}
