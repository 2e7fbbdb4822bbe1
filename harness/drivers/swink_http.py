"""Driver for swink-agent's proxy protocol (`POST {base_url}/v1/stream`), a plain `httpx2` client written from
`ProxyStreamFn` (SuperSwinkAI/Swink-Agent, `adapters/src/proxy.rs`).

It sends what `ProxyStreamFn` sends (`model`, `system`, `messages` in swink's `LlmMessage` shape, `options` with
temperature / max_tokens / session_id, `Authorization: Bearer`) and reads the SSE stream the way it does: one
typed event per `data:`, `done` or `error` ends it, a stream without either (or with a bare `data: [DONE]`)
is an error. swink has no non-streamed call: the agent folds the stream into a message, and so does this driver
for a non-streamed run. A failed status is classified like swink's `error_event_from_status`.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import httpx2

from harness import ir
from harness.drivers.base import DUMMY_API_KEY, SdkResult, UnsupportedRequest, error_from_status, failed
from harness.drivers.event_builder import EventBuilder
from harness.protocols import registry
from harness.scenarios.model import Capability, SdkException

TIMEOUT = 60.0
"""Seconds any single read may take."""

_STOPS: dict[str, ir.StopKind] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_use": "tool_use",
    "aborted": "error",
    "error": "error",
    "transfer": "other",
}
_KINDS: dict[str, ir.ErrorKind] = {
    "throttled": ir.ErrorKind.THROTTLED,
    "context_window_exceeded": ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED,
    "auth": ir.ErrorKind.AUTH,
    "network": ir.ErrorKind.NETWORK,
    "content_filtered": ir.ErrorKind.INVALID_REQUEST,
    "model_retired": ir.ErrorKind.NOT_FOUND,
}


class ProxyHTTPError(Exception):
    """A failed `/v1/stream` call: the status (all swink reads), the body and the headers."""

    def __init__(self, status: int, text: str, headers: dict[str, str]) -> None:
        super().__init__(f"proxy HTTP error: {status}")
        self.status, self.text, self.headers = status, text, headers


def _neutral(status: int) -> SdkException:
    """swink's `classify_http_status`: 401/403 auth, 429 throttled, 408 and 5xx network, else a client error."""
    if status in (401, 403):
        return SdkException.AUTHENTICATION
    if status == 429:
        return SdkException.RATE_LIMIT
    if status == 408 or status >= 500:
        return SdkException.SERVER_ERROR
    return SdkException.BAD_REQUEST


def _block(part: ir.ContentPart) -> dict[str, Any]:
    if isinstance(part, ir.TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ir.ThinkingPart):
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    if isinstance(part, ir.ToolCallPart):
        return {
            "type": "tool_call",
            "id": part.id,
            "name": part.name,
            "arguments": part.arguments,
            "partial_json": None,
        }
    if isinstance(part, ir.ImagePart):
        src = part.source
        if isinstance(src, ir.Base64Image):
            return {"type": "image", "source": {"type": "base64", "media_type": src.media_type, "data": src.data}}
        return {"type": "image", "source": {"type": "url", "url": src.url, "media_type": "image/png"}}
    raise UnsupportedRequest(f"swink: no content block for {part.kind}")


def _messages(request: ir.Request) -> list[dict[str, Any]]:
    zero = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "total": 0}
    out: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "system":
            raise UnsupportedRequest("swink: messages have no system role")
        results = [p for p in message.content if isinstance(p, ir.ToolResultPart)]
        blocks = [_block(p) for p in message.content if not isinstance(p, ir.ToolResultPart | ir.RedactedThinkingPart)]
        if message.role == "assistant":
            calls = any(b["type"] == "tool_call" for b in blocks)
            out.append(
                {
                    "role": "assistant", "content": blocks, "provider": "", "model_id": request.model,
                    "usage": zero, "cost": {k: 0.0 for k in zero}, "stop_reason": "tool_use" if calls else "stop",
                    "error_message": None, "timestamp": 0,
                }
            )  # fmt: skip
        elif blocks or not results:
            out.append({"role": "user", "content": blocks, "timestamp": 0})
        for result in results:
            out.append(
                {
                    "role": "tool_result", "tool_call_id": result.tool_call_id,
                    "content": [_block(p) for p in result.content], "is_error": result.is_error,
                    "timestamp": 0, "details": None,
                }
            )  # fmt: skip
    return out


def body(request: ir.Request) -> dict[str, Any]:
    """The `ProxyRequest` JSON for an IR request; what it cannot say is refused, not dropped."""
    if request.tools or request.response_format is not None or request.stop or request.top_p is not None:
        raise UnsupportedRequest("swink: the proxy request has no tools, response format, stop sequences or top_p")
    options = {"temperature": request.temperature, "max_tokens": request.max_tokens}
    return {
        "model": request.model,
        "system": request.system or "",
        "messages": _messages(request),
        "options": {k: v for k, v in options.items() if v is not None},
    }


class MalformedMessage(ValueError):
    """An event sequence swink's `accumulate_message` refuses (src/stream.rs): a block start whose content_index is
    not the next place in the message, or a delta or end for a block of another type."""


class _Stream:
    """Folds swink's typed events into IR events, keyed by `content_index`, with `accumulate_message`'s rules."""

    def __init__(self) -> None:
        self.builder = EventBuilder()
        self.events: list[ir.StreamEvent] | None = None
        self.error: ir.IRError | None = None
        self.blocks: list[str] = []  # block type by content_index, as accumulate_message builds the content

    def _check(self, block: str, step: str, index: Any) -> None:
        if step == "start" and index != len(self.blocks):
            raise MalformedMessage(f"{block}_start content_index {index} != content length {len(self.blocks)}")
        if step == "start":
            self.blocks.append(block)
        elif not isinstance(index, int) or not 0 <= index < len(self.blocks):
            raise MalformedMessage(f"{block}_{step}: invalid content_index {index}")
        elif self.blocks[index] != block:
            raise MalformedMessage(f"{block}_{step}: block at index {index} is not {block}")

    def add(self, data: dict[str, Any]) -> None:
        """Fold one event."""
        kind, index = data["type"], data.get("content_index")
        self.builder.start()
        block, _, step = kind.rpartition("_")
        if kind == "done":
            usage = data["usage"]
            self.builder.usage = ir.Usage(
                input_tokens=usage["input"], output_tokens=usage["output"],
                cache_read_tokens=usage["cache_read"], cache_write_tokens=usage["cache_write"],
            )  # fmt: skip
            raw = data["stop_reason"]
            self.events = self.builder.done(ir.StopReason(kind=_STOPS.get(raw, "other"), raw=raw))
        elif kind == "error":
            wire_kind = data.get("error_kind")
            self.error = ir.IRError.of(
                _KINDS.get(wire_kind or "", ir.ErrorKind.SERVER), data["error_message"], code=wire_kind
            )
            self.events = self.builder.fail(self.error)
        elif step == "start" and block in ("text", "thinking", "tool_call"):
            self._check(block, step, index)
            self.builder.open(index, block, id=data.get("id", ""), name=data.get("name", ""))
        elif step == "delta":
            self._check(block, step, index)
            self.builder.delta(index, data["delta"])
        elif step == "end":
            self._check(block, step, index)
            if block == "thinking" and data.get("signature"):
                self.builder.sign(index, data["signature"])
            self.builder.close(index)
        elif kind != "start":
            raise ValueError(f"unknown swink event type {kind!r}")

    def cut(self, message: str) -> None:
        """The stream ended without its terminal event."""
        self.builder.start()
        self.error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, message)
        self.events = self.builder.fail(self.error)


def _fold(events: list[ir.StreamEvent]) -> ir.Response:
    """The message swink's `accumulate_message` builds from a finished stream."""
    parts: dict[int, list[str]] = {}
    heads: dict[int, ir.StreamEvent] = {}
    signatures: dict[int, str | None] = {}
    done: ir.Done | None = None
    for event in events:
        if isinstance(event, ir.TextStart | ir.ThinkingStart | ir.ToolCallStart):
            heads[event.index], parts[event.index] = event, []
        elif isinstance(event, ir.TextDelta | ir.ThinkingDelta):
            parts[event.index].append(event.text)
        elif isinstance(event, ir.ToolCallDelta):
            parts[event.index].append(event.arguments)
        elif isinstance(event, ir.ThinkingEnd):
            signatures[event.index] = event.signature
        elif isinstance(event, ir.Done):
            done = event
    content: list[ir.OutputPart] = []
    for index, head in heads.items():
        text = "".join(parts[index])
        if isinstance(head, ir.TextStart):
            content.append(ir.TextPart(text=text))
        elif isinstance(head, ir.ThinkingStart):
            content.append(ir.ThinkingPart(text=text, signature=signatures.get(index)))
        elif isinstance(head, ir.ToolCallStart):
            try:
                arguments = json.loads(text) if text.strip() else {}
            except json.JSONDecodeError:
                arguments = None
            content.append(ir.ToolCallPart(id=head.id, name=head.name, arguments=arguments, arguments_raw=text))
    return ir.Response(
        content=content,
        stop_reason=done.stop_reason if done else None,
        usage=(done.usage if done and done.usage else ir.Usage()),
    )


class SwinkHTTPDriver:
    """A hand-written client of swink's proxy protocol, as `ProxyStreamFn` speaks it."""

    name = "swink"
    capabilities: ClassVar[frozenset[Capability]] = registry.sdk("swink").capabilities
    """What the SDK can ask for and surface: its SDK facts (`facts.Sdk.capabilities`)."""

    def run(self, request: ir.Request, *, stream: bool, base_url: str, http_client: Any) -> SdkResult:
        """POST `/v1/stream`; a non-streamed run folds the stream into a response, as swink's agent does."""
        state = _Stream()
        headers = {"authorization": f"Bearer {DUMMY_API_KEY}", "content-type": "application/json"}
        url = f"{base_url.rstrip('/')}/v1/stream"
        payload = body(request)  # before the try: its UnsupportedRequest is a ValueError, not a malformed answer
        try:
            with http_client.stream("POST", url, json=payload, headers=headers, timeout=TIMEOUT) as response:
                if not 200 <= response.status_code < 300:
                    response.read()
                    raise ProxyHTTPError(response.status_code, response.text, dict(response.headers))
                self._read(state, response)
        except ProxyHTTPError as exc:
            error = error_from_status(exc.status, exc.text, headers=exc.headers)
            return failed(error, _neutral(exc.status), exc)
        except MalformedMessage as exc:
            error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"malformed message: {exc}")
            return failed(error, SdkException.DECODE_ERROR, exc, events=state.builder.fail(error) if stream else None)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            error = ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"malformed SSE event JSON: {exc}")
            return failed(error, SdkException.DECODE_ERROR, exc, events=state.builder.fail(error) if stream else None)
        except httpx2.TimeoutException as exc:
            return failed(ir.IRError.of(ir.ErrorKind.TIMEOUT, str(exc)), SdkException.TIMEOUT, exc)
        except httpx2.TransportError as exc:
            return failed(ir.IRError.of(ir.ErrorKind.NETWORK, f"network error: {exc}"), SdkException.CONNECTION, exc)
        return self._result(state, stream)

    @staticmethod
    def _read(state: _Stream, response: httpx2.Response) -> None:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                state.cut("proxy SSE transport ended before protocol terminal event")
                return
            state.add(json.loads(data))
            if state.events is not None:
                return
        state.cut("network error: SSE stream ended unexpectedly")

    @staticmethod
    def _result(state: _Stream, stream: bool) -> SdkResult:
        events = state.events or []
        neutral = SdkException.STREAM_ERROR if state.error is not None else None
        if stream:
            return SdkResult(events=events, error=state.error, exception=neutral)
        if state.error is not None:
            return SdkResult(error=state.error, exception=neutral)
        return SdkResult(response=_fold(events))

    def list_models(self, *, base_url: str, http_client: Any) -> SdkResult:
        """swink's proxy protocol has no model listing."""
        raise UnsupportedRequest("swink: the proxy protocol has no model list")


DRIVER = SwinkHTTPDriver()
