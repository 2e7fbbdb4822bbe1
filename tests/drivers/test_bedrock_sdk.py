"""The boto3 (bedrock-runtime) driver: the Converse call it builds from IR, what it makes of Bedrock bytes, and
its httpx2 routing, in-process and over a real socket.

The wire it talks to is the bedrock codec's reference backend (`harness.backends.respond`, as the harness's
reference backends answer), so every scenario the driver can express runs end to end through boto3's own request
serializer, SigV4 signer and event stream parser, and the scenario's checks must pass.
"""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import random
import threading
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from harness import ir
from harness.backends.respond import WireReply, respond
from harness.drivers import bedrock_sdk
from harness.drivers.base import SdkResult, UnsupportedRequest
from harness.protocols import encode_events, registry
from harness.protocols.bedrock.auth import signature_problems
from harness.scenarios import Capability, SdkException, evaluate
from harness.stream import validate
from harness.wire.http import HttpRequest
from tests.drivers.mock import SCENARIOS

DRIVER = bedrock_sdk.DRIVER
CODEC = registry.get("bedrock")
MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def _pieces(body: bytes, seed: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    pos = 0
    while pos < len(body):
        step = rng.randint(1, 50)
        yield body[pos : pos + step]
        pos += step


class Backend:
    """An httpx2 transport answering like the bedrock reference backend, body in small random pieces."""

    def __init__(self, reply: WireReply | None = None) -> None:
        self.reply = reply
        self.wire: list[HttpRequest] = []
        self.pulled = 0  # body pieces handed to the client so far

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        wire = HttpRequest.from_url(request.method, str(request.url), dict(request.headers), request.read())
        self.wire.append(wire)
        reply = self.reply or respond(CODEC, wire, list(SCENARIOS.values()))

        def body() -> Iterator[bytes]:
            for piece in _pieces(reply.body, seed=len(self.wire)):
                self.pulled += 1
                yield piece

        return httpx2.Response(reply.status, headers=reply.headers, content=body())

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handle))


def run(scenario: str, *, stream: bool, backend: Backend | None = None) -> tuple[SdkResult, Backend]:
    backend = backend or Backend()
    request = SCENARIOS[scenario].request_for(scenario, stream=stream)
    result = DRIVER.run(request, stream=stream, base_url="http://proxy.test/bedrock", http_client=backend.client())
    return result, backend


def _supported(scenario_id: str) -> bool:
    scenario = SCENARIOS[scenario_id]
    wanted = set(scenario.requires)
    return scenario.kind != "models_list" and wanted <= (
        DRIVER.capabilities & {Capability(c) for c in CODEC.capabilities}
    )


RUNNABLE = sorted(s for s in SCENARIOS if _supported(s) and s != "tool-choice-none")
MODES = [(s, m) for s in RUNNABLE for m in SCENARIOS[s].streaming]


@pytest.mark.parametrize(("scenario", "mode"), MODES)
def test_every_expressible_scenario_passes_its_checks_through_boto3(scenario: str, mode: str) -> None:
    result, backend = run(scenario, stream=mode == "stream")
    checks = evaluate(SCENARIOS[scenario], result, capabilities=DRIVER.capabilities)
    assert [c for c in checks if not c.passed] == []
    wire = backend.wire[0]
    assert wire.path == f"/bedrock/model/{scenario}/{'converse-stream' if mode == 'stream' else 'converse'}"
    assert signature_problems(wire.headers) == []
    if result.events is not None:
        assert validate(result.events) == []


def test_the_call_carries_every_setting_the_ir_gives() -> None:
    _, backend = run("sampling-params", stream=False)
    body = json.loads(backend.wire[0].body)
    assert body["inferenceConfig"] == {"maxTokens": 32, "temperature": 0.3, "topP": 0.9}
    _, backend = run("tool-choice-specific", stream=False)
    body = json.loads(backend.wire[0].body)
    assert body["toolConfig"]["toolChoice"] == {"tool": {"name": "get_time"}}
    assert body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]["required"] == ["city"]
    _, backend = run("thinking-with-signature", stream=False)
    assert json.loads(backend.wire[0].body)["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 2048}
    }
    _, backend = run("tool-result-roundtrip", stream=False)
    assistant, result = json.loads(backend.wire[0].body)["messages"][1:]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": "call_weather_paris", "name": "get_weather", "input": {"city": "Paris"}}}
        ],
    }
    assert result == {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "call_weather_paris", "content": [{"text": "18°C and sunny"}]}}],
    }
    _, backend = run("json-schema", stream=False)
    text_format = json.loads(backend.wire[0].body)["outputConfig"]["textFormat"]
    assert text_format["type"] == "json_schema" and json.loads(text_format["structure"]["jsonSchema"]["schema"])


def test_a_stream_is_read_as_it_arrives() -> None:
    seen_at: list[int] = []
    backend = Backend()
    original = bedrock_sdk._StreamState.add

    def add(state: bedrock_sdk._StreamState, event: dict[str, Any]) -> None:
        seen_at.append(backend.pulled)
        original(state, event)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bedrock_sdk._StreamState, "add", add)
        result, _ = run("long-output", stream=True, backend=backend)
    assert result.error is None and len(seen_at) > 20
    # The first event reached the driver while most of the body was still to come: nothing buffered it.
    assert seen_at[0] < backend.pulled / 4


def test_thinking_signature_and_cache_usage_in_the_stream() -> None:
    result, _ = run("thinking-with-signature", stream=True)
    assert result.events is not None
    thinking = [e for e in result.events if isinstance(e, ir.ThinkingEnd)]
    assert thinking == [ir.ThinkingEnd(index=0, signature="c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0LTAwMQ==")]
    result, _ = run("usage-with-cache", stream=False)
    assert result.response is not None
    expected = SCENARIOS["usage-with-cache"].reply.usage  # type: ignore[union-attr]
    assert (result.response.usage.input_tokens, result.response.usage.cache_read_tokens) == (
        expected.input_tokens,
        expected.cache_read_tokens,
    )


def _reply(error: ir.IRError) -> WireReply:
    out = CODEC.encode_error(error)
    return WireReply(out.status, out.headers, [out.body])


@pytest.mark.parametrize(
    ("kind", "neutral", "status", "cls"),
    [
        (ir.ErrorKind.THROTTLED, SdkException.RATE_LIMIT, 429, "ThrottlingException"),
        (ir.ErrorKind.OVERLOADED, SdkException.OVERLOADED, 503, "ServiceUnavailableException"),
        (ir.ErrorKind.AUTH, SdkException.AUTHENTICATION, 403, "ClientError"),
        (ir.ErrorKind.PERMISSION, SdkException.PERMISSION_DENIED, 403, "AccessDeniedException"),
        (ir.ErrorKind.NOT_FOUND, SdkException.NOT_FOUND, 404, "ResourceNotFoundException"),
        (ir.ErrorKind.INVALID_REQUEST, SdkException.BAD_REQUEST, 400, "ValidationException"),
        (ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED, SdkException.BAD_REQUEST, 400, "ValidationException"),
        (ir.ErrorKind.SERVER, SdkException.SERVER_ERROR, 500, "InternalServerException"),
        (ir.ErrorKind.TIMEOUT, SdkException.TIMEOUT, 408, "ModelTimeoutException"),
    ],
)
@pytest.mark.parametrize("stream", [True, False])
def test_http_errors_become_boto3_client_errors(
    kind: ir.ErrorKind, neutral: SdkException, status: int, cls: str, stream: bool
) -> None:
    result, _ = run("text-basic", stream=stream, backend=Backend(_reply(ir.IRError.of(kind, "nope"))))
    assert result.error is not None and (result.error.kind, result.error.status) == (kind, status)
    assert result.exception == neutral and result.exception_class is not None
    assert result.exception_class.rsplit(".", 1)[1] == cls
    assert result.events is None and result.response is None


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        (ir.ErrorKind.OVERLOADED, "serviceUnavailableException"),
        (ir.ErrorKind.THROTTLED, "throttlingException"),
        (ir.ErrorKind.PERMISSION, "AccessDeniedException"),
    ],
)
def test_an_exception_inside_the_stream_ends_it_after_the_partial_text(kind: ir.ErrorKind, code: str) -> None:
    events = [
        ir.MessageStart(),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="Partial answer"),
        ir.ErrorEvent(error=ir.IRError.of(kind, "Overloaded")),
    ]
    body = encode_events(CODEC, events)
    reply = WireReply(200, {"content-type": CODEC.stream_media_type}, [body])
    result, _ = run("midstream-error", stream=True, backend=Backend(reply))
    assert result.exception == SdkException.STREAM_ERROR
    assert result.exception_class == "botocore.exceptions.EventStreamError"
    assert result.error == ir.IRError.of(kind, "Overloaded", code=code)
    assert result.events is not None and result.events[-3:] == [
        ir.TextDelta(index=0, text="Partial answer"),
        ir.TextEnd(index=0),
        ir.ErrorEvent(error=result.error),
    ]
    if kind is ir.ErrorKind.OVERLOADED:
        assert all(c.passed for c in evaluate(SCENARIOS["midstream-error"], result))


def test_a_truncated_or_corrupt_stream_is_reported_not_ignored() -> None:
    wire = CODEC.encode_request(SCENARIOS["text-basic"].request_for("text-basic", stream=True))
    reply = respond(CODEC, wire, list(SCENARIOS.values()))
    body = reply.body
    cut = WireReply(200, {"content-type": CODEC.stream_media_type}, [body[: len(body) // 2]])
    result, _ = run("truncated-stream", stream=True, backend=Backend(cut))
    assert result.events is not None and result.events[-1] == ir.ErrorEvent(
        error=ir.IRError.of(ir.ErrorKind.MALFORMED_STREAM, "stream ended without messageStop")
    )
    corrupt = bytearray(body)
    corrupt[len(body) // 2] ^= 0x01
    broken = WireReply(200, {"content-type": CODEC.stream_media_type}, [bytes(corrupt)])
    result, _ = run("text-basic", stream=True, backend=Backend(broken))
    assert result.exception == SdkException.DECODE_ERROR and result.error is not None
    assert result.error.kind is ir.ErrorKind.MALFORMED_STREAM and "event stream" in result.error.message


def test_a_refused_connection_is_a_connection_error() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused")

    request = SCENARIOS["text-basic"].request_for("m", stream=False)
    http = httpx2.Client(transport=httpx2.MockTransport(refuse))
    result = DRIVER.run(request, stream=False, base_url="http://proxy.test", http_client=http)
    assert (result.exception, result.exception_class) == (SdkException.CONNECTION, "httpx2.ConnectError")
    assert result.error is not None and result.error.kind is ir.ErrorKind.NETWORK


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"tool_choice": ir.ToolChoiceNone()}, "no 'none'"),
        ({"response_format": ir.ResponseFormatJsonObject()}, "needs a JSON schema"),
        ({"messages": [ir.Message(role="system", content=[ir.TextPart(text="x")])]}, "no system message"),
        ({"parallel_tool_calls": False}, "cannot forbid"),
        (
            {"messages": [ir.Message(role="user", content=[ir.ImagePart(source=ir.UrlImage(url="https://x/y.png"))])]},
            "not an image URL",
        ),
    ],
)
def test_what_converse_cannot_express_is_unsupported(change: dict[str, Any], reason: str) -> None:
    request = ir.Request(model=MODEL, messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])])
    with pytest.raises(UnsupportedRequest, match=reason):
        bedrock_sdk.params(request.model_copy(update=change))
    with pytest.raises(UnsupportedRequest, match="no model listing"):
        DRIVER.list_models(base_url="http://proxy.test", http_client=None)


# --- a real socket ----------------------------------------------------------------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    """Answers like the bedrock reference backend, writing the body in pieces with chunked encoding."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        wire = HttpRequest.from_url("POST", self.path, dict(self.headers), self.rfile.read(length))
        assert signature_problems(wire.headers) == []
        reply = respond(CODEC, wire, list(SCENARIOS.values()))
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for piece in _pieces(reply.body, seed=3):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def _server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.parametrize("stream", [True, False])
def test_a_socket_url_through_httpx2_and_through_botocore_itself(stream: bool) -> None:
    request = SCENARIOS["tool-call-parallel"].request_for("tool-call-parallel", stream=stream)
    with _server() as url, httpx2.Client(timeout=30) as http:
        via_httpx = DRIVER.run(request, stream=stream, base_url=url, http_client=http)
        via_botocore = DRIVER.run(request, stream=stream, base_url=url, http_client=None)
    assert via_httpx == via_botocore
    assert all(c.passed for c in evaluate(SCENARIOS["tool-call-parallel"], via_httpx))


def test_an_empty_tool_description_is_sent_as_none_as_converse_takes_no_empty_one() -> None:
    tool = ir.Tool(name="lookup", description="", parameters={"type": "object", "properties": {}})
    request = ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])], tools=[tool])
    config = bedrock_sdk._tool_config(request)
    assert config is not None
    assert config["tools"] == [{"toolSpec": {"name": "lookup", "inputSchema": {"json": tool.parameters}}}]


def test_a_file_goes_as_a_document_named_without_its_extension() -> None:
    _, backend = run("file-pdf-inline", stream=False)
    (document,) = [b["document"] for b in json.loads(backend.wire[0].body)["messages"][0]["content"] if "document" in b]
    assert (document["format"], document["name"]) == ("pdf", "invoice")
    assert base64.b64decode(document["source"]["bytes"]).startswith(b"%PDF-")


# --- one client per endpoint, nothing of a run kept in it ---------------------------------------------------------


def _tagged(backend: Backend, run_key: str) -> httpx2.Client:
    return httpx2.Client(transport=httpx2.MockTransport(backend.handle), headers={"x-run": run_key})


@pytest.mark.parametrize("stream", [True, False])
def test_runs_through_one_cached_client_each_send_through_their_own_http_client(stream: bool) -> None:
    first, second = Backend(), Backend()
    request = SCENARIOS["text-basic"].request_for("text-basic", stream=stream)
    url = "http://proxy.test/cached"
    one = DRIVER.run(request, stream=stream, base_url=url, http_client=_tagged(first, "run-1"))
    two = DRIVER.run(request, stream=stream, base_url=url, http_client=_tagged(second, "run-2"))
    assert DRIVER.client(url) is DRIVER.client(url + "/")  # one client made for the endpoint
    assert one == two and all(c.passed for c in evaluate(SCENARIOS["text-basic"], one))
    assert [w.headers["x-run"] for w in first.wire] == ["run-1"]  # the second run reached only its own transport
    assert [w.headers["x-run"] for w in second.wire] == ["run-2"]
    assert first.wire[0].body == second.wire[0].body
    assert bedrock_sdk._RUN_HTTP.get() is None  # nothing of the run is left for the next call


def test_a_failed_run_leaves_no_http_client_behind() -> None:
    backend = Backend(WireReply(500, {"content-type": "application/json"}, [b'{"message":"x"}']))
    result, _ = run("text-basic", stream=False, backend=backend)
    assert result.exception_class is not None
    assert bedrock_sdk._RUN_HTTP.get() is None


def test_concurrent_runs_through_one_cached_client_keep_their_own_transports() -> None:
    backends = [Backend() for _ in range(4)]
    request = SCENARIOS["tool-call-single"].request_for("tool-call-single", stream=True)
    barrier = threading.Barrier(len(backends), timeout=10)
    results: dict[int, SdkResult] = {}

    def call(i: int) -> None:
        barrier.wait()
        for _ in range(5):
            http = _tagged(backends[i], f"run-{i}")
            results[i] = DRIVER.run(request, stream=True, base_url="http://proxy.test/threads", http_client=http)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(backends))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == len(backends)
    for i, backend in enumerate(backends):
        assert [w.headers["x-run"] for w in backend.wire] == [f"run-{i}"] * 5
        assert all(c.passed for c in evaluate(SCENARIOS["tool-call-single"], results[i]))


def test_the_client_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bedrock_sdk, "_CLIENTS", {})
    clients = [DRIVER.client(f"http://proxy.test/{i}") for i in range(bedrock_sdk.CLIENTS_KEPT + 1)]
    assert len(bedrock_sdk._CLIENTS) == 1 and bedrock_sdk._CLIENTS["http://proxy.test/16"] is clients[-1]
    assert clients[0].meta.endpoint_url == "http://proxy.test/0"
