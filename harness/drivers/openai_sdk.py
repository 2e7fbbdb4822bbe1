"""Driver for the official `openai` SDK (Chat Completions), mapped by hand from IR to the SDK's call."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import httpx2
import openai
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionContentPartParam,
    ChatCompletionMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.chat_completion_content_part_param import FileFile
from pydantic import ValidationError

from harness import ir
from harness.drivers.base import (
    DECODE_ERRORS,
    DUMMY_API_KEY,
    SdkResult,
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

_FINISH: dict[str, ir.StopKind] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
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


def _image_url(source: ir.ImageSource) -> str:
    if isinstance(source, ir.Base64Image):
        return f"data:{source.media_type};base64,{source.data}"
    return source.url


def _file(part: ir.FilePart) -> FileFile:
    """The SDK's `file` of a file content part: the bytes as a data URL or a stored file's id, the name when there
    is one. The part has no URL form."""
    if part.url is not None:
        raise UnsupportedRequest("openai: a file part has no URL form")
    spec: FileFile = (
        {"file_data": f"data:{part.media_type};base64,{part.data}"}
        if part.data is not None
        else {"file_id": str(part.file_id)}
    )
    if part.filename is not None:
        spec["filename"] = part.filename
    return spec


def _text_of(parts: list[ir.TextPart | ir.ImagePart], what: str) -> str:
    if any(isinstance(p, ir.ImagePart) for p in parts):
        raise UnsupportedRequest(f"openai: images in {what} cannot be sent")
    return "".join(p.text for p in parts if isinstance(p, ir.TextPart))


def _user_message(message: ir.Message) -> list[ChatCompletionMessageParam]:
    out: list[ChatCompletionMessageParam] = []
    content: list[ChatCompletionContentPartParam] = []
    texts: list[str] = []
    for part in message.content:
        if isinstance(part, ir.TextPart):
            content.append({"type": "text", "text": part.text})
            texts.append(part.text)
        elif isinstance(part, ir.ImagePart):
            content.append({"type": "image_url", "image_url": {"url": _image_url(part.source)}})
        elif isinstance(part, ir.FilePart):
            content.append({"type": "file", "file": _file(part)})
        elif isinstance(part, ir.ToolResultPart):
            out.append(_tool_message(part))
        else:
            raise UnsupportedRequest(f"openai: a user message cannot carry {part.kind}")
    if content:
        # A lone text part goes as a plain string, as most callers write it.
        user: ChatCompletionUserMessageParam = {
            "role": "user",
            "content": texts[0] if len(content) == 1 and texts else content,
        }
        out.append(user)
    return out


def _tool_message(part: ir.ToolResultPart) -> ChatCompletionMessageParam:
    return {"role": "tool", "tool_call_id": part.tool_call_id, "content": _text_of(part.content, "tool results")}


def _assistant_message(message: ir.Message) -> ChatCompletionMessageParam:
    text = "".join(p.text for p in message.content if isinstance(p, ir.TextPart))
    calls = [
        {
            "id": p.id,
            "type": "function",
            "function": {"name": p.name, "arguments": p.arguments_raw or json.dumps(p.arguments or {})},
        }
        for p in message.content
        if isinstance(p, ir.ToolCallPart)
    ]
    # Thinking parts are dropped: Chat Completions has no request field for earlier reasoning.
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        out["tool_calls"] = calls
    return out  # type: ignore[return-value]


def messages(request: ir.Request) -> list[ChatCompletionMessageParam]:
    """The `messages` array: the system prompt first, then each IR message in the SDK's shape."""
    out: list[ChatCompletionMessageParam] = []
    if request.system is not None:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        if message.role == "system":
            out.append({"role": "system", "content": _text_of(_plain(message), "system messages")})
        elif message.role == "assistant":
            out.append(_assistant_message(message))
        elif message.role == "tool":
            out += [_tool_message(p) for p in message.content if isinstance(p, ir.ToolResultPart)]
        else:
            out += _user_message(message)
    return out


def _plain(message: ir.Message) -> list[ir.TextPart | ir.ImagePart]:
    return [p for p in message.content if isinstance(p, ir.TextPart | ir.ImagePart)]


def _tool_choice(choice: ir.ToolChoice) -> Any:
    if isinstance(choice, ir.ToolChoiceTool):
        return {"type": "function", "function": {"name": choice.name}}
    return choice.kind


def _response_format(fmt: ir.ResponseFormat) -> Any:
    if isinstance(fmt, ir.ResponseFormatJsonSchema):
        schema: dict[str, Any] = {"name": fmt.name, "schema": fmt.schema_}
        if fmt.strict is not None:
            schema["strict"] = fmt.strict
        return {"type": "json_schema", "json_schema": schema}
    return {"type": fmt.kind}


def _effort(thinking: ir.ThinkingConfig) -> str:
    # Chat Completions asks for reasoning by effort, not by budget; the thresholds are ours.
    budget = thinking.budget_tokens or 0
    return "low" if budget <= 2048 else "medium" if budget <= 8192 else "high"


def params(request: ir.Request) -> dict[str, Any]:
    """The keyword arguments of `chat.completions.create` (without `stream`)."""
    out: dict[str, Any] = {"model": request.model, "messages": messages(request)}
    if request.tools:
        out["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    **({"description": t.description} if t.description is not None else {}),
                    "parameters": t.parameters,
                },
            }
            for t in request.tools
        ]
    if request.tool_choice is not None:
        out["tool_choice"] = _tool_choice(request.tool_choice)
    if request.parallel_tool_calls is not None:
        out["parallel_tool_calls"] = request.parallel_tool_calls
    optional = {"temperature": request.temperature, "top_p": request.top_p, "max_completion_tokens": request.max_tokens}
    out.update({k: v for k, v in optional.items() if v is not None})
    if request.stop:
        out["stop"] = list(request.stop)
    if request.response_format is not None:
        out["response_format"] = _response_format(request.response_format)
    if request.thinking is not None and request.thinking.enabled:
        out["reasoning_effort"] = _effort(request.thinking)
    return out


def _usage(usage: CompletionUsage | None) -> ir.Usage | None:
    if usage is None:
        return None
    cached = usage.prompt_tokens_details.cached_tokens if usage.prompt_tokens_details else None
    reasoning = usage.completion_tokens_details.reasoning_tokens if usage.completion_tokens_details else None
    return ir.Usage(
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )


def _stop(finish: str | None) -> ir.StopReason | None:
    if finish is None:
        return None
    return ir.StopReason(kind=_FINISH.get(finish, "other"), raw=finish)


def _reasoning(obj: Any) -> str:
    # Not in the SDK's types: OpenAI-compatible servers (DeepSeek, vLLM, Groq) add it; the SDK keeps extras.
    for name in ("reasoning_content", "reasoning"):
        value = getattr(obj, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


def response_to_ir(completion: ChatCompletion) -> ir.Response:
    """The SDK's `ChatCompletion` as an IR response (first choice)."""
    if not completion.choices:
        return ir.Response(id=completion.id, model=completion.model, usage=_usage(completion.usage) or ir.Usage())
    choice = completion.choices[0]
    content: list[ir.OutputPart] = []
    if thinking := _reasoning(choice.message):
        content.append(ir.ThinkingPart(text=thinking))
    if choice.message.content:
        content.append(ir.TextPart(text=choice.message.content))
    for call in choice.message.tool_calls or []:
        function = getattr(call, "function", None)
        if function is None:
            raise UnsupportedRequest(f"openai: tool call of type {call.type!r} is not a function call")
        raw = function.arguments
        content.append(ir.ToolCallPart(id=call.id, name=function.name, arguments=_parse(raw), arguments_raw=raw))
    return ir.Response(
        id=completion.id,
        model=completion.model,
        content=content,
        stop_reason=_stop(choice.finish_reason),
        usage=_usage(completion.usage) or ir.Usage(),
    )


def _parse(raw: str) -> Any:
    if raw.strip() == "":
        return {}
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return None


class _StreamState:
    """Turns chunks into IR events; tool calls are keyed by their wire `index`."""

    def __init__(self) -> None:
        self.builder = EventBuilder()
        self.finish: str | None = None

    def add(self, chunk: ChatCompletionChunk) -> None:
        self.builder.start(id=chunk.id, model=chunk.model)
        self.builder.add_usage(_usage(chunk.usage))
        for choice in chunk.choices[:1]:
            delta = choice.delta
            self.builder.flow_thinking(_reasoning(delta))
            self.builder.flow_text(delta.content or "")
            for call in delta.tool_calls or []:
                key = ("tool", call.index)
                if not self.builder.is_open(key):
                    self.builder.end_flow()
                    name = call.function.name if call.function and call.function.name else ""
                    self.builder.open(key, "tool_call", id=call.id or "", name=name)
                if call.function and call.function.arguments:
                    self.builder.delta(key, call.function.arguments)
            if choice.finish_reason is not None:
                self.finish = choice.finish_reason

    def end(self) -> list[ir.StreamEvent]:
        if self.finish is None:
            # The SDK hides `[DONE]`; a stream with no finish_reason at all is what a truncated body looks like.
            error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without a finish_reason")
            return self.builder.fail(error)
        return self.builder.done(_stop(self.finish))


def _classify(exc: openai.APIError | json.JSONDecodeError | ValidationError) -> tuple[ir.IRError, SdkException]:
    """The IR error and neutral exception name for what the SDK raised."""
    if isinstance(exc, openai.APIError):
        return _error(exc), _neutral(exc)
    return decode_failure(exc)


def _neutral(exc: openai.APIError) -> SdkException:
    for cls, neutral in _CLASSES:
        if isinstance(exc, cls):
            return neutral
    if isinstance(exc, openai.APIStatusError):
        return neutral_for_status(exc.status_code)
    # A bare APIError is what the SDK raises for an `error` object inside the stream.
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
    # OpenRouter writes the HTTP status as a number in `code` (`{"code": 429, "message": ...}`): it says the kind.
    raw = body.get("code")
    status = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
    kind_type = body.get("type") or exc.type
    error_type = kind_type if isinstance(kind_type, str) else None
    return error_in_stream(str(body.get("message") or exc.message), code=code, status=status, error_type=error_type)


class OpenAIDriver:
    """The `openai` SDK as a Chat Completions client."""

    name = "openai"
    capabilities: ClassVar[frozenset[Capability]] = registry.sdk("openai").capabilities
    """What the SDK can ask for and surface: its SDK facts (`facts.Sdk.capabilities`)."""

    def client(self, base_url: str, http_client: httpx2.Client) -> openai.OpenAI:
        """An SDK client pointed at `<base_url>/v1`, without retries."""
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
        """Call `chat.completions.create`, streamed or not, and normalize what came back."""
        client = self.client(base_url, http_client)
        kwargs = params(request)
        state = _StreamState()
        try:
            if not stream:
                return SdkResult(response=response_to_ir(client.chat.completions.create(**kwargs)))
            chunks = client.chat.completions.create(**kwargs, stream=True, stream_options={"include_usage": True})
            with chunks:  # closed also when a chunk it cannot read ends the loop early
                for chunk in chunks:
                    state.add(chunk)
        except (openai.APIError, *DECODE_ERRORS) as exc:
            error, neutral = _classify(exc)
            events = state.builder.fail(error) if stream and state.builder.started else None
            return failed(error, neutral, exc, events=events)
        return SdkResult(events=state.end())

    def list_models(self, *, base_url: str, http_client: Any) -> SdkResult:
        """Call `models.list`."""
        try:
            return SdkResult(models=[m.id for m in self.client(base_url, http_client).models.list()])
        except openai.APIError as exc:
            return failed(_error(exc), _neutral(exc), exc)


DRIVER = OpenAIDriver()
