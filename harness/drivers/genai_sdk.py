"""Driver for the official `google-genai` SDK (Gemini API, v1beta), mapped by hand from IR to the SDK's types."""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Iterable
from typing import Any, ClassVar

import httpx2
from google import genai
from google.genai import errors, types
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
    shared_tls_context,
)
from harness.drivers.event_builder import EventBuilder
from harness.protocols import registry
from harness.scenarios.model import Capability, SdkException

API_VERSION = "v1beta"
"""The API version real Gemini clients and proxies use (this SDK release defaults to v1)."""

_CONTENT_FILTER = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _call_names(request: ir.Request) -> dict[str, str]:
    """Tool-call id -> tool name, from the assistant turns (a functionResponse must name its function)."""
    return {p.id: p.name for m in request.messages for p in m.content if isinstance(p, ir.ToolCallPart)}


def _part(part: ir.ContentPart, names: dict[str, str]) -> types.Part:
    if isinstance(part, ir.TextPart):
        return types.Part(text=part.text)
    if isinstance(part, ir.ImagePart):
        src = part.source
        if isinstance(src, ir.Base64Image):
            return types.Part(inline_data=types.Blob(mime_type=src.media_type, data=base64.b64decode(src.data)))
        return types.Part(file_data=types.FileData(file_uri=src.url))
    if isinstance(part, ir.FilePart):  # a document is inline data of its own MIME type, or file data by URL
        if part.url is not None:
            return types.Part(file_data=types.FileData(file_uri=part.url, mime_type=part.media_type))
        if part.data is None:
            raise UnsupportedRequest("gemini: a file by another provider's file_id cannot be sent")
        return types.Part(inline_data=types.Blob(mime_type=part.media_type, data=base64.b64decode(part.data)))
    if isinstance(part, ir.ToolCallPart):
        args = part.arguments if isinstance(part.arguments, dict) else {}
        return types.Part(function_call=types.FunctionCall(name=part.name, args=args))
    if isinstance(part, ir.ToolResultPart):
        name = part.name or names.get(part.tool_call_id)
        if name is None:
            raise UnsupportedRequest(f"gemini: no function name for tool result {part.tool_call_id!r}")
        if any(isinstance(p, ir.ImagePart) for p in part.content):
            raise UnsupportedRequest("gemini: images in tool results cannot be sent")
        text = "".join(p.text for p in part.content if isinstance(p, ir.TextPart))
        key = "error" if part.is_error else "result"
        return types.Part(function_response=types.FunctionResponse(name=name, response={key: text}))
    if isinstance(part, ir.ThinkingPart):
        sig = signature_bytes(part.signature) if part.signature else None
        return types.Part(text=part.text, thought=True, thought_signature=sig)
    raise UnsupportedRequest("gemini: redacted thinking cannot be sent")


def signature_bytes(signature: str) -> bytes:
    """A thought signature's bytes from either base64 alphabet: the API answers in the standard one, and this SDK
    sends signatures back in the URL-safe one, so a recorded follow-up request carries that form."""
    standard = signature.replace("-", "+").replace("_", "/")
    return base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)


def contents(request: ir.Request) -> list[types.Content]:
    """The `contents` list: user/tool turns as `user`, assistant turns as `model`."""
    names = _call_names(request)
    out: list[types.Content] = []
    for message in request.messages:
        if message.role == "system":
            raise UnsupportedRequest("gemini: no system message after the first turn")
        role = "model" if message.role == "assistant" else "user"
        out.append(types.Content(role=role, parts=[_part(p, names) for p in message.content]))
    return out


def _tool_config(choice: ir.ToolChoice) -> types.ToolConfig:
    modes = {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}
    allowed = [choice.name] if isinstance(choice, ir.ToolChoiceTool) else None
    return types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode=modes[choice.kind],
            allowed_function_names=allowed,
        )
    )


def config(request: ir.Request) -> types.GenerateContentConfig:
    """The `GenerateContentConfig`: system prompt, sampling, tools, output format, thinking."""
    cfg: dict[str, Any] = {
        "system_instruction": request.system,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "max_output_tokens": request.max_tokens,
        "stop_sequences": list(request.stop) or None,
    }
    if request.tools:
        declarations = [
            types.FunctionDeclaration(name=t.name, description=t.description, parameters_json_schema=t.parameters)
            for t in request.tools
        ]
        cfg["tools"] = [types.Tool(function_declarations=declarations)]
    if request.tool_choice is not None:
        cfg["tool_config"] = _tool_config(request.tool_choice)
    fmt = request.response_format
    if isinstance(fmt, ir.ResponseFormatJsonObject | ir.ResponseFormatJsonSchema):
        cfg["response_mime_type"] = "application/json"
    if isinstance(fmt, ir.ResponseFormatJsonSchema):
        cfg["response_json_schema"] = fmt.schema_
    if request.thinking is not None:
        budget = request.thinking.budget_tokens if request.thinking.enabled else 0
        cfg["thinking_config"] = types.ThinkingConfig(include_thoughts=request.thinking.enabled, thinking_budget=budget)
    return types.GenerateContentConfig(**{k: v for k, v in cfg.items() if v is not None})


def _usage(meta: types.GenerateContentResponseUsageMetadata | None) -> ir.Usage | None:
    if meta is None:
        return None
    thoughts = meta.thoughts_token_count
    candidates = meta.candidates_token_count
    output = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    return ir.Usage(
        input_tokens=meta.prompt_token_count,
        output_tokens=output,
        cache_read_tokens=meta.cached_content_token_count,
        reasoning_tokens=thoughts,
    )


def _stop(finish: Any, has_calls: bool) -> ir.StopReason | None:
    if finish is None:
        return None
    raw = str(getattr(finish, "value", finish))
    kind: ir.StopKind
    if raw == "STOP":
        kind = "tool_use" if has_calls else "end_turn"
    elif raw == "MAX_TOKENS":
        kind = "max_tokens"
    elif raw in _CONTENT_FILTER:
        kind = "content_filter"
    elif raw == "MALFORMED_FUNCTION_CALL":
        kind = "error"
    else:
        kind = "other"
    return ir.StopReason(kind=kind, raw=raw)


def _signature(part: types.Part) -> str | None:
    return base64.b64encode(part.thought_signature).decode("ascii") if part.thought_signature else None


def _call_id(call: types.FunctionCall, number: int) -> str:
    # Gemini usually sends no id; the call's number in the response makes one that is stable across runs and
    # the same streamed or not (however the text around it was chunked).
    return call.id or f"call_{number}_{call.name}"


def _parts(response: types.GenerateContentResponse) -> Iterable[types.Part]:
    candidates = response.candidates or []
    if candidates and candidates[0].content is not None:
        yield from candidates[0].content.parts or []


def _place_signature(builder: EventBuilder, signature: str, position: int) -> None:
    """Sign the open thinking block; with none open, the signature becomes an empty signed thinking block
    (Gemini signs the part after hidden reasoning: a call or text, with no thought text to hang it on)."""
    if builder.sign_flow(signature):
        return
    builder.end_flow()
    key = ("signature", position)
    builder.open(key, "thinking")
    builder.sign(key, signature)
    builder.close(key)


def _add_part(builder: EventBuilder, part: types.Part, position: int, calls: int) -> bool:
    """Feed one part (`position` in the response, `calls` function calls before it); True for a call."""
    signature = _signature(part)
    if part.thought:
        builder.flow_thinking(part.text or "")
        if signature:
            _place_signature(builder, signature, position)
        return False
    if signature:
        _place_signature(builder, signature, position)
    if part.function_call is not None:
        call = part.function_call
        arguments = _compact(call.args or {})
        builder.tool_call(("call", position), id=_call_id(call, calls), name=call.name or "", arguments=arguments)
        return True
    builder.flow_text(part.text or "")
    return False


class _StreamState:
    """Chunks -> IR events; parts flow into blocks, function calls arrive whole."""

    def __init__(self) -> None:
        self.builder = EventBuilder()
        self.finish: Any = None
        self.calls = 0
        self.position = 0

    def add(self, chunk: types.GenerateContentResponse) -> None:
        self.builder.start(id=chunk.response_id, model=chunk.model_version)
        self.builder.add_usage(_usage(chunk.usage_metadata))
        for part in _parts(chunk):
            self.calls += _add_part(self.builder, part, self.position, self.calls)
            self.position += 1
        if chunk.candidates and chunk.candidates[0].finish_reason is not None:
            self.finish = chunk.candidates[0].finish_reason

    def end(self) -> list[ir.StreamEvent]:
        if self.finish is None:
            error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without a finishReason")
            return self.builder.fail(error)
        return self.builder.done(_stop(self.finish, self.calls > 0))


def response_to_ir(response: types.GenerateContentResponse) -> ir.Response:
    """The SDK's response as IR, built through the same part handling as the stream so both agree."""
    state = _StreamState()
    state.add(response)
    events = state.builder.done(_stop(state.finish, state.calls > 0))
    content: list[ir.OutputPart] = []
    pending: dict[int, Any] = {}
    for event in events:
        if isinstance(event, ir.TextStart | ir.ThinkingStart | ir.ToolCallStart):
            pending[event.index] = [event, ""]
        elif isinstance(event, ir.TextDelta | ir.ThinkingDelta):
            pending[event.index][1] += event.text
        elif isinstance(event, ir.ToolCallDelta):
            pending[event.index][1] += event.arguments
        elif isinstance(event, ir.TextEnd):
            content.append(ir.TextPart(text=pending.pop(event.index)[1]))
        elif isinstance(event, ir.ThinkingEnd):
            content.append(ir.ThinkingPart(text=pending.pop(event.index)[1], signature=event.signature))
        elif isinstance(event, ir.ToolCallEnd):
            start, raw = pending.pop(event.index)
            content.append(ir.ToolCallPart(id=start.id, name=start.name, arguments=json.loads(raw), arguments_raw=raw))
    return ir.Response(
        id=response.response_id,
        model=response.model_version,
        content=content,
        stop_reason=_stop(state.finish, state.calls > 0),
        usage=state.builder.usage or ir.Usage(),
    )


def _neutral(exc: errors.APIError) -> SdkException:
    # The SDK has only ClientError (4xx) and ServerError (5xx): the code says which one it is. An error chunk
    # inside a stream is raised with the stream's own 200 response attached.
    if getattr(exc.response, "status_code", None) == 200:
        return SdkException.STREAM_ERROR
    return neutral_for_status(exc.code) if isinstance(exc.code, int) else SdkException.OTHER


def _error(exc: errors.APIError) -> ir.IRError:
    message = exc.message or str(exc)
    if getattr(exc.response, "status_code", None) == 200:
        return error_in_stream(message, code=exc.status, status=exc.code)
    status = exc.code if isinstance(exc.code, int) else 500
    return error_from_status(status, message, code=exc.status, headers=headers_of(exc))


def _classify(
    exc: errors.APIError
    | errors.UnknownApiResponseError
    | httpx2.TransportError
    | json.JSONDecodeError
    | ValidationError,
) -> tuple[ir.IRError, SdkException]:
    """The IR error and neutral exception name for what the SDK raised."""
    if isinstance(exc, errors.APIError):
        return _error(exc), _neutral(exc)
    if isinstance(exc, json.JSONDecodeError | ValidationError):
        return decode_failure(exc)
    if isinstance(exc, errors.UnknownApiResponseError):
        # The SDK's own wrapper for a body or stream line that is not JSON.
        return ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"response is not JSON: {exc}"), SdkException.DECODE_ERROR
    if isinstance(exc, httpx2.TimeoutException):
        return ir.IRError.of(ir.ErrorKind.TIMEOUT, str(exc)), SdkException.TIMEOUT
    return ir.IRError.of(ir.ErrorKind.NETWORK, str(exc)), SdkException.CONNECTION


@functools.cache
def idle_async_client() -> httpx2.AsyncClient:
    """The async client every SDK client of the process is given, as the one it would build (shared TLS context,
    no timeout, redirects followed); the driver calls the sync API only, so it never sends. Building one a client
    cost more than the rest of the client."""
    return httpx2.AsyncClient(verify=shared_tls_context(), timeout=None, follow_redirects=True)


class GenaiDriver:
    """The `google-genai` SDK as a Gemini API client."""

    name = "gemini"
    capabilities: ClassVar[frozenset[Capability]] = registry.sdk("gemini").capabilities
    """What the SDK can ask for and surface: its SDK facts (`facts.Sdk.capabilities`)."""

    def client(self, base_url: str, http_client: httpx2.Client) -> genai.Client:
        """An SDK client pointed at `base_url` (it adds `/v1beta/models/...`), without retries."""
        # The SDK builds an async client and a websocket context too, each with a TLS context of its own unless
        # given them: hand it the process's idle async client and shared TLS context (the ones it would build).
        options = types.HttpOptions(
            base_url=base_url.rstrip("/") + "/",
            api_version=API_VERSION,
            httpx_client=http_client,
            httpx_async_client=idle_async_client(),
            async_client_args={"ssl": shared_tls_context()},
        )
        return genai.Client(api_key=DUMMY_API_KEY, http_options=options)

    def run(self, request: ir.Request, *, stream: bool, base_url: str, http_client: Any) -> SdkResult:
        """Call `generate_content` or `generate_content_stream` and normalize what came back."""
        models = self.client(base_url, http_client).models
        kwargs: dict[str, Any] = {"model": request.model, "contents": contents(request), "config": config(request)}
        state = _StreamState()
        try:
            if not stream:
                return SdkResult(response=response_to_ir(models.generate_content(**kwargs)))
            for chunk in models.generate_content_stream(**kwargs):
                state.add(chunk)
        except (errors.APIError, errors.UnknownApiResponseError, httpx2.TransportError, *DECODE_ERRORS) as exc:
            error, neutral = _classify(exc)
            events = state.builder.fail(error) if stream and state.builder.started else None
            return failed(error, neutral, exc, events=events)
        return SdkResult(events=state.end())

    def list_models(self, *, base_url: str, http_client: Any) -> SdkResult:
        """Call `models.list`; ids lose their `models/` prefix."""
        try:
            names = [m.name or "" for m in self.client(base_url, http_client).models.list()]
        except errors.APIError as exc:
            return failed(_error(exc), _neutral(exc), exc)
        return SdkResult(models=[n.removeprefix("models/") for n in names])


DRIVER = GenaiDriver()
