"""What every SDK driver shares: the result it reports, the driver contract, and error normalization.

A driver maps an IR request onto its SDK's own call by hand (never through our codecs: the point is an
independent client), runs it, and writes down what the SDK returned as IR.
"""

from __future__ import annotations

import functools
import json
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import httpx2
from pydantic import BaseModel, ConfigDict, Field, ModelWrapValidatorHandler, ValidationError, model_validator

from harness import ir
from harness.protocols.common import is_context_message, kind_for_status, retry_after
from harness.scenarios.model import Capability, SdkException

DUMMY_API_KEY = "conformance-test-key"
"""Key the SDK clients send to the proxy; the proxy (or replay) holds any real upstream credentials."""


@functools.cache
def shared_tls_context() -> ssl.SSLContext:
    """The one TLS context of this process, for every SDK client that would otherwise build its own per client:
    loading the trust store costs ~20 ms a time (google-genai builds two per client), more than a whole replayed
    call. It is the context the SDKs build by default (`httpx2.create_ssl_context()`), built once."""
    return httpx2.create_ssl_context()


class ChainCall(BaseModel):
    """One call of a stored-response chain before its last: which stored response it continued, what came back."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    previous_response_id: str | None = None
    """The id of the stored response it continued (None: it continued none)."""
    unknown: bool = False
    """Whether that id is one no server issued: the call must be refused, not answered."""
    compact: bool = False
    """Whether the call compacted the conversation (`POST /v1/responses/compact`) rather than answered it."""
    response_id: str | None = None
    """The id of the response it got (None: it got none)."""
    text: str = ""
    """The text of the answer it got."""
    error: ir.IRError | None = None
    """The error it got instead."""


class SdkResult(BaseModel):
    """What an SDK client saw, normalized to IR; the scenario's checks run on this."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    response: ir.Response | None = None
    """The SDK's response object as IR (non-streamed runs)."""
    events: list[ir.StreamEvent] | None = None
    """The SDK's stream as IR events (streamed runs); ends with `done` or `error` like any IR stream."""
    error: ir.IRError | None = None
    """The error the SDK reported (an exception, or an error inside the stream)."""
    exception_class: str | None = None
    """Public name of the SDK exception class raised, e.g. `openai.RateLimitError`."""
    exception: SdkException | None = None
    """Neutral name of that exception, per the driver's table."""
    retry_after: float | None = None
    """Retry-After seconds the SDK exposed with the error (None when absent or not surfaced)."""
    models: list[str] | None = None
    """Model ids from a listing call (bare ids, without any `models/` prefix)."""
    chain: list[ChainCall] = Field(default_factory=list)
    """The calls a stored-response chain made before this, its last one (`harness.drivers.chain`), in order."""

    @model_validator(mode="wrap")
    @classmethod
    def _events_kept(cls, data: Any, handler: ModelWrapValidatorHandler[SdkResult]) -> SdkResult:
        # The events an `EventBuilder` made are kept, not revalidated one by one (`ir.events_kept`).
        return ir.events_kept(data, handler)


class UnsupportedRequest(ValueError):
    """The IR request asks for something this SDK cannot express (a scenario that should not run here)."""


class UnexpressibleAnswer(UnsupportedRequest):
    """The answer the SDK returned holds something the IR has no form for (an Anthropic `server_tool_use` block):
    a scenario that cannot run here when a backend sent it, a fault of the proxy when only its answer has it."""


@runtime_checkable
class Driver(Protocol):
    """One SDK client speaking one frontend protocol."""

    name: str
    """Frontend protocol the SDK speaks: `openai`, `anthropic`, `gemini`, `ollama`."""
    capabilities: ClassVar[frozenset[Capability]]
    """What this SDK can ask for and surface; scenarios requiring more are reported unsupported."""

    def run(self, request: ir.Request, *, stream: bool, base_url: str, http_client: Any) -> SdkResult:
        """Send `request` through the SDK to `base_url` (server root) over `http_client`; report what came back."""
        ...

    def list_models(self, *, base_url: str, http_client: Any) -> SdkResult:
        """List models through the SDK."""
        ...


@dataclass(frozen=True)
class SocketRun:
    """What one turn over a frontend's WebSocket mode came to: the SDK's view, and the frames as they arrived."""

    result: SdkResult
    """What the SDK saw, as the HTTP run's (`events` ending in `done` or `error`)."""
    sent: bytes = b""
    """The client's one message (the `response.create` event), as sent."""
    frames: tuple[bytes, ...] = ()
    """Every message the server sent, in order, one frame each (its boundaries are the wire's)."""
    sent_at: float = 0.0
    """When the message was sent (monotonic clock)."""
    times: tuple[float, ...] = ()
    """When each frame arrived (monotonic clock)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """The handshake answer's headers."""
    error_headers: Mapping[str, str] = field(default_factory=dict)
    """The headers a turn refused with an HTTP status carried in its error message (the Responses API's
    `error.headers`, e.g. `retry-after`): what an HTTP answer carries as its own headers."""


class SocketRefused(Exception):
    """The server answered the WebSocket upgrade with a plain HTTP status: it does not serve WebSocket mode there."""

    def __init__(self, status: int, body: bytes) -> None:
        text = " ".join(body[:200].decode("utf-8", "replace").split())
        super().__init__(f"the WebSocket upgrade was answered HTTP {status}" + (f" ({text})" if text else ""))
        self.status = status


@runtime_checkable
class SocketDriver(Protocol):
    """A driver whose SDK also speaks its frontend's WebSocket mode (facts: `Frontend.websocket`)."""

    socket_capabilities: ClassVar[frozenset[Capability]]
    """What the SDK can ask for and surface over WebSocket (a stream of events; no HTTP status, no headers)."""

    def run_socket(
        self, request: ir.Request, *, base_url: str, headers: Mapping[str, str], timeout: float, versioned: bool = True
    ) -> SocketRun:
        """Send `request` as one WebSocket-mode turn to `base_url` (server root), the upgrade carrying `headers`;
        every wait bounded by `timeout` seconds. `versioned=False` leaves out the `/v1` the SDK puts before the
        path, as `--sut-unversioned` does over HTTP. Raises SocketRefused when the upgrade gets an HTTP answer."""
        ...


def public_name(exc: BaseException) -> str:
    """The class name as users import it: private modules dropped (`openai._exceptions.X` -> `openai.X`)."""
    parts: list[str] = []
    for part in type(exc).__module__.split("."):
        if part.startswith("_"):
            break
        parts.append(part)
    return ".".join([*parts, type(exc).__qualname__])


# Provider error `type` / `code` strings that say what kind of error arrived inside a 200 stream, where
# there is no status to go by. Matched case-insensitively as substrings, first match wins.
_CODE_KINDS: tuple[tuple[str, ir.ErrorKind], ...] = (
    ("context_length", ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED),
    ("rate_limit", ir.ErrorKind.THROTTLED),
    ("resource_exhausted", ir.ErrorKind.THROTTLED),
    ("overloaded", ir.ErrorKind.OVERLOADED),
    ("unavailable", ir.ErrorKind.OVERLOADED),
    ("authentication", ir.ErrorKind.AUTH),
    ("unauthenticated", ir.ErrorKind.AUTH),
    ("permission", ir.ErrorKind.PERMISSION),
    ("not_found", ir.ErrorKind.NOT_FOUND),
    ("invalid", ir.ErrorKind.INVALID_REQUEST),
    ("timeout", ir.ErrorKind.TIMEOUT),
    ("deadline", ir.ErrorKind.TIMEOUT),
    ("server", ir.ErrorKind.SERVER),
    ("internal", ir.ErrorKind.SERVER),
    ("api_error", ir.ErrorKind.SERVER),
)


def kind_for_code(code: str | None) -> ir.ErrorKind | None:
    """The error kind a provider's error type/code string names, if it names one."""
    if not code:
        return None
    lower = code.lower()
    for marker, kind in _CODE_KINDS:
        if marker in lower:
            return kind
    return None


def error_from_status(
    status: int, message: str, *, code: str | None = None, headers: Mapping[str, str] | None = None
) -> ir.IRError:
    """The IR error for an HTTP error the SDK raised: kind from the status, refined for context overflow."""
    kind = kind_for_status(status, message)
    if kind is ir.ErrorKind.INVALID_REQUEST and code and is_context_message(code):
        kind = ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    return ir.IRError.of(kind, message, status=status, retry_after=retry_after(headers or {}), code=code)


def error_in_stream(
    message: str, *, code: str | None = None, status: int | None = None, error_type: str | None = None
) -> ir.IRError:
    """The IR error for an error that arrived inside a 200 stream: kind from the code, else from the error's type
    (OpenAI's `invalid_request_error` beside a code such as "400" that names none), or a status in it."""
    # Without either (Ollama sends only a message) the message itself may name the kind.
    kind = kind_for_code(code) or kind_for_code(error_type) or kind_for_code(message)
    if kind is None and status is not None and status >= 400:
        kind = kind_for_status(status, message)
    if kind is None:
        kind = ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED if is_context_message(message) else ir.ErrorKind.SERVER
    return ir.IRError.of(kind, message, code=code)


def neutral_for_status(status: int) -> SdkException:
    """The neutral exception name an HTTP status means, for SDKs whose classes do not say more."""
    if status == 200:
        return SdkException.STREAM_ERROR
    table = {
        400: SdkException.BAD_REQUEST,
        401: SdkException.AUTHENTICATION,
        403: SdkException.PERMISSION_DENIED,
        404: SdkException.NOT_FOUND,
        408: SdkException.TIMEOUT,
        413: SdkException.BAD_REQUEST,
        422: SdkException.BAD_REQUEST,
        429: SdkException.RATE_LIMIT,
        503: SdkException.OVERLOADED,
        504: SdkException.TIMEOUT,
        529: SdkException.OVERLOADED,
    }
    if status in table:
        return table[status]
    if status >= 500:
        return SdkException.SERVER_ERROR
    return SdkException.BAD_REQUEST if status >= 400 else SdkException.OTHER


def failed(
    error: ir.IRError,
    neutral: SdkException,
    exc: BaseException,
    *,
    events: list[ir.StreamEvent] | None = None,
) -> SdkResult:
    """The result of a call that raised: the error, the class names, Retry-After, and any events so far."""
    return SdkResult(
        events=events,
        error=error,
        exception_class=public_name(exc),
        exception=neutral,
        retry_after=error.retry_after,
    )


DECODE_ERRORS = (json.JSONDecodeError, ValidationError)
"""What SDKs raise when a body or stream line is not JSON, or not the shape their types expect."""


def decode_failure(exc: json.JSONDecodeError | ValidationError) -> tuple[ir.IRError, SdkException]:
    """The IR error for an answer the SDK could not parse (IR has one kind for it: `malformed_stream`)."""
    what = "not JSON" if isinstance(exc, json.JSONDecodeError) else "not the shape the SDK expects"
    message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc).splitlines()[0]
    return ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, f"response is {what}: {message}"), SdkException.DECODE_ERROR


def with_cause(message: str, exc: BaseException) -> str:
    """An SDK's connection or timeout message with the transport's own words after it (`Connection error.:
    [Errno 111] Connection refused`): the SDK's message alone does not say what failed."""
    cause = exc.__cause__ or exc.__context__
    detail = str(cause) if cause is not None else ""
    return f"{message}: {detail}" if detail and detail not in message else message


def headers_of(exc: BaseException) -> Mapping[str, str]:
    """Response headers an SDK exception carries (`exc.response.headers`), or none."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return headers if isinstance(headers, Mapping) else {}
