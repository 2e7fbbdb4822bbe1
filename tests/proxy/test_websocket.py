"""WebSocket mode on `/v1/responses` and `/v1/responses/compact`, through the built-in proxy on a real socket before
a reference backend (generic reply): the quirks the OpenResponses compliance suite found, each named."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from websockets.exceptions import ConnectionClosedError
from websockets.sync.client import ClientConnection, connect

from harness.backends import WireReply, wire_app
from harness.backends.generic import GENERIC_TEXT, respond_generic
from harness.protocols import HttpRequest, registry
from harness.proxy import ServerThread, create_app
from harness.proxy.config import ModelRoute, ProxyConfig, UpstreamConfig

MODEL = "ws-model"
TERMINAL = ("response.completed", "response.failed", "response.incomplete", "error")


class Served:
    """The proxy translating `MODEL` to a chat backend, and every body that backend received."""

    def __init__(self, proxy: str) -> None:
        self.url = proxy
        self.upstream: list[dict[str, Any]] = []


@pytest.fixture
def served() -> Iterator[Served]:
    bodies: list[dict[str, Any]] = []

    def reply(name: str, request: HttpRequest) -> WireReply:
        bodies.append(json.loads(request.body))
        return respond_generic(registry.get(name), request)

    with ServerThread(wire_app(["openai"], reply)) as upstream:
        route = UpstreamConfig(name="up", protocol="openai", base_url=f"{upstream.url}/openai")
        config = ProxyConfig(models=(ModelRoute(name=MODEL, mode="translate", upstream=route, upstream_model=MODEL),))
        with ServerThread(create_app(config)) as proxy:
            out = Served(proxy.url)
            out.upstream = bodies
            yield out


def _ws(served: Served) -> ClientConnection:
    return connect(served.url.replace("http://", "ws://") + "/v1/responses", open_timeout=10, close_timeout=5)


def _turn(ws: ClientConnection, **body: Any) -> list[dict[str, Any]]:
    ws.send(json.dumps({"type": "response.create", "model": MODEL, **body}))
    events: list[dict[str, Any]] = []
    while not events or events[-1]["type"] not in TERMINAL:
        events.append(json.loads(ws.recv(timeout=10)))
    return events


def test_responses_websocket_mode_streams_the_events_instead_of_403(served: Served) -> None:
    with _ws(served) as ws:
        events = _turn(ws, input="Count from 1 to 3.")
    kinds = [e["type"] for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds
    [message] = events[-1]["response"]["output"]
    assert message["content"][0]["text"] == f'{GENERIC_TEXT} "Count from 1 to 3."'


def test_websocket_store_false_continuation_sends_the_whole_chain_upstream(served: Served) -> None:
    with _ws(served) as ws:
        first = _turn(ws, store=False, input="Remember: cobalt.")[-1]["response"]
        second = _turn(ws, store=False, previous_response_id=first["id"], input="What was it?")
    assert second[-1]["type"] == "response.completed"
    sent = served.upstream[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"] == "Remember: cobalt." and sent[2]["content"] == "What was it?"


def test_websocket_previous_response_of_another_connection_is_previous_response_not_found(served: Served) -> None:
    with _ws(served) as ws:
        first = _turn(ws, store=False, input="Remember: copper.")[-1]["response"]
    with _ws(served) as ws:
        [error] = _turn(ws, store=False, previous_response_id=first["id"], input="Again?")
        recovered = _turn(ws, store=False, input="Start over.")
    assert (error["type"], error["status"], error["error"]["code"]) == ("error", 400, "previous_response_not_found")
    assert recovered[-1]["type"] == "response.completed"


def test_websocket_failed_continuation_evicts_the_response_it_continued(served: Served) -> None:
    orphan = [{"type": "function_call_output", "call_id": "call_missing", "output": "x"}]
    with _ws(served) as ws:
        first = _turn(ws, store=False, input="Remember: ember.")[-1]["response"]
        [failed] = _turn(ws, store=False, previous_response_id=first["id"], input=orphan)
        [retry] = _turn(ws, store=False, previous_response_id=first["id"], input="Continue.")
    assert failed["type"] == "error" and "call_missing" in failed["error"]["message"]
    assert retry["error"]["code"] == "previous_response_not_found"
    assert len(served.upstream) == 1  # neither refused turn went upstream


def test_websocket_message_with_stream_field_is_refused(served: Served) -> None:
    with _ws(served) as ws:
        [error] = _turn(ws, stream=True, input="x")
    assert error["error"]["param"] == "stream" and served.upstream == []


def test_compact_endpoint_answers_a_compaction_item_and_the_next_turn_sends_the_compacted_conversation(
    served: Served,
) -> None:
    conversation = [
        {"type": "message", "role": "user", "content": "We launch on Tuesday."},
        {"type": "message", "role": "assistant", "content": "Understood."},
    ]
    with httpx2.Client(timeout=30) as client:
        compacted = client.post(f"{served.url}/v1/responses/compact", json={"model": MODEL, "input": conversation})
        assert compacted.status_code == 200, compacted.text
        body = compacted.json()
        assert body["object"] == "response.compaction" and [i["type"] for i in body["output"]] == ["compaction"]
        assert served.upstream == []  # answered by the proxy itself
        follow = [*body["output"], {"type": "message", "role": "user", "content": "When do we launch?"}]
        answer = client.post(f"{served.url}/v1/responses", json={"model": MODEL, "input": follow})
    assert answer.status_code == 200, answer.text
    sent = served.upstream[-1]["messages"]
    assert [(m["role"], m["content"]) for m in sent] == [
        ("user", "We launch on Tuesday."),
        ("assistant", "Understood."),
        ("user", "When do we launch?"),
    ]


def test_compact_without_model_is_a_400(served: Served) -> None:
    with httpx2.Client(timeout=30) as client:
        answer = client.post(f"{served.url}/v1/responses/compact", json={"input": "Compact this."})
    assert answer.status_code == 400
    assert "model" in answer.json()["error"]["message"]


def test_compact_in_passthrough_mode_goes_upstream_byte_for_byte() -> None:
    seen: list[str] = []
    answer = b'{"id":"cmp_up","object":"response.compaction","output":[],"created_at":1,"usage":{}}'

    def reply(name: str, request: HttpRequest) -> WireReply:
        seen.append(request.path)
        return WireReply(200, {"content-type": "application/json"}, [answer])

    with ServerThread(wire_app(["responses"], reply)) as upstream:
        route = UpstreamConfig(name="up", protocol="responses", base_url=f"{upstream.url}/responses")
        config = ProxyConfig(models=(ModelRoute(name=MODEL, mode="passthrough", upstream=route, upstream_model=MODEL),))
        with ServerThread(create_app(config)) as proxy, httpx2.Client(timeout=30) as client:
            got = client.post(f"{proxy.url}/v1/responses/compact", json={"model": MODEL, "input": "x"})
    assert (got.status_code, got.content, seen) == (200, answer, ["/v1/responses/compact"])


def test_websocket_binary_frame_and_bad_json_get_error_events_and_the_connection_stays(served: Served) -> None:
    with _ws(served) as ws:
        ws.send(b"not json")
        bad = json.loads(ws.recv(timeout=10))
        ws.send(json.dumps({"type": "response.create", "model": MODEL, "input": "still there?"}).encode())
        events = [json.loads(ws.recv(timeout=10))]
        while events[-1]["type"] not in TERMINAL:
            events.append(json.loads(ws.recv(timeout=10)))
    assert (bad["type"], bad["error"]["code"]) == ("error", "invalid_json")
    assert events[-1]["type"] == "response.completed"


def test_a_turn_whose_stream_is_cut_closes_the_connection_instead_of_leaving_the_client_waiting() -> None:
    """The upstream's stream ends before its terminal event, passed through: over HTTP the client sees the body
    end; over WebSocket the proxy closes the connection (1011), else the client waits for an event that never
    comes."""

    def cut(name: str, request: HttpRequest) -> WireReply:
        whole = respond_generic(registry.get(name), request)
        return dataclasses.replace(whole, chunks=whole.chunks[:3])

    with ServerThread(wire_app(["responses"], cut)) as upstream:
        route = UpstreamConfig(name="up", protocol="responses", base_url=f"{upstream.url}/responses")
        config = ProxyConfig(models=(ModelRoute(name=MODEL, mode="passthrough", upstream=route, upstream_model=MODEL),))
        with ServerThread(create_app(config)) as proxy, _ws(Served(proxy.url)) as ws:
            ws.send(json.dumps({"type": "response.create", "model": MODEL, "input": "Hi."}))
            kinds = []
            with pytest.raises(ConnectionClosedError) as closed:
                while True:
                    kinds.append(json.loads(ws.recv(timeout=10))["type"])
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1011
    assert kinds and kinds[0] == "response.created" and not set(kinds) & set(TERMINAL)


def test_a_refused_turn_is_the_published_error_event_with_the_upstream_retry_after() -> None:
    """An upstream 429 over WebSocket mode: one `error` event with the status, the error as the HTTP body has it,
    and the Retry-After in `error.headers`, as the `openai` SDK's `ResponseWsError` reads it; the connection stays."""

    def reply(name: str, request: HttpRequest) -> WireReply:
        body = {"error": {"message": "Rate limit reached", "type": "rate_limit_error", "code": "rate_limit_exceeded"}}
        headers = {"content-type": "application/json", "retry-after": "7"}
        return WireReply(429, headers, [json.dumps(body).encode()])

    with ServerThread(wire_app(["openai"], reply)) as upstream:
        route = UpstreamConfig(name="up", protocol="openai", base_url=f"{upstream.url}/openai")
        config = ProxyConfig(models=(ModelRoute(name=MODEL, mode="translate", upstream=route, upstream_model=MODEL),))
        with ServerThread(create_app(config)) as proxy, _ws(Served(proxy.url)) as ws:
            [event] = _turn(ws, input="hi")
            assert event["type"] == "error" and event["status"] == 429
            assert event["error"]["code"] == "rate_limit_exceeded" and event["error"]["headers"] == {"retry-after": "7"}
            from openai.types.responses.responses_server_event import ResponseWsError

            parsed = ResponseWsError.model_validate(event)  # the SDK's own type, strictly
            assert parsed.status == 429 and parsed.error.headers == {"retry-after": "7"}
            assert _turn(ws, input="again")[0]["status"] == 429  # the connection stays
