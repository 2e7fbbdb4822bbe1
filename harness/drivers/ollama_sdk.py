"""Driver for the official `ollama` SDK (`/api/chat`), mapped by hand from IR to the SDK's call.

The ollama SDK builds its own `httpx` (not `httpx2`) client; the injected `httpx.Client` is reached through
a forwarding transport, so the caller's transport (socket, mock) carries every request.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import httpx
import ollama
from pydantic import ValidationError

from harness import ir
from harness.drivers.base import (
    DECODE_ERRORS,
    SdkResult,
    UnsupportedRequest,
    decode_failure,
    error_from_status,
    error_in_stream,
    failed,
    neutral_for_status,
)
from harness.drivers.event_builder import EventBuilder
from harness.protocols import registry
from harness.scenarios.model import Capability, SdkException


class ForwardingTransport(httpx.BaseTransport):
    """An httpx transport that sends every request through an existing `httpx.Client`."""

    def __init__(self, client: httpx.Client) -> None:
        self._client = client

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Forward the request; the body stays unread so streams keep streaming."""
        return self._client.send(request, stream=True)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _text(parts: list[ir.ContentPart]) -> str:
    return "".join(p.text for p in parts if isinstance(p, ir.TextPart))


def _images(parts: list[ir.ContentPart]) -> list[ollama.Image]:
    out = []
    for part in parts:
        if isinstance(part, ir.ImagePart):
            if not isinstance(part.source, ir.Base64Image):
                raise UnsupportedRequest("ollama: images must be inline base64, not URLs")
            out.append(ollama.Image(value=base64.b64decode(part.source.data)))
    return out


def _message(message: ir.Message, names: Mapping[str, str]) -> list[ollama.Message]:
    results = [p for p in message.content if isinstance(p, ir.ToolResultPart)]
    if results:
        return [
            ollama.Message(role="tool", content=_text(list(r.content)), tool_name=r.name or names.get(r.tool_call_id))
            for r in results
        ]
    calls = [
        ollama.Message.ToolCall(
            function=ollama.Message.ToolCall.Function(
                name=p.name, arguments=p.arguments if isinstance(p.arguments, dict) else {}
            )
        )
        for p in message.content
        if isinstance(p, ir.ToolCallPart)
    ]
    thinking = "".join(p.text for p in message.content if isinstance(p, ir.ThinkingPart))
    return [
        ollama.Message(
            role=message.role,
            content=_text(message.content),
            thinking=thinking or None,
            images=_images(message.content) or None,
            tool_calls=calls or None,
        )
    ]


def messages(request: ir.Request) -> list[ollama.Message]:
    """The `messages` list: system prompt first, tool results as `tool` messages naming their tool."""
    names = {p.id: p.name for m in request.messages for p in m.content if isinstance(p, ir.ToolCallPart)}
    out = [ollama.Message(role="system", content=request.system)] if request.system is not None else []
    for message in request.messages:
        out += _message(message, names)
    return out


def params(request: ir.Request) -> dict[str, Any]:
    """The keyword arguments of `Client.chat` (without `stream`)."""
    if request.tool_choice is not None and request.tool_choice.kind != "auto":
        raise UnsupportedRequest("ollama: /api/chat has no tool_choice")
    out: dict[str, Any] = {"model": request.model, "messages": messages(request)}
    if request.tools:
        out["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description or "", "parameters": t.parameters},
            }
            for t in request.tools
        ]
    options = {
        "temperature": request.temperature,
        "top_p": request.top_p,
        "num_predict": request.max_tokens,
        "stop": list(request.stop) or None,
    }
    if options := {k: v for k, v in options.items() if v is not None}:
        out["options"] = options
    fmt = request.response_format
    if isinstance(fmt, ir.ResponseFormatJsonObject):
        out["format"] = "json"
    elif isinstance(fmt, ir.ResponseFormatJsonSchema):
        out["format"] = fmt.schema_
    if request.thinking is not None:
        out["think"] = request.thinking.enabled
    return out


def _stop(reason: str | None, has_calls: bool) -> ir.StopReason | None:
    if reason is None:
        return None
    kind: ir.StopKind = "max_tokens" if reason == "length" else "end_turn" if reason == "stop" else "other"
    if kind == "end_turn" and has_calls:
        kind = "tool_use"
    return ir.StopReason(kind=kind, raw=reason)


def _usage(chunk: ollama.ChatResponse) -> ir.Usage | None:
    if chunk.prompt_eval_count is None and chunk.eval_count is None:
        return None
    return ir.Usage(input_tokens=chunk.prompt_eval_count, output_tokens=chunk.eval_count)


class _StreamState:
    """Chat chunks -> IR events; tool calls arrive whole and get ids from their position (Ollama has none)."""

    def __init__(self) -> None:
        self.builder = EventBuilder()
        self.done_reason: str | None = None
        self.finished = False
        self.calls = 0

    def add(self, chunk: ollama.ChatResponse) -> None:
        self.builder.start(model=chunk.model)
        message = chunk.message
        self.builder.flow_thinking(message.thinking or "")
        self.builder.flow_text(message.content or "")
        for call in message.tool_calls or []:
            name = call.function.name
            args = _compact(dict(call.function.arguments))
            self.builder.tool_call(("call", self.calls), id=f"call_{self.calls}_{name}", name=name, arguments=args)
            self.calls += 1
        if chunk.done:
            self.finished = True
            self.done_reason = chunk.done_reason
            self.builder.add_usage(_usage(chunk))

    def end(self) -> list[ir.StreamEvent]:
        if not self.finished:
            error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without a done:true line")
            return self.builder.fail(error)
        return self.builder.done(_stop(self.done_reason, self.calls > 0))


def response_to_ir(chunk: ollama.ChatResponse) -> ir.Response:
    """The SDK's non-streamed `ChatResponse` as IR."""
    message = chunk.message
    content: list[ir.OutputPart] = []
    if message.thinking:
        content.append(ir.ThinkingPart(text=message.thinking))
    if message.content:
        content.append(ir.TextPart(text=message.content))
    for i, call in enumerate(message.tool_calls or []):
        args = dict(call.function.arguments)
        name = call.function.name
        content.append(ir.ToolCallPart(id=f"call_{i}_{name}", name=name, arguments=args, arguments_raw=_compact(args)))
    return ir.Response(
        model=chunk.model,
        content=content,
        stop_reason=_stop(chunk.done_reason, bool(message.tool_calls)),
        usage=_usage(chunk) or ir.Usage(),
    )


def _classify(
    exc: ollama.ResponseError | httpx.TransportError | json.JSONDecodeError | ValidationError,
) -> tuple[ir.IRError, SdkException]:
    """The IR error and neutral exception name for what the SDK raised."""
    if isinstance(exc, httpx.TransportError):
        return ir.IRError.of(ir.ErrorKind.NETWORK, str(exc)), SdkException.CONNECTION
    if isinstance(exc, json.JSONDecodeError | ValidationError):
        return decode_failure(exc)
    return _failure(exc)


def _failure(exc: ollama.ResponseError) -> tuple[ir.IRError, SdkException]:
    message = str(exc.error)
    if exc.status_code == -1:
        # The SDK raises ResponseError without a status for an `error` line inside a 200 stream.
        return error_in_stream(message), SdkException.STREAM_ERROR
    return error_from_status(exc.status_code, message), neutral_for_status(exc.status_code)


class OllamaDriver:
    """The `ollama` SDK as an `/api/chat` client."""

    name = "ollama"
    capabilities: ClassVar[frozenset[Capability]] = registry.sdk("ollama").capabilities
    """What the SDK can ask for and surface: its SDK facts (`facts.Sdk.capabilities`)."""

    def client(self, base_url: str, http_client: httpx.Client) -> ollama.Client:
        """An SDK client for `base_url` whose requests go through `http_client`."""
        if not isinstance(http_client, httpx.Client):
            raise TypeError(f"the ollama driver needs an httpx.Client, not {type(http_client).__name__}")
        return ollama.Client(host=base_url.rstrip("/"), transport=ForwardingTransport(http_client))

    def run(self, request: ir.Request, *, stream: bool, base_url: str, http_client: Any) -> SdkResult:
        """Call `chat`, streamed or not, and normalize what came back."""
        client = self.client(base_url, http_client)
        kwargs = params(request)
        state = _StreamState()
        try:
            if not stream:
                return SdkResult(response=response_to_ir(client.chat(**kwargs, stream=False)))
            chunks: Iterator[ollama.ChatResponse] = client.chat(**kwargs, stream=True)
            for chunk in chunks:
                state.add(chunk)
        except (ollama.ResponseError, httpx.TransportError, *DECODE_ERRORS) as exc:
            error, neutral = _classify(exc)
            events = state.builder.fail(error) if stream and state.builder.started else None
            return failed(error, neutral, exc, events=events)
        return SdkResult(events=state.end())

    def list_models(self, *, base_url: str, http_client: Any) -> SdkResult:
        """Call `list` (`/api/tags`)."""
        try:
            listing = self.client(base_url, http_client).list()
        except ollama.ResponseError as exc:
            return failed(*_failure(exc), exc)
        return SdkResult(models=[m.model or "" for m in listing.models])


DRIVER = OllamaDriver()
