"""Driver for `boto3`'s `bedrock-runtime` client (`converse`, `converse_stream`), mapped by hand from IR.

The client points at the proxy with `endpoint_url`, signs with dummy credentials (SigV4, as against AWS) and never
retries. boto3 does not use httpx: given an `httpx2.Client` (the harness's in-process proxy, or any socket URL),
botocore's `before-send` event hands each prepared request to it and returns an `AWSResponse` whose raw body
streams the httpx2 response chunk by chunk, so chunk boundaries and streaming survive into botocore's own event
stream parser. Without one, botocore sends the request itself. A process makes one client per endpoint and
reuses it: the run's httpx2 client reaches the handler through a context variable, never through the client.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import json
import re
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import boto3
import httpx2
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.config import Config
from botocore.eventstream import ParserError
from botocore.exceptions import BotoCoreError, ClientError, EventStreamError

from harness import ir
from harness.drivers.base import (
    DUMMY_API_KEY,
    SdkResult,
    UnsupportedRequest,
    error_from_status,
    failed,
    neutral_for_status,
)
from harness.drivers.event_builder import EventBuilder
from harness.protocols import registry
from harness.protocols.common import is_context_message
from harness.scenarios.model import Capability, SdkException

REGION = "us-east-1"
"""Region the client signs for (the proxy checks the signature's shape, not its value)."""
DUMMY_ACCESS_KEY = "CONFORMANCEDUMMYKEY"
"""Access key id the client signs with; the secret is `DUMMY_API_KEY`."""
TIMEOUT = 60
"""Connect and read timeout (seconds) when botocore sends by itself."""
DEFAULT_BUDGET = 1024
"""Thinking budget sent when the IR enables thinking without one."""

_STOP: dict[str, ir.StopKind] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "malformed_model_output": "error",
    "malformed_tool_use": "error",
    "model_context_window_exceeded": "max_tokens",
}

# Exception type (either spelling: HTTP errors are PascalCase, stream exceptions camelCase) -> kind, neutral name.
_CODES: dict[str, tuple[ir.ErrorKind, SdkException]] = {
    "validationexception": (ir.ErrorKind.INVALID_REQUEST, SdkException.BAD_REQUEST),
    "servicequotaexceededexception": (ir.ErrorKind.THROTTLED, SdkException.RATE_LIMIT),
    "accessdeniedexception": (ir.ErrorKind.PERMISSION, SdkException.PERMISSION_DENIED),
    "unrecognizedclientexception": (ir.ErrorKind.AUTH, SdkException.AUTHENTICATION),
    "invalidsignatureexception": (ir.ErrorKind.AUTH, SdkException.AUTHENTICATION),
    "incompletesignatureexception": (ir.ErrorKind.AUTH, SdkException.AUTHENTICATION),
    "missingauthenticationtokenexception": (ir.ErrorKind.AUTH, SdkException.AUTHENTICATION),
    "expiredtokenexception": (ir.ErrorKind.AUTH, SdkException.AUTHENTICATION),
    "resourcenotfoundexception": (ir.ErrorKind.NOT_FOUND, SdkException.NOT_FOUND),
    "modeltimeoutexception": (ir.ErrorKind.TIMEOUT, SdkException.TIMEOUT),
    "modelerrorexception": (ir.ErrorKind.SERVER, SdkException.SERVER_ERROR),
    "modelstreamerrorexception": (ir.ErrorKind.SERVER, SdkException.SERVER_ERROR),
    "throttlingexception": (ir.ErrorKind.THROTTLED, SdkException.RATE_LIMIT),
    "modelnotreadyexception": (ir.ErrorKind.OVERLOADED, SdkException.OVERLOADED),
    "internalserverexception": (ir.ErrorKind.SERVER, SdkException.SERVER_ERROR),
    "serviceunavailableexception": (ir.ErrorKind.OVERLOADED, SdkException.OVERLOADED),
}


# --- IR -> converse(**kwargs) -----------------------------------------------------------------------------


def _image(source: ir.ImageSource) -> dict[str, Any]:
    if not isinstance(source, ir.Base64Image):
        raise UnsupportedRequest("bedrock: Converse takes image bytes or an S3 location, not an image URL")
    fmt = source.media_type.removeprefix("image/")
    return {"image": {"format": "jpeg" if fmt == "jpg" else fmt, "source": {"bytes": base64.b64decode(source.data)}}}


_DOCUMENT_FORMATS = {
    "application/pdf": "pdf",
    "text/plain": "txt",
    "text/csv": "csv",
    "text/html": "html",
    "text/markdown": "md",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
}
"""The MIME type of each of Converse's document formats."""


def _document(part: ir.FilePart) -> dict[str, Any]:
    """A `document` block as an SDK user writes one: `name` is required and takes only alphanumerics, single
    spaces, hyphens, parentheses and brackets, so a file name goes without its extension, other characters as
    hyphens (`document` when there is none)."""
    if part.data is None or part.media_type is None:
        raise UnsupportedRequest(f"bedrock: Converse has no document source for a file by {part.form}")
    fmt = _DOCUMENT_FORMATS.get(part.media_type)
    if fmt is None:
        raise UnsupportedRequest(f"bedrock: Converse has no document format for {part.media_type!r}")
    stem = (part.filename or "").rsplit(".", 1)[0]
    name = " ".join(re.sub(r"[^A-Za-z0-9\s\-()\[\]]+", "-", stem).split()) or "document"
    return {"document": {"format": fmt, "name": name, "source": {"bytes": base64.b64decode(part.data)}}}


def _block(part: ir.ContentPart) -> dict[str, Any]:
    if isinstance(part, ir.TextPart):
        return {"text": part.text}
    if isinstance(part, ir.ImagePart):
        return _image(part.source)
    if isinstance(part, ir.FilePart):
        return _document(part)
    if isinstance(part, ir.ToolCallPart):
        arguments = part.arguments if part.arguments is not None else {}
        return {"toolUse": {"toolUseId": part.id, "name": part.name, "input": arguments}}
    if isinstance(part, ir.ToolResultPart):
        result: dict[str, Any] = {"toolUseId": part.tool_call_id, "content": [_block(p) for p in part.content]}
        if part.is_error:
            result["status"] = "error"
        return {"toolResult": result}
    if isinstance(part, ir.ThinkingPart):
        text: dict[str, Any] = {"text": part.text}
        if part.signature is not None:
            text["signature"] = part.signature
        return {"reasoningContent": {"reasoningText": text}}
    return {"reasoningContent": {"redactedContent": part.data.encode("utf-8")}}


def messages(request: ir.Request) -> list[dict[str, Any]]:
    """The `messages` list; tool results travel in user turns, and consecutive user turns are merged, as Bedrock
    wants alternating roles."""
    out: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "system":
            raise UnsupportedRequest("bedrock: Converse has no system message after the first turn")
        role = "assistant" if message.role == "assistant" else "user"
        blocks = [_block(p) for p in message.content]
        if out and out[-1]["role"] == role == "user":
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _tool_config(request: ir.Request) -> dict[str, Any] | None:
    if isinstance(request.tool_choice, ir.ToolChoiceNone):
        raise UnsupportedRequest("bedrock: Converse toolChoice has no 'none'")
    if request.parallel_tool_calls is False:
        raise UnsupportedRequest("bedrock: Converse cannot forbid parallel tool calls")
    if not request.tools:
        return None
    tools = []
    for tool in request.tools:
        spec: dict[str, Any] = {"name": tool.name, "inputSchema": {"json": tool.parameters}}
        # Converse's description takes at least one character (boto3 refuses an empty one before sending): an
        # empty description says nothing, and is sent as none.
        if tool.description:
            spec["description"] = tool.description
        tools.append({"toolSpec": spec})
    config: dict[str, Any] = {"tools": tools}
    choice = request.tool_choice
    if isinstance(choice, ir.ToolChoiceAuto):
        config["toolChoice"] = {"auto": {}}
    elif isinstance(choice, ir.ToolChoiceRequired):
        config["toolChoice"] = {"any": {}}
    elif isinstance(choice, ir.ToolChoiceTool):
        config["toolChoice"] = {"tool": {"name": choice.name}}
    return config


def params(request: ir.Request) -> dict[str, Any]:
    """The keyword arguments of `converse` / `converse_stream`."""
    out: dict[str, Any] = {"modelId": request.model, "messages": messages(request)}
    if request.system:  # boto3 refuses an empty system block (its text has a minimum length of 1)
        out["system"] = [{"text": request.system}]
    inference: dict[str, Any] = {
        k: v
        for k, v in (("maxTokens", request.max_tokens), ("temperature", request.temperature), ("topP", request.top_p))
        if v is not None
    }
    if request.stop:
        inference["stopSequences"] = list(request.stop)
    if inference:
        out["inferenceConfig"] = inference
    if (config := _tool_config(request)) is not None:
        out["toolConfig"] = config
    if request.thinking is not None:
        budget = request.thinking.budget_tokens or DEFAULT_BUDGET
        thinking = {"type": "enabled", "budget_tokens": budget} if request.thinking.enabled else {"type": "disabled"}
        out["additionalModelRequestFields"] = {"thinking": thinking}
    fmt = request.response_format
    if isinstance(fmt, ir.ResponseFormatJsonSchema):
        schema = {"name": fmt.name, "schema": json.dumps(fmt.schema_)}
        out["outputConfig"] = {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": schema}}}
    elif isinstance(fmt, ir.ResponseFormatJsonObject):
        raise UnsupportedRequest("bedrock: Converse structured output needs a JSON schema")
    return out


# --- what boto3 returned -> IR ----------------------------------------------------------------------------


def _usage(usage: dict[str, Any]) -> ir.Usage:
    """IR usage: input counts the cache reads and writes too (Converse counts them apart)."""
    read, write = usage.get("cacheReadInputTokens"), usage.get("cacheWriteInputTokens")
    fresh = usage.get("inputTokens")
    total = None if fresh is None else fresh + (read or 0) + (write or 0)
    return ir.Usage(
        input_tokens=total, output_tokens=usage.get("outputTokens"), cache_read_tokens=read, cache_write_tokens=write
    )


def _stop(reason: str | None) -> ir.StopReason | None:
    return None if reason is None else ir.StopReason(kind=_STOP.get(reason, "other"), raw=reason)


def _part(block: dict[str, Any]) -> ir.OutputPart | None:
    if "text" in block:
        return ir.TextPart(text=block["text"])
    if "toolUse" in block:
        use = block["toolUse"]
        if use.get("type") == "server_tool_use":
            return None
        raw = json.dumps(use["input"], ensure_ascii=False, separators=(",", ":"))
        return ir.ToolCallPart(id=use["toolUseId"], name=use["name"], arguments=use["input"], arguments_raw=raw)
    reasoning = block.get("reasoningContent")
    if isinstance(reasoning, dict) and "redactedContent" in reasoning:
        return ir.RedactedThinkingPart(data=reasoning["redactedContent"].decode("utf-8"))
    if isinstance(reasoning, dict) and "reasoningText" in reasoning:
        text = reasoning["reasoningText"]
        return ir.ThinkingPart(text=text["text"], signature=text.get("signature") or None)
    return None  # server tool results, citations, images: no IR part


def response_to_ir(response: dict[str, Any]) -> ir.Response:
    """boto3's `converse` result as an IR response (Converse has no response id or model)."""
    content = [p for b in response["output"]["message"]["content"] if (p := _part(b)) is not None]
    return ir.Response(content=content, stop_reason=_stop(response.get("stopReason")), usage=_usage(response["usage"]))


class _StreamState:
    """ConverseStream events (dicts keyed by event type) -> IR events; blocks are keyed by contentBlockIndex."""

    def __init__(self) -> None:
        self.builder = EventBuilder()
        self.stop: ir.StopReason | None = None
        self.stopped = False
        self.skipped: set[int] = set()

    def add(self, event: dict[str, Any]) -> None:
        """One parsed event (`{"contentBlockDelta": {...}}`) into the IR stream."""
        b = self.builder
        if "messageStart" in event:
            b.start()
        elif "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = start["start"].get("toolUse")
            if use is None or use.get("type") == "server_tool_use":
                self.skipped.add(start["contentBlockIndex"])
            else:
                b.open(start["contentBlockIndex"], "tool_call", id=use["toolUseId"], name=use["name"])
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            if delta["contentBlockIndex"] not in self.skipped:
                self._delta(delta["contentBlockIndex"], delta["delta"])
        elif "contentBlockStop" in event:
            b.close(event["contentBlockStop"]["contentBlockIndex"])
        elif "messageStop" in event:
            self.stop = _stop(event["messageStop"]["stopReason"])
            self.stopped = True
        elif "metadata" in event:
            b.add_usage(_usage(event["metadata"]["usage"]))

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        b = self.builder
        if "text" in delta:
            if not b.is_open(index):
                b.open(index, "text")
            b.delta(index, delta["text"])
        elif "toolUse" in delta:
            b.delta(index, delta["toolUse"]["input"])
        elif "reasoningContent" in delta:
            reasoning = delta["reasoningContent"]
            if "redactedContent" in reasoning:
                b.redacted(reasoning["redactedContent"].decode("utf-8"))
                self.skipped.add(index)  # its contentBlockStop closes nothing in the IR
                return
            if not b.is_open(index):
                b.open(index, "thinking")
            b.delta(index, reasoning.get("text", ""))
            if reasoning.get("signature"):
                b.sign(index, reasoning["signature"])

    def end(self) -> list[ir.StreamEvent]:
        """The finished IR stream: `done`, or `malformed_stream` when messageStop never came."""
        if not self.stopped:
            return self.builder.fail(ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without messageStop"))
        return self.builder.done(self.stop)


# --- errors -----------------------------------------------------------------------------------------------

# How Bedrock words a context-window overflow in a ValidationException ("Input is too long for requested model.").
_CONTEXT_MARKERS = ("input is too long", "too many input tokens")


def _kind(code: str, message: str) -> ir.ErrorKind | None:
    known = _CODES.get(code.lower())
    if known is None:
        return None
    if known[0] is ir.ErrorKind.INVALID_REQUEST and (
        is_context_message(message) or any(m in message.lower() for m in _CONTEXT_MARKERS)
    ):
        return ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    return known[0]


def _classify(exc: Exception) -> tuple[ir.IRError, SdkException]:
    """The IR error and neutral exception name of what boto3 (or the httpx2 transport under it) raised."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code, message = str(error.get("Code", "")), str(error.get("Message", ""))
        known, kind = _CODES.get(code.lower()), _kind(code, message)
        if isinstance(exc, EventStreamError):  # an exception frame inside a 200 stream: no HTTP status
            return ir.IRError.of(kind or ir.ErrorKind.SERVER, message, code=code or None), SdkException.STREAM_ERROR
        meta = exc.response.get("ResponseMetadata", {})
        status = int(meta.get("HTTPStatusCode", 500))
        result = error_from_status(status, message, code=code or None, headers=meta.get("HTTPHeaders") or {})
        if kind is not None:
            result = result.model_copy(update={"kind": kind, "retryable": kind.retryable})
        return result, known[1] if known else neutral_for_status(status)
    if isinstance(exc, httpx2.TimeoutException):
        return ir.IRError.of(ir.ErrorKind.TIMEOUT, str(exc) or type(exc).__name__), SdkException.TIMEOUT
    if isinstance(exc, ParserError):
        return ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"event stream: {exc}"), SdkException.DECODE_ERROR
    if isinstance(exc, BotoCoreError) and "parse" in type(exc).__name__.lower():
        return ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, str(exc)), SdkException.DECODE_ERROR
    if isinstance(exc, BotoCoreError) and "timeout" in type(exc).__name__.lower():
        return ir.IRError.of(ir.ErrorKind.TIMEOUT, str(exc)), SdkException.TIMEOUT
    return ir.IRError.of(ir.ErrorKind.NETWORK, str(exc) or type(exc).__name__), SdkException.CONNECTION


SDK_ERRORS = (ClientError, BotoCoreError, ParserError, httpx2.HTTPError)
"""What a call may raise that the driver reports as the SDK's failure."""


# --- routing botocore's requests through an httpx2 client ---------------------------------------------------


class _Raw:
    """An httpx2 streaming response as the `raw` botocore reads (`stream()` yields chunks as they arrive)."""

    def __init__(self, response: httpx2.Response) -> None:
        self._response = response

    def stream(self, **_: Any) -> Iterator[bytes]:
        """The body chunk by chunk; the response is closed when it ends."""
        try:
            yield from self._response.iter_bytes()
        finally:
            self._response.close()

    def close(self) -> None:
        """Release the connection (botocore calls this when it stops reading a stream early)."""
        self._response.close()


class HttpxSender:
    """A `before-send` handler: sends botocore's prepared request with the httpx2 client of the run under way in
    this thread (`sending_through`), streaming the answer; with none, botocore sends the request itself."""

    def __call__(self, request: AWSPreparedRequest, **_: Any) -> AWSResponse | None:
        client = _RUN_HTTP.get()
        if client is None:
            return None
        body = request.body
        if body is not None and not isinstance(body, bytes | bytearray):
            body = body.read()
        headers = {k: v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()}
        outgoing = client.build_request(request.method, request.url, headers=headers, content=body)
        response = client.send(outgoing, stream=True)
        return AWSResponse(request.url, response.status_code, dict(response.headers), _Raw(response))


_RUN_HTTP: contextvars.ContextVar[httpx2.Client | None] = contextvars.ContextVar("bedrock_run_http", default=None)
"""The httpx2 client the run under way sends through (None: botocore sends by itself)."""


@contextlib.contextmanager
def sending_through(http_client: httpx2.Client | None) -> Iterator[None]:
    """Route the calls made inside through `http_client` (the run's), whichever cached client makes them."""
    token = _RUN_HTTP.set(http_client)
    try:
        yield
    finally:
        _RUN_HTTP.reset(token)


_SESSION_LOCK = threading.Lock()
_SESSIONS: list[boto3.session.Session] = []
CLIENTS_KEPT = 16
"""Most bedrock-runtime clients kept at once (one per endpoint URL); the cache is cleared when full."""
_CLIENTS: dict[str, Any] = {}


def _session() -> boto3.session.Session:
    """One boto3 session for every client: it loads the service model once (a fresh session costs ~250 ms a
    client, a shared one a few ms). Sessions are not thread-safe, so clients are made under a lock."""
    if not _SESSIONS:
        _SESSIONS.append(
            boto3.session.Session(
                aws_access_key_id=DUMMY_ACCESS_KEY, aws_secret_access_key=DUMMY_API_KEY, region_name=REGION
            )
        )
    return _SESSIONS[0]


def _client(endpoint: str) -> Any:
    """The bedrock-runtime client of `endpoint`, made once a process: a client costs ~2 ms to make (event hooks,
    loaders, endpoint rules) and holds nothing of a run (static credentials, no retries, and the run's HTTP client
    comes from `sending_through`, not from the client). botocore clients are thread-safe."""
    with _SESSION_LOCK:
        client = _CLIENTS.get(endpoint)
        if client is None:
            config = Config(
                retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=TIMEOUT, read_timeout=TIMEOUT
            )
            client = _session().client("bedrock-runtime", endpoint_url=endpoint, config=config)
            client.meta.events.register("before-send.bedrock-runtime", HttpxSender())
            if len(_CLIENTS) >= CLIENTS_KEPT:
                _CLIENTS.clear()
            _CLIENTS[endpoint] = client
    return client


class BedrockDriver:
    """The `boto3` bedrock-runtime client as a Converse client."""

    name = "bedrock"
    capabilities: ClassVar[frozenset[Capability]] = registry.sdk("bedrock").capabilities
    """What the SDK can ask for and surface: its SDK facts (`facts.Sdk.capabilities`)."""

    def client(self, base_url: str) -> Any:
        """The bedrock-runtime client pointed at `base_url`, signing with dummy credentials, without retries; its
        calls go through the HTTP client given to `sending_through` around them."""
        return _client(base_url.rstrip("/"))

    def run(self, request: ir.Request, *, stream: bool, base_url: str, http_client: Any) -> SdkResult:
        """Call `converse` or `converse_stream` through `http_client` and normalize what came back."""
        client = self.client(base_url)
        kwargs = params(request)
        state = _StreamState()
        try:
            with sending_through(http_client):
                if not stream:
                    return SdkResult(response=response_to_ir(client.converse(**kwargs)))
                events = client.converse_stream(**kwargs)["stream"]
            try:
                for event in events:
                    state.add(event)
            finally:
                events.close()
        except SDK_ERRORS as exc:
            error, neutral = _classify(exc)
            partial = state.builder.fail(error) if stream and state.builder.started else None
            return failed(error, neutral, exc, events=partial)
        return SdkResult(events=state.end())

    def list_models(self, *, base_url: str, http_client: Any) -> SdkResult:
        """bedrock-runtime has no model listing (ListFoundationModels belongs to the `bedrock` control plane)."""
        raise UnsupportedRequest("bedrock: bedrock-runtime has no model listing")


DRIVER = BedrockDriver()
