"""Driver for the official `openai` SDK's Responses client (`client.responses.create`), mapped by hand from IR.

The driver is a stateless client, as coding agents run it: `store: false`, the conversation re-sent as items each
turn, and with thinking on the reasoning asked back encrypted (`include`) and summarized, so that a later turn can
send it back. Streams are read as the SDK's raw events (`responses.create(stream=True)`): its `responses.stream`
helper has no final response for an incomplete stream. The SDK raises `APIError` for an `error` event that
nests OpenAI's error object (what the API sends), but yields `response.failed`, and an `error` event of the
documented flat form, as typed events: the driver reports those as stream errors named after their event class.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import httpx2
import openai
from openai.types.responses import Response, ResponseStreamEvent, ResponseUsage
from pydantic import ValidationError

from harness import ir
from harness.drivers import responses_ws
from harness.drivers.base import (
    DECODE_ERRORS,
    DUMMY_API_KEY,
    SdkResult,
    SocketRun,
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

_INCOMPLETE: dict[str, ir.StopKind] = {"max_output_tokens": "max_tokens", "content_filter": "content_filter"}

# Error codes of the Responses API whose words `kind_for_code` would misread (`invalid_api_key` is no bad request).
_CODES: dict[str, ir.ErrorKind] = {
    "invalid_api_key": ir.ErrorKind.AUTH,
    "insufficient_quota": ir.ErrorKind.THROTTLED,
    "model_not_found": ir.ErrorKind.NOT_FOUND,
    "vector_store_timeout": ir.ErrorKind.TIMEOUT,
    "network_error": ir.ErrorKind.NETWORK,
    "malformed_stream": ir.ErrorKind.MALFORMED_STREAM,
}

# SDK class -> neutral name. InternalServerError covers every 5xx, so its status decides (see _neutral).
_CLASSES: tuple[tuple[type[openai.APIError], SdkException], ...] = (
    (openai.RateLimitError, SdkException.RATE_LIMIT),
    (openai.AuthenticationError, SdkException.AUTHENTICATION),
    (openai.PermissionDeniedError, SdkException.PERMISSION_DENIED),
    (openai.NotFoundError, SdkException.NOT_FOUND),
    (openai.BadRequestError, SdkException.BAD_REQUEST),
    (openai.UnprocessableEntityError, SdkException.BAD_REQUEST),
    (openai.APITimeoutError, SdkException.TIMEOUT),
    (openai.APIConnectionError, SdkException.CONNECTION),
)


# --- IR -> the SDK's call -----------------------------------------------------------------------------------


def _image(part: ir.ImagePart) -> dict[str, Any]:
    src = part.source
    url = src.url if isinstance(src, ir.UrlImage) else f"data:{src.media_type};base64,{src.data}"
    return {"type": "input_image", "image_url": url, "detail": "auto"}


def _file(part: ir.FilePart) -> dict[str, Any]:
    """An `input_file` part: the bytes as a data URL in `file_data`, a URL in `file_url`, a stored file's
    `file_id`; the name when there is one."""
    out: dict[str, Any] = {"type": "input_file"}
    if part.data is not None:
        out["file_data"] = f"data:{part.media_type};base64,{part.data}"
    elif part.url is not None:
        out["file_url"] = part.url
    else:
        out["file_id"] = part.file_id
    if part.filename is not None:
        out["filename"] = part.filename
    return out


def _content(parts: Sequence[ir.ContentPart], what: str) -> str | list[dict[str, Any]]:
    """Text, images and files as input content: a lone text as a plain string, as most callers write it."""
    if len(parts) == 1 and isinstance(parts[0], ir.TextPart):
        return parts[0].text
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ir.TextPart):
            out.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ir.ImagePart):
            out.append(_image(part))
        elif isinstance(part, ir.FilePart):
            out.append(_file(part))
        else:
            raise UnsupportedRequest(f"responses: {what} cannot carry {part.kind}")
    return out


def _reasoning_item(parts: list[ir.ThinkingPart], encrypted: str | None, n: int) -> dict[str, Any]:
    # The API wants the id of a reasoning item sent back; a stateless client that kept none names it by place.
    item: dict[str, Any] = {"type": "reasoning", "id": f"rs_{n}", "summary": []}
    item["summary"] = [{"type": "summary_text", "text": p.text} for p in parts]
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


def _assistant(parts: list[ir.ContentPart], out: list[dict[str, Any]]) -> None:
    """An assistant turn as the items the API returned it in: reasoning, messages, function calls."""
    thinking: list[ir.ThinkingPart] = []
    for part in parts:
        if thinking and not isinstance(part, ir.ThinkingPart):
            out.append(_reasoning_item(thinking, None, len(out)))
            thinking = []
        if isinstance(part, ir.ThinkingPart):
            thinking.append(part)
            if part.signature is not None:  # the encrypted content closes the reasoning item it belongs to
                out.append(_reasoning_item(thinking, part.signature, len(out)))
                thinking = []
        elif isinstance(part, ir.RedactedThinkingPart):
            out.append(_reasoning_item([], part.data, len(out)))
        elif isinstance(part, ir.TextPart):
            out.append({"role": "assistant", "content": part.text})
        elif isinstance(part, ir.ToolCallPart):
            arguments = part.arguments_raw or json.dumps(part.arguments or {})
            out.append({"type": "function_call", "call_id": part.id, "name": part.name, "arguments": arguments})
        else:
            raise UnsupportedRequest(f"responses: an assistant turn cannot carry {part.kind}")
    if thinking:
        out.append(_reasoning_item(thinking, None, len(out)))


def _tool_result(part: ir.ToolResultPart) -> dict[str, Any]:
    output = _content(part.content, "tool results") if part.content else ""
    return {"type": "function_call_output", "call_id": part.tool_call_id, "output": output}


def input_items(request: ir.Request) -> list[dict[str, Any]]:
    """The `input` items of a request's conversation."""
    out: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "assistant":
            _assistant(list(message.content), out)
            continue
        results = [p for p in message.content if isinstance(p, ir.ToolResultPart)]
        out += [_tool_result(p) for p in results]
        rest = [p for p in message.content if not isinstance(p, ir.ToolResultPart)]
        if rest or (not results and message.role != "tool"):
            role = "developer" if message.role == "system" else "user"
            out.append({"role": role, "content": _content(rest, f"{message.role} messages")})
    return out


def _tool_choice(choice: ir.ToolChoice) -> Any:
    if isinstance(choice, ir.ToolChoiceTool):
        return {"type": "function", "name": choice.name}
    return choice.kind


def _format(fmt: ir.ResponseFormat) -> dict[str, Any]:
    if isinstance(fmt, ir.ResponseFormatJsonSchema):
        out: dict[str, Any] = {"type": "json_schema", "name": fmt.name, "schema": fmt.schema_}
        if fmt.strict is not None:
            out["strict"] = fmt.strict
        return out
    return {"type": fmt.kind}


def _effort(thinking: ir.ThinkingConfig) -> str:
    # The Responses API asks for reasoning by effort, not by budget; the thresholds are ours.
    if not thinking.enabled:
        return "none"
    budget = thinking.budget_tokens or 0
    return "low" if budget <= 2048 else "medium" if budget <= 8192 else "high"


def params(request: ir.Request) -> dict[str, Any]:
    """The keyword arguments of `responses.create` (without `stream`)."""
    if request.stop:
        raise UnsupportedRequest("responses: the Responses API has no stop sequences")
    out: dict[str, Any] = {"model": request.model, "input": input_items(request), "store": False}
    if request.system is not None:
        out["instructions"] = request.system
    if request.tools:
        out["tools"] = [
            {
                "type": "function",
                "name": t.name,
                **({"description": t.description} if t.description is not None else {}),
                "parameters": t.parameters,
                "strict": False,
            }
            for t in request.tools
        ]
    if request.tool_choice is not None:
        out["tool_choice"] = _tool_choice(request.tool_choice)
    optional = {
        "parallel_tool_calls": request.parallel_tool_calls,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "max_output_tokens": request.max_tokens,
    }
    out.update({k: v for k, v in optional.items() if v is not None})
    if request.response_format is not None:
        out["text"] = {"format": _format(request.response_format)}
    if request.thinking is not None:
        out["reasoning"] = {"effort": _effort(request.thinking)}
        if request.thinking.enabled:
            out["reasoning"]["summary"] = "auto"
            out["include"] = ["reasoning.encrypted_content"]
    return out


# --- what the SDK returned -> IR ----------------------------------------------------------------------------


def _usage(usage: ResponseUsage | None) -> ir.Usage | None:
    if usage is None:
        return None
    details, out_details = usage.input_tokens_details, usage.output_tokens_details
    return ir.Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=getattr(details, "cached_tokens", None),
        cache_write_tokens=getattr(details, "cache_write_tokens", None),
        reasoning_tokens=getattr(out_details, "reasoning_tokens", None),
    )


def _stop(response: Response, *, calls: bool, refused: bool) -> ir.StopReason | None:
    status = response.status
    if status == "completed":
        return ir.StopReason(kind="tool_use" if calls else "refusal" if refused else "end_turn", raw=status)
    if status == "incomplete":
        reason = response.incomplete_details.reason if response.incomplete_details else None
        return ir.StopReason(kind=_INCOMPLETE.get(reason or "", "other"), raw=reason or status)
    if status == "failed":
        return ir.StopReason(kind="error", raw=status)
    return ir.StopReason(kind="other", raw=status) if status == "cancelled" else None


def _parse(raw: str) -> Any:
    if raw.strip() == "":
        return {}
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return None


def _reasoning_parts(item: Any) -> list[ir.OutputPart]:
    # LiteLLM 1.106.2 sends `"summary": null` (the API always sends a list); the SDK keeps the None.
    texts = [s.text for s in item.summary or []] or [c.text for c in item.content or []]
    parts: list[ir.OutputPart] = [ir.ThinkingPart(text=t) for t in texts]
    if parts:
        parts[-1] = ir.ThinkingPart(text=texts[-1], signature=item.encrypted_content or None)
    elif item.encrypted_content:
        parts.append(ir.RedactedThinkingPart(data=item.encrypted_content))
    return parts


def response_to_ir(response: Response) -> ir.Response:
    """The SDK's `Response` as an IR response: its output items in order, its status as the stop reason."""
    content: list[ir.OutputPart] = []
    refused = False
    for item in response.output:
        if item.type == "message":
            for part in item.content:
                refused = refused or part.type == "refusal"
                content.append(ir.TextPart(text=part.text if part.type == "output_text" else part.refusal))
        elif item.type == "reasoning":
            content += _reasoning_parts(item)
        elif item.type == "function_call":
            raw = item.arguments
            content.append(ir.ToolCallPart(id=item.call_id, name=item.name, arguments=_parse(raw), arguments_raw=raw))
        else:
            raise UnsupportedRequest(f"responses: output item {item.type!r} has no IR form")
    calls = any(isinstance(p, ir.ToolCallPart) for p in content)
    return ir.Response(
        id=response.id,
        model=response.model,
        content=content,
        stop_reason=_stop(response, calls=calls, refused=refused),
        usage=_usage(response.usage) or ir.Usage(),
    )


class StreamShapeError(ValueError):
    """An event names an output item or part no earlier event opened: the events do not add up to a response
    (what a client keyed by `output_index` and `content_index` cannot read); reported as a decode failure."""


class _StreamState:
    """The SDK's raw stream events -> IR events. Blocks are keyed by their wire place: a function call by its
    output index, a text or reasoning part by output and content (or summary) index. A reasoning part's block
    stays open until the next part of its item or the item's end, whose encrypted content is its signature."""

    def __init__(self) -> None:
        self.builder = EventBuilder()
        self.held: dict[int, object] = {}
        self.thinking: set[object] = set()  # keys of thinking blocks
        self.added: set[int] = set()  # output items announced by output_item.added
        self.streamed: set[int] = set()  # output items whose parts came as events
        self.arguments: dict[int, str] = {}
        self.calls = self.refused = self.ended = False
        self.stop: ir.StopReason | None = None
        self.error: ir.IRError | None = None
        self.event_class = ""

    def add(self, event: ResponseStreamEvent) -> None:
        if self.ended or self.error is not None:
            return
        b = self.builder
        if event.type == "response.created":
            b.start(id=event.response.id, model=event.response.model)
        elif event.type == "response.output_item.added" and event.item.type == "function_call":
            self.added.add(event.output_index)
            self.calls = True
            b.open(("item", event.output_index), "tool_call", id=event.item.call_id, name=event.item.name)
            self._arguments(event.output_index, event.item.arguments)
        elif event.type == "response.content_part.added":
            self._open(event.output_index, ("part", event.output_index, event.content_index), event.part.type)
        elif event.type in ("response.output_text.delta", "response.refusal.delta", "response.reasoning_text.delta"):
            self._delta(("part", event.output_index, event.content_index), event.delta, event.type)
        elif event.type == "response.content_part.done":
            self._part_done(event.output_index, ("part", event.output_index, event.content_index))
        elif event.type == "response.reasoning_summary_part.added":
            self._open(event.output_index, ("summary", event.output_index, event.summary_index), "summary_text")
        elif event.type == "response.reasoning_summary_text.delta":
            self._delta(("summary", event.output_index, event.summary_index), event.delta, event.type)
        elif event.type == "response.reasoning_summary_part.done":
            self._part_done(event.output_index, ("summary", event.output_index, event.summary_index))
        elif event.type == "response.function_call_arguments.delta":
            self._arguments(event.output_index, self.arguments.get(event.output_index, "") + event.delta)
        elif event.type == "response.output_item.done":
            self._item_done(event.output_index, event.item)
        elif event.type == "response.output_item.added":
            self.added.add(event.output_index)
        elif event.type in ("response.completed", "response.incomplete"):
            for index, item in enumerate(event.response.output):  # items a server sent only in the final response
                if index not in self.added:
                    self.calls = self.calls or item.type == "function_call"
                    self._whole(response_to_ir(event.response.model_copy(update={"output": [item]})).content)
            b.add_usage(_usage(event.response.usage))
            self.stop = _stop(event.response, calls=self.calls, refused=self.refused)
            self.ended = True
        elif event.type == "response.failed":
            error = event.response.error
            self._fail(_stream_error(error.message, error.code) if error else error_in_stream("response failed"), event)
        elif event.type == "error":
            self._fail(_stream_error(event.message, event.code), event)

    def _open(self, output_index: int, key: object, part_type: str) -> None:
        self._release(output_index)
        self.refused = self.refused or part_type == "refusal"
        self.streamed.add(output_index)
        if part_type in ("output_text", "refusal"):
            self.builder.open(key, "text")
        else:
            self.thinking.add(key)
            self.builder.open(key, "thinking")

    def _part_done(self, output_index: int, key: object) -> None:
        if key in self.thinking:
            self.held[output_index] = key
        else:
            self.builder.close(key)

    def _release(self, output_index: int) -> None:
        key = self.held.pop(output_index, None)
        if key is not None:
            self.builder.close(key)

    def _delta(self, key: tuple[object, ...], text: str, event_type: str) -> None:
        if text and not self.builder.is_open(key):
            where = ", ".join(str(k) for k in key[1:])
            raise StreamShapeError(f"{event_type} names {key[0]} {where}, which no earlier event opened")
        self.builder.delta(key, text)

    def _arguments(self, output_index: int, full: str) -> None:
        done = self.arguments.get(output_index, "")
        if full.startswith(done) and full != done:
            self._delta(("item", output_index), full[len(done) :], "response.function_call_arguments")
        self.arguments[output_index] = full

    def _item_done(self, output_index: int, item: Any) -> None:
        b = self.builder
        if item.type == "function_call":
            self._arguments(output_index, item.arguments)
            b.close(("item", output_index))
        elif item.type == "reasoning":
            key = self.held.pop(output_index, None)
            if key is not None:
                if item.encrypted_content:
                    b.sign(key, item.encrypted_content)
                b.close(key)
            elif output_index not in self.streamed:
                self._whole(_reasoning_parts(item))
        elif item.type == "message" and output_index not in self.streamed:
            self._whole([ir.TextPart(text=p.text if p.type == "output_text" else p.refusal) for p in item.content])

    def _whole(self, parts: Sequence[ir.OutputPart]) -> None:
        """An item whose parts never came as events (a server that sends items whole, or only at the end)."""
        for part in parts:
            key = object()
            if isinstance(part, ir.ToolCallPart):
                self.builder.tool_call(key, id=part.id, name=part.name, arguments=part.arguments_raw)
            elif isinstance(part, ir.RedactedThinkingPart):
                self.builder.redacted(part.data)
            elif isinstance(part, ir.TextPart | ir.ThinkingPart):
                self.builder.open(key, part.kind)
                self.builder.delta(key, part.text)
                if isinstance(part, ir.ThinkingPart) and part.signature:
                    self.builder.sign(key, part.signature)
                self.builder.close(key)

    def _fail(self, error: ir.IRError, event: Any) -> None:
        self.error = error
        self.event_class = f"openai.types.responses.{type(event).__name__}"

    def result(self) -> SdkResult:
        """What the stream came to: its events, and the failure it reported as an event, if any."""
        if self.error is not None:
            events = self.builder.fail(self.error)
            return SdkResult(
                events=events, error=self.error, exception=SdkException.STREAM_ERROR, exception_class=self.event_class
            )
        if not self.ended:
            # The SDK stops quietly when the body ends: no terminal event is what a truncated stream looks like.
            error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without response.completed")
            return SdkResult(events=self.builder.fail(error))
        return SdkResult(events=self.builder.done(self.stop))


def _stream_error(message: str, code: str | None, error_type: str | None = None) -> ir.IRError:
    """An error reported inside a 200 stream: by the Responses code first, then by its type, then its words."""
    kind = _CODES.get(code or "")
    return (
        ir.IRError.of(kind, message, code=code) if kind else error_in_stream(message, code=code, error_type=error_type)
    )


def _classify(
    exc: openai.APIError | json.JSONDecodeError | ValidationError | StreamShapeError,
) -> tuple[ir.IRError, SdkException]:
    """The IR error and neutral exception name for what the SDK raised (or the driver found unreadable)."""
    if isinstance(exc, openai.APIError):
        return _error(exc), _neutral(exc)
    if isinstance(exc, StreamShapeError):
        return ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"stream does not add up: {exc}"), SdkException.DECODE_ERROR
    return decode_failure(exc)


def _neutral(exc: openai.APIError) -> SdkException:
    for cls, neutral in _CLASSES:
        if isinstance(exc, cls):
            return neutral
    if isinstance(exc, openai.APIStatusError):
        return neutral_for_status(exc.status_code)
    # A bare APIError is what the SDK raises for an `error` event carrying an error object.
    return SdkException.STREAM_ERROR


def _error(exc: openai.APIError) -> ir.IRError:
    body = exc.body if isinstance(exc.body, dict) else {}
    code = body.get("code") or body.get("type") or exc.code or exc.type
    code = str(code) if code is not None else None
    if isinstance(exc, openai.APIStatusError):
        return error_from_status(exc.status_code, exc.message, code=code, headers=headers_of(exc))
    if isinstance(exc, openai.APITimeoutError):
        return ir.IRError.of(ir.ErrorKind.TIMEOUT, with_cause(exc.message, exc))
    if isinstance(exc, openai.APIConnectionError):
        return ir.IRError.of(ir.ErrorKind.NETWORK, with_cause(exc.message, exc))
    kind_type = body.get("type") or exc.type
    return _stream_error(
        str(body.get("message") or exc.message), code, kind_type if isinstance(kind_type, str) else None
    )


class ResponsesDriver:
    """The `openai` SDK as a Responses API client."""

    name = "responses"
    capabilities: ClassVar[frozenset[Capability]] = registry.sdk("responses").capabilities
    """What the SDK can ask for and surface: its SDK facts (`facts.Sdk.capabilities`)."""
    socket_capabilities: ClassVar[frozenset[Capability]] = registry.sdk("responses").socket_capabilities
    """Over WebSocket mode: its SDK facts (`facts.Sdk.socket_capabilities`)."""

    def run_socket(
        self, request: ir.Request, *, base_url: str, headers: Mapping[str, str], timeout: float, versioned: bool = True
    ) -> SocketRun:
        """One turn of `request` over the SDK's WebSocket mode (`harness.drivers.responses_ws`)."""
        return responses_ws.run_socket(
            params(request),
            base_url=base_url,
            versioned=versioned,
            headers=headers,
            timeout=timeout,
            state=_StreamState(),
            classify=_classify,
            unreadable=(StreamShapeError,),
        )

    def client(self, base_url: str, http_client: httpx2.Client) -> openai.OpenAI:
        """An SDK client pointed at `<base_url>/v1` (it adds `/responses`), without retries."""
        # The client's own timeout, named: an SDK takes httpx's default (5 s) on the client for "none set" and
        # waits its own 600 s instead, so `--timeout 5` would not bound a stalled stream.
        return openai.OpenAI(
            api_key=DUMMY_API_KEY,
            base_url=f"{base_url.rstrip('/')}/v1",
            http_client=http_client,
            max_retries=0,
            timeout=http_client.timeout,
        )

    def run(self, request: ir.Request, *, stream: bool, base_url: str, http_client: Any) -> SdkResult:
        """Call `responses.create`, streamed (raw events) or not, and normalize what came back."""
        client = self.client(base_url, http_client)
        kwargs = params(request)
        state = _StreamState()
        try:
            if not stream:
                return SdkResult(response=response_to_ir(client.responses.create(**kwargs)))
            with client.responses.create(**kwargs, stream=True) as events:
                for event in events:
                    state.add(event)
        except (openai.APIError, StreamShapeError, *DECODE_ERRORS) as exc:
            error, neutral = _classify(exc)
            events = state.builder.fail(error) if stream and state.builder.started else None
            return failed(error, neutral, exc, events=events)
        return state.result()

    def list_models(self, *, base_url: str, http_client: Any) -> SdkResult:
        """Call `models.list` (`GET /v1/models`, the same listing as Chat Completions')."""
        try:
            return SdkResult(models=[m.id for m in self.client(base_url, http_client).models.list()])
        except openai.APIError as exc:
            return failed(_error(exc), _neutral(exc), exc)


DRIVER = ResponsesDriver()
