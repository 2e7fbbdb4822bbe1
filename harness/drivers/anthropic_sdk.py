"""Driver for the official `anthropic` SDK (Messages API), mapped by hand from IR to the SDK's call."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, ClassVar, cast

import anthropic
import httpx2
from anthropic.types import Message, MessageParam, RawMessageStreamEvent
from pydantic import ValidationError

from harness import ir
from harness.drivers.base import (
    DECODE_ERRORS,
    DUMMY_API_KEY,
    SdkResult,
    UnexpressibleAnswer,
    UnsupportedRequest,
    decode_failure,
    error_from_status,
    error_in_stream,
    failed,
    headers_of,
    neutral_for_status,
    with_cause,
)
from harness.drivers.event_builder import EventBuilder
from harness.protocols import registry
from harness.scenarios.model import Capability, SdkException

DEFAULT_MAX_TOKENS = 1024
"""The Messages API requires `max_tokens`; used when the IR request has none (plus any thinking budget)."""

_STOP: dict[str, ir.StopKind] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_use",
    "refusal": "refusal",
    "pause_turn": "other",
}

_CLASSES: tuple[tuple[type[anthropic.APIError], SdkException], ...] = (
    (anthropic.RateLimitError, SdkException.RATE_LIMIT),
    (anthropic.AuthenticationError, SdkException.AUTHENTICATION),
    (anthropic.PermissionDeniedError, SdkException.PERMISSION_DENIED),
    (anthropic.NotFoundError, SdkException.NOT_FOUND),
    (anthropic.BadRequestError, SdkException.BAD_REQUEST),
    (anthropic.OverloadedError, SdkException.OVERLOADED),
    (anthropic.ServiceUnavailableError, SdkException.OVERLOADED),
    (anthropic.InternalServerError, SdkException.SERVER_ERROR),
    (anthropic.APITimeoutError, SdkException.TIMEOUT),
    (anthropic.APIConnectionError, SdkException.CONNECTION),
)


def _image(source: ir.ImageSource) -> dict[str, Any]:
    if isinstance(source, ir.Base64Image):
        return {"type": "image", "source": {"type": "base64", "media_type": source.media_type, "data": source.data}}
    return {"type": "image", "source": {"type": "url", "url": source.url}}


def _document(part: ir.FilePart) -> dict[str, Any]:
    """A `document` block as an SDK user writes one: a URL as a URL source, plain text as a text source, a PDF as
    base64. A stored file's id is another provider's (no file_id capability)."""
    if part.url is not None:
        return {"type": "document", "source": {"type": "url", "url": part.url}}
    if part.data is None:
        raise UnsupportedRequest("anthropic: a document by another provider's file_id cannot be sent")
    if part.media_type == "text/plain":
        try:
            text = base64.b64decode(part.data, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise UnsupportedRequest(f"anthropic: a text/plain document that is not UTF-8 text: {exc}") from None
        return {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
    return {"type": "document", "source": {"type": "base64", "media_type": part.media_type, "data": part.data}}


def _block(part: ir.ContentPart) -> dict[str, Any]:
    if isinstance(part, ir.TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ir.ImagePart):
        return _image(part.source)
    if isinstance(part, ir.FilePart):
        return _document(part)
    if isinstance(part, ir.ToolCallPart):
        args = part.arguments if isinstance(part.arguments, dict) else {}
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": args}
    if isinstance(part, ir.ToolResultPart):
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": part.tool_call_id,
            "content": [_block(p) for p in part.content],
        }
        if part.is_error:
            block["is_error"] = True
        return block
    if isinstance(part, ir.ThinkingPart):
        return {"type": "thinking", "thinking": part.text, "signature": part.signature or ""}
    return {"type": "redacted_thinking", "data": part.data}


def messages(request: ir.Request) -> list[MessageParam]:
    """The `messages` array; tool results travel in user turns, as the Messages API wants."""
    out: list[MessageParam] = []
    for message in request.messages:
        if message.role == "system":
            raise UnsupportedRequest("anthropic: the Messages API has no system message after the first turn")
        role = "assistant" if message.role == "assistant" else "user"
        # Blocks are built as plain dicts in the wire's shape; the SDK accepts them as its TypedDicts.
        out.append(cast(MessageParam, {"role": role, "content": [_block(p) for p in message.content]}))
    return out


def _tool_choice(choice: ir.ToolChoice | None, parallel: bool | None) -> dict[str, Any] | None:
    if choice is None and parallel is None:
        return None
    kinds = {"auto": "auto", "none": "none", "required": "any", "tool": "tool"}
    out: dict[str, Any] = {"type": kinds[choice.kind] if choice is not None else "auto"}
    if isinstance(choice, ir.ToolChoiceTool):
        out["name"] = choice.name
    if parallel is False:
        out["disable_parallel_tool_use"] = True
    return out


def params(request: ir.Request) -> dict[str, Any]:
    """The keyword arguments of `messages.create` (without `stream`)."""
    budget = request.thinking.budget_tokens if request.thinking and request.thinking.enabled else None
    max_tokens = request.max_tokens or DEFAULT_MAX_TOKENS + (budget or 0)
    out: dict[str, Any] = {"model": request.model, "max_tokens": max_tokens, "messages": messages(request)}
    if request.system is not None:
        out["system"] = request.system
    if request.tools:
        out["tools"] = [
            {
                "name": t.name,
                **({"description": t.description} if t.description is not None else {}),
                "input_schema": t.parameters,
            }
            for t in request.tools
        ]
    if (choice := _tool_choice(request.tool_choice, request.parallel_tool_calls)) is not None:
        out["tool_choice"] = choice
    if request.stop:
        out["stop_sequences"] = list(request.stop)
    if request.thinking is not None:
        out["thinking"] = (
            {"type": "enabled", "budget_tokens": budget or 1024} if request.thinking.enabled else {"type": "disabled"}
        )
    fmt = request.response_format
    if isinstance(fmt, ir.ResponseFormatJsonSchema):
        out["output_config"] = {"format": {"type": "json_schema", "schema": fmt.schema_}}
    elif isinstance(fmt, ir.ResponseFormatJsonObject):
        raise UnsupportedRequest("anthropic: the Messages API has no JSON-object mode")
    # This SDK release has no temperature/top_p parameters; they go on the wire through extra_body.
    sampling = {"temperature": request.temperature, "top_p": request.top_p}
    if extra := {k: v for k, v in sampling.items() if v is not None}:
        out["extra_body"] = extra
    return out


def _usage(usage: Any) -> ir.Usage:
    """IR usage from a `Usage` / `MessageDeltaUsage`: input counts cached tokens too (IR convention)."""
    base = getattr(usage, "input_tokens", None)
    read = getattr(usage, "cache_read_input_tokens", None)
    write = getattr(usage, "cache_creation_input_tokens", None)
    total = None if base is None else base + (read or 0) + (write or 0)
    return ir.Usage(
        input_tokens=total, output_tokens=usage.output_tokens, cache_read_tokens=read, cache_write_tokens=write
    )


def _stop(reason: str | None, sequence: str | None) -> ir.StopReason | None:
    if reason is None:
        return None
    return ir.StopReason(kind=_STOP.get(reason, "other"), raw=reason, sequence=sequence)


def response_to_ir(message: Message) -> ir.Response:
    """The SDK's `Message` as an IR response."""
    content: list[ir.OutputPart] = []
    for block in message.content:
        if block.type == "text":
            content.append(ir.TextPart(text=block.text))
        elif block.type == "thinking":
            content.append(ir.ThinkingPart(text=block.thinking, signature=block.signature or None))
        elif block.type == "redacted_thinking":
            content.append(ir.RedactedThinkingPart(data=block.data))
        elif block.type == "tool_use":
            raw = json.dumps(block.input, ensure_ascii=False, separators=(",", ":"))
            content.append(ir.ToolCallPart(id=block.id, name=block.name, arguments=block.input, arguments_raw=raw))
        else:
            raise UnexpressibleAnswer(f"anthropic: content block {block.type!r} has no IR form")
    return ir.Response(
        id=message.id,
        model=message.model,
        content=content,
        stop_reason=_stop(message.stop_reason, message.stop_sequence),
        usage=_usage(message.usage),
    )


class _StreamState:
    """Raw stream events -> IR events; the wire's block indices map one to one onto IR blocks."""

    def __init__(self) -> None:
        self.builder = EventBuilder()
        self.stop: ir.StopReason | None = None
        self.stopped = False

    def add(self, event: RawMessageStreamEvent) -> None:
        b = self.builder
        if event.type == "message_start":
            b.start(id=event.message.id, model=event.message.model, usage=_usage(event.message.usage))
        elif event.type == "content_block_start":
            self._block_start(event.index, event.content_block)
        elif event.type == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                b.delta(event.index, delta.text)
            elif delta.type == "thinking_delta":
                b.delta(event.index, delta.thinking)
            elif delta.type == "signature_delta":
                b.sign(event.index, delta.signature)
            elif delta.type == "input_json_delta":
                b.delta(event.index, delta.partial_json)
        elif event.type == "content_block_stop":
            b.close(event.index)
        elif event.type == "message_delta":
            b.add_usage(_usage(event.usage))
            self.stop = _stop(event.delta.stop_reason, event.delta.stop_sequence)
        elif event.type == "message_stop":
            self.stopped = True

    def _block_start(self, index: int, block: Any) -> None:
        b = self.builder
        if block.type == "text":
            b.open(index, "text")
            b.delta(index, block.text)
        elif block.type == "thinking":
            b.open(index, "thinking")
            b.delta(index, block.thinking)
            if block.signature:
                b.sign(index, block.signature)
        elif block.type == "redacted_thinking":
            b.redacted(block.data)
        elif block.type == "tool_use":
            b.open(index, "tool_call", id=block.id, name=block.name)
            # Arguments normally stream as input_json_delta; a start that already holds input is sent whole.
            if block.input:
                b.delta(index, json.dumps(block.input, ensure_ascii=False, separators=(",", ":")))
        else:
            raise UnexpressibleAnswer(f"anthropic: content block {block.type!r} has no IR form")

    def end(self) -> list[ir.StreamEvent]:
        if not self.stopped:
            error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without message_stop")
            return self.builder.fail(error)
        return self.builder.done(self.stop)


def _classify(exc: anthropic.APIError | json.JSONDecodeError | ValidationError) -> tuple[ir.IRError, SdkException]:
    """The IR error and neutral exception name for what the SDK raised."""
    if isinstance(exc, anthropic.APIError):
        return _error(exc), _neutral(exc)
    return decode_failure(exc)


def _neutral(exc: anthropic.APIError) -> SdkException:
    if isinstance(exc, anthropic.APIStatusError) and exc.status_code == 200:
        # The SDK raises a plain APIStatusError carrying the 200 response for an `event: error` in the stream.
        return SdkException.STREAM_ERROR
    for cls, neutral in _CLASSES:
        if isinstance(exc, cls):
            return neutral
    if isinstance(exc, anthropic.APIStatusError):
        return neutral_for_status(exc.status_code)
    return SdkException.OTHER


def _error(exc: anthropic.APIError) -> ir.IRError:
    body = exc.body if isinstance(exc.body, dict) else {}
    detail = body.get("error") if isinstance(body.get("error"), dict) else body
    code = detail.get("type") if isinstance(detail, dict) else None
    message = str(detail.get("message") or exc.message) if isinstance(detail, dict) else exc.message
    if isinstance(exc, anthropic.APIStatusError):
        if exc.status_code == 200:
            return error_in_stream(message, code=code)
        return error_from_status(exc.status_code, message, code=code, headers=headers_of(exc))
    if isinstance(exc, anthropic.APITimeoutError):
        return ir.IRError.of(ir.ErrorKind.TIMEOUT, with_cause(exc.message, exc))
    return ir.IRError.of(ir.ErrorKind.NETWORK, with_cause(exc.message, exc))


class AnthropicDriver:
    """The `anthropic` SDK as a Messages API client."""

    name = "anthropic"
    capabilities: ClassVar[frozenset[Capability]] = registry.sdk("anthropic").capabilities
    """What the SDK can ask for and surface: its SDK facts (`facts.Sdk.capabilities`)."""

    def client(self, base_url: str, http_client: httpx2.Client) -> anthropic.Anthropic:
        """An SDK client pointed at `base_url` (it adds `/v1/messages`), without retries."""
        # The client's own timeout, named: an SDK takes httpx's default (5 s) on the client for "none set" and
        # waits its own 600 s instead, so `--timeout 5` would not bound a stalled stream.
        return anthropic.Anthropic(
            api_key=DUMMY_API_KEY,
            base_url=base_url.rstrip("/"),
            http_client=http_client,
            max_retries=0,
            timeout=http_client.timeout,
        )

    def run(self, request: ir.Request, *, stream: bool, base_url: str, http_client: Any) -> SdkResult:
        """Call `messages.create`, streamed (raw events) or not, and normalize what came back."""
        client = self.client(base_url, http_client)
        kwargs = params(request)
        state = _StreamState()
        try:
            if not stream:
                return SdkResult(response=response_to_ir(client.messages.create(**kwargs)))
            for event in client.messages.create(**kwargs, stream=True):
                state.add(event)
        except (anthropic.APIError, *DECODE_ERRORS) as exc:
            error, neutral = _classify(exc)
            events = state.builder.fail(error) if stream and state.builder.started else None
            return failed(error, neutral, exc, events=events)
        return SdkResult(events=state.end())

    def list_models(self, *, base_url: str, http_client: Any) -> SdkResult:
        """Call `models.list`."""
        try:
            return SdkResult(models=[m.id for m in self.client(base_url, http_client).models.list()])
        except anthropic.APIError as exc:
            return failed(_error(exc), _neutral(exc), exc)


DRIVER = AnthropicDriver()
