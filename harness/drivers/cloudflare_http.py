"""Driver for Cloudflare Workers AI's native REST route, a plain `httpx2` client written from Cloudflare's docs.

No official Python SDK speaks `POST /client/v4/accounts/{account_id}/ai/run/{model}` well (the `cloudflare`
SDK's `ai.run` returns untyped dicts and cannot stream), so this driver is the client: it builds the JSON body
by hand from IR, posts it with `Authorization: Bearer`, and reads the envelope, or the SSE stream up to
`data: [DONE]`, the way workers-ai-provider does. Errors become a `WorkersAIError` carrying the status, the
envelope's first `{code, message}` and the headers, mapped to IR like the other drivers' SDK exceptions.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import httpx2

from harness import ir
from harness.drivers.base import (
    DUMMY_API_KEY,
    SdkResult,
    UnsupportedRequest,
    error_from_status,
    error_in_stream,
    failed,
    neutral_for_status,
)
from harness.drivers.event_builder import EventBuilder
from harness.protocols import registry
from harness.scenarios.model import Capability, SdkException

ACCOUNT_ID = "0" * 32
"""Account id the driver puts in the path (the proxy or replay holds any real one)."""
TIMEOUT = 60.0
"""Seconds any single read may take."""

_FINISH: dict[str, ir.StopKind] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "model_length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "content_filter",
    "error": "error",
}


# Workers AI error code -> the HTTP status Cloudflare documents for it (the status an error inside a stream lacks).
_CODE_STATUS = {5007: 400, 5004: 400, 3003: 400, 5016: 403, 5018: 403, 3023: 403, 3041: 403, 3042: 404, 3006: 413,
                3007: 408, 3008: 408, 3036: 429, 3040: 429, 10000: 401, 3043: 500}  # fmt: skip


# Workers AI error code -> the kind it names whatever the status (Cloudflare's error table: 5007 "no such model"
# comes as a 400, 3040 "out of capacity" as a 429); a careful client keys on the code, as the status says less.
_CODE_KINDS = {5007: ir.ErrorKind.NOT_FOUND, 3042: ir.ErrorKind.NOT_FOUND, 3040: ir.ErrorKind.OVERLOADED,
               3036: ir.ErrorKind.THROTTLED, 10000: ir.ErrorKind.AUTH}  # fmt: skip
_KIND_NEUTRAL = {
    ir.ErrorKind.NOT_FOUND: SdkException.NOT_FOUND,
    ir.ErrorKind.OVERLOADED: SdkException.OVERLOADED,
    ir.ErrorKind.THROTTLED: SdkException.RATE_LIMIT,
    ir.ErrorKind.AUTH: SdkException.AUTHENTICATION,
}


def _by_code(error: ir.IRError, code: int | None) -> ir.IRError:
    """The error with the kind its Workers AI code names, where the code names one."""
    kind = _CODE_KINDS.get(code) if code is not None else None
    if kind is None or kind is error.kind:
        return error
    return error.model_copy(update={"kind": kind, "retryable": kind.retryable})


class WorkersAIError(Exception):
    """A failed Workers AI call: HTTP status, the envelope's first error code and message, response headers."""

    def __init__(self, status: int, message: str, code: int | None, headers: dict[str, str]) -> None:
        super().__init__(f"Workers AI error {status}: {message}")
        self.status, self.message, self.code, self.headers = status, message, code, headers


def _content(parts: list[Any]) -> Any:
    if not any(isinstance(p, ir.ImagePart) for p in parts):
        return "".join(p.text for p in parts if isinstance(p, ir.TextPart))
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ir.TextPart):
            out.append({"type": "text", "text": part.text})
        elif isinstance(part, ir.ImagePart):
            src = part.source
            url = f"data:{src.media_type};base64,{src.data}" if isinstance(src, ir.Base64Image) else src.url
            out.append({"type": "image_url", "image_url": {"url": url}})
    return out


def _messages(request: ir.Request) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": request.system}] if request.system is not None else []
    for message in request.messages:
        plain = [p for p in message.content if isinstance(p, ir.TextPart | ir.ImagePart)]
        calls = [p for p in message.content if isinstance(p, ir.ToolCallPart)]
        results = [p for p in message.content if isinstance(p, ir.ToolResultPart)]
        if plain or calls or not results:
            msg: dict[str, Any] = {"role": message.role, "content": _content(plain)}
            if calls:
                msg["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_raw}}
                    for c in calls
                ]
            out.append(msg)
        for result in results:
            tool: dict[str, Any] = {
                "role": "tool",
                "content": _content(result.content),
                "tool_call_id": result.tool_call_id,
            }
            if result.name is not None:
                tool["name"] = result.name
            out.append(tool)
    return out


def body(request: ir.Request, *, stream: bool) -> dict[str, Any]:
    """The JSON body of `ai/run` for an IR request."""
    if request.stop or request.tool_choice not in (None, ir.ToolChoiceAuto()):
        raise UnsupportedRequest("cloudflare: the native schema has no stop sequences or tool_choice")
    if request.thinking is not None and request.thinking.enabled:
        raise UnsupportedRequest("cloudflare: the native schema has no thinking switch")
    out: dict[str, Any] = {"messages": _messages(request), "stream": stream}
    if request.tools:
        out["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description or "", "parameters": t.parameters},
            }
            for t in request.tools
        ]
    optional = {"max_tokens": request.max_tokens, "temperature": request.temperature, "top_p": request.top_p}
    out.update({k: v for k, v in optional.items() if v is not None})
    fmt = request.response_format
    if isinstance(fmt, ir.ResponseFormatJsonSchema):
        out["response_format"] = {"type": "json_schema", "json_schema": fmt.schema_}
    elif isinstance(fmt, ir.ResponseFormatJsonObject):
        out["response_format"] = {"type": "json_object"}
    return out


def _usage(value: Any) -> ir.Usage | None:
    if not isinstance(value, dict):
        return None
    details = value.get("prompt_tokens_details") or {}
    return ir.Usage(
        input_tokens=value.get("prompt_tokens"),
        output_tokens=value.get("completion_tokens"),
        cache_read_tokens=details.get("cached_tokens") if isinstance(details, dict) else None,
    )


def _stop(finish: str | None, called: bool) -> ir.StopReason:
    if finish is None:
        return ir.StopReason(kind="tool_use" if called else "end_turn")
    return ir.StopReason(kind=_FINISH.get(finish, "other"), raw=finish)


def _call(value: dict[str, Any], ordinal: int) -> ir.ToolCallPart:
    function = value.get("function") or value
    arguments = function.get("arguments")
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments if arguments is not None else {})
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        parsed = None
    return ir.ToolCallPart(
        id=value.get("id") or f"call_{ordinal}", name=function.get("name") or "", arguments=parsed, arguments_raw=raw
    )


def response_to_ir(result: dict[str, Any]) -> ir.Response:
    """The envelope's `result` (native `response` form or OpenAI `choices` form) as an IR response."""
    text, reasoning, finish = result.get("response"), "", result.get("finish_reason")
    calls = list(result.get("tool_calls") or [])
    if result.get("choices"):
        choice = result["choices"][0]
        message = choice.get("message") or {}
        text, finish = message.get("content"), choice.get("finish_reason")
        reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
        calls += message.get("tool_calls") or []
    if text is not None and not isinstance(text, str):
        text = json.dumps(text)  # JSON mode answers with the object
    content: list[ir.OutputPart] = [ir.ThinkingPart(text=reasoning)] if reasoning else []
    content += [ir.TextPart(text=text)] if text else []
    content += [_call(c, i) for i, c in enumerate(calls)]
    return ir.Response(
        id=result.get("id"),
        model=result.get("model"),
        content=content,
        stop_reason=_stop(finish, bool(calls)),
        usage=_usage(result.get("usage")) or ir.Usage(),
    )


class _Stream:
    """Folds `data:` payloads into IR events: native `response` text, OpenAI-form deltas, tool-call fragments."""

    def __init__(self) -> None:
        self.builder = EventBuilder()
        self.finish: str | None = None
        self.calls = 0
        self.ended = False  # an error envelope arrived: `events` holds the failed stream
        self.done = False  # `data: [DONE]` arrived
        self.events: list[ir.StreamEvent] = []

    def add(self, data: dict[str, Any]) -> None:
        """Fold one `data:` payload."""
        if data.get("success") is False or "errors" in data:
            first = (data.get("errors") or [{}])[0]
            code = first.get("code")
            self.builder.start()
            message = str(first.get("message", ""))
            status = _CODE_STATUS.get(code) if isinstance(code, int) else None
            wire_code = None if code is None else str(code)
            error = error_in_stream(message, code=wire_code, status=status)
            self.events = self.builder.fail(_by_code(error, code if isinstance(code, int) else None))
            self.ended = True
            return
        self.builder.start(id=data.get("id"), model=data.get("model"))
        usage = _usage(data.get("usage"))
        if usage is not None:
            self.builder.usage = usage  # the last figures are the reply's (the final native event is cumulative)
        delta: dict[str, Any] = {}
        if data.get("choices"):
            choice = data["choices"][0]
            delta = choice.get("delta") or {}
            self.finish = choice.get("finish_reason") or self.finish
        self.finish = data.get("finish_reason") or self.finish
        self.builder.flow_thinking(delta.get("reasoning_content") or delta.get("reasoning") or "")
        text = data.get("response")
        self.builder.flow_text((text if isinstance(text, str) else "") + (delta.get("content") or ""))
        for position, call in enumerate([*(data.get("tool_calls") or []), *(delta.get("tool_calls") or [])]):
            self._call(call, position)

    def _call(self, call: dict[str, Any], position: int) -> None:
        function = call.get("function") or {}
        if not call.get("id") and not function.get("name") and not function.get("arguments"):
            return  # the null finalization fragment: the call closes with the stream
        key = ("tool", call.get("index", position))
        if not self.builder.is_open(key):
            self.builder.end_flow()
            self.builder.open(
                key, "tool_call", id=call.get("id") or f"call_{self.calls}", name=function.get("name") or ""
            )
            self.calls += 1
        arguments = function.get("arguments")
        if arguments:
            self.builder.delta(key, arguments if isinstance(arguments, str) else json.dumps(arguments))

    def end(self) -> list[ir.StreamEvent]:
        """The finished event list: done after `[DONE]`, the error of an envelope, or a malformed stream."""
        if self.ended:
            return self.events
        if not self.done:
            self.builder.start()
            return self.builder.fail(ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without data: [DONE]"))
        return self.builder.done(_stop(self.finish, self.calls > 0))


def _error(response: httpx2.Response) -> WorkersAIError:
    response.read()
    message, code = response.text, None
    try:
        envelope = response.json()
    except json.JSONDecodeError:
        envelope = None
    if isinstance(envelope, dict) and envelope.get("errors"):
        first = envelope["errors"][0]
        message, code = str(first.get("message", message)), first.get("code")
    return WorkersAIError(
        response.status_code, message, code if isinstance(code, int) else None, dict(response.headers)
    )


def _failure(exc: WorkersAIError) -> tuple[ir.IRError, SdkException]:
    code = None if exc.code is None else str(exc.code)
    error = _by_code(error_from_status(exc.status, exc.message, code=code, headers=exc.headers), exc.code)
    known = _KIND_NEUTRAL.get(error.kind) if exc.code in _CODE_KINDS else None
    return error, known or neutral_for_status(exc.status)


class CloudflareHTTPDriver:
    """A hand-written REST client of Workers AI's native route."""

    name = "cloudflare"
    capabilities: ClassVar[frozenset[Capability]] = registry.sdk("cloudflare").capabilities
    """What the SDK can ask for and surface: its SDK facts (`facts.Sdk.capabilities`)."""

    def url(self, base_url: str, model: str) -> str:
        """The run URL of `model` under the server root `base_url`."""
        return f"{base_url.rstrip('/')}/client/v4/accounts/{ACCOUNT_ID}/ai/run/{model}"

    def run(self, request: ir.Request, *, stream: bool, base_url: str, http_client: Any) -> SdkResult:
        """POST `ai/run`, streamed or not, and normalize what came back."""
        payload = body(request, stream=stream)
        headers = {"authorization": f"Bearer {DUMMY_API_KEY}", "content-type": "application/json"}
        state = _Stream()
        try:
            with http_client.stream(
                "POST", self.url(base_url, request.model), json=payload, headers=headers, timeout=TIMEOUT
            ) as response:
                if response.status_code >= 400:
                    raise _error(response)
                if not stream:
                    response.read()
                    return SdkResult(response=response_to_ir(response.json()["result"]))
                for line in response.iter_lines():
                    if state.ended or not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        state.done = True
                        break
                    state.add(json.loads(data))
        except WorkersAIError as exc:
            error, neutral = _failure(exc)
            return failed(error, neutral, exc)
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"response is not the Workers AI shape: {exc}")
            events = state.builder.fail(error) if stream and state.builder.started else None
            return failed(error, SdkException.DECODE_ERROR, exc, events=events)
        except httpx2.TimeoutException as exc:
            return failed(ir.IRError.of(ir.ErrorKind.TIMEOUT, str(exc)), SdkException.TIMEOUT, exc)
        except httpx2.TransportError as exc:
            return failed(ir.IRError.of(ir.ErrorKind.NETWORK, str(exc)), SdkException.CONNECTION, exc)
        events = state.end()
        if state.ended:
            error = next(e.error for e in events if isinstance(e, ir.ErrorEvent))
            return SdkResult(events=events, error=error, exception=SdkException.STREAM_ERROR)
        return SdkResult(events=events)

    def list_models(self, *, base_url: str, http_client: Any) -> SdkResult:
        """`GET .../ai/models/search?task=Text Generation`: the text models' names."""
        url = f"{base_url.rstrip('/')}/client/v4/accounts/{ACCOUNT_ID}/ai/models/search"
        headers = {"authorization": f"Bearer {DUMMY_API_KEY}"}
        try:
            response = http_client.get(url, params={"task": "Text Generation"}, headers=headers, timeout=TIMEOUT)
            if response.status_code >= 400:
                raise _error(response)
            return SdkResult(models=[str(m["name"]) for m in response.json()["result"]])
        except WorkersAIError as exc:
            error, neutral = _failure(exc)
            return failed(error, neutral, exc)


DRIVER = CloudflareHTTPDriver()
