"""The Responses API's WebSocket mode (`GET /v1/responses` upgraded), as the proxy serves it.

Each client message is a `response.create` event: the create body plus `type`, without `stream` (Open Responses:
"WebSocket mode"). It stands for a streamed `POST /v1/responses`, and every event of that stream goes back as one
text message; an error the POST answers becomes an `error` event (`type`, `status`, `error.code`, `error.message`).

The connection keeps the responses it produced (input items and output items) so that a later `response.create`
may continue one with `previous_response_id` and only its new input, `store: false` included: the proxy sends the
whole chain upstream, as no other protocol keeps state. An id this connection does not hold (another connection's,
a store:false one after a reconnect) is `previous_response_not_found`. A continuation that fails evicts the
response it continued, so retrying it is `previous_response_not_found` too. A `function_call_output` that answers
no call of the chain fails the turn, as the API does ("No tool call found for function call output").
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from harness.protocols.common import dump_json, dump_text
from harness.protocols.responses import stored

CREATE = "response.create"
"""The one client event type."""
KEPT = 32
"""Responses a connection keeps for continuation (the oldest are forgotten first)."""
_DONE_TYPES = ("response.completed", "response.incomplete")


RETRY_HEADERS = ("retry-after", "retry-after-ms")
"""The headers of a refused POST an `error` event carries in `error.headers` (how long to wait)."""


def error_event(
    status: int,
    code: str,
    message: str,
    param: str | None = None,
    *,
    kind: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> str:
    """A WebSocket-mode `error` event (the `openai` SDK's `ResponseWsError`, from OpenAI's OpenAPI): the HTTP
    `status`, and `error` with its `type` (`kind`, else one from the status), `code`, `message`, `param`, and the
    `headers` emitted with it when there are any."""
    kind = kind or ("invalid_request_error" if status < 500 else "server_error")
    error: dict[str, Any] = {"type": kind, "code": code, "message": message, "param": param}
    if headers:
        error["headers"] = dict(headers)
    return dump_text({"type": "error", "status": status, "error": error})


def _as_items(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []


def _orphan_output(chain: list[Any]) -> str | None:
    """The call id of a `function_call_output` in `chain` with no `function_call` before it, if any."""
    calls: set[Any] = set()
    for item in chain:
        if isinstance(item, dict) and item.get("type") == "function_call":
            calls.add(item.get("call_id"))
        elif isinstance(item, dict) and item.get("type") == "function_call_output" and item.get("call_id") not in calls:
            return str(item.get("call_id"))
    return None


class ResponsesSocket:
    """One WebSocket connection's state: the responses it may continue, and the turn under way."""

    def __init__(self) -> None:
        self.chains: OrderedDict[str, list[Any]] = OrderedDict()
        self._input: list[Any] = []
        self._continued: str | None = None
        self._finished = False

    @property
    def finished(self) -> bool:
        """Whether the turn under way sent its terminal event (`response.completed`, `.incomplete`, `.failed`,
        `error`)."""
        return self._finished

    def begin(self, message: str) -> tuple[bytes | None, str | None]:
        """A `response.create` -> (the streamed POST body, None), or (None, an error event)."""
        try:
            event = json.loads(message)
        except json.JSONDecodeError as exc:
            return None, error_event(400, "invalid_json", f"the message is not JSON: {exc.msg}")
        if not isinstance(event, dict) or event.get("type") != CREATE:
            kind = event.get("type") if isinstance(event, dict) else None
            return None, error_event(400, "invalid_event_type", f"expected a {CREATE} event, got {kind!r}", "type")
        if "stream" in event or "stream_options" in event:
            return None, error_event(400, "invalid_request", "stream is not sent in WebSocket mode", "stream")
        body = {k: v for k, v in event.items() if k not in ("type", "previous_response_id")}
        chain = _as_items(body.get("input", []))
        self._continued = previous = event.get("previous_response_id")
        if previous is not None:
            if previous not in self.chains:
                message = stored.not_found_message(previous)
                return None, error_event(400, stored.NOT_FOUND, message, "previous_response_id")
            chain = [*self.chains[previous], *chain]
        orphan = _orphan_output(chain)
        if orphan is not None:
            self._evict()
            message = f"No tool call found for function call output with call_id {orphan}."
            return None, error_event(400, "invalid_request", message, "input")
        self._input, self._finished = chain, False
        return dump_json({**body, "input": chain, "stream": True}), None

    def relay(self, data: str) -> str:
        """One stream event of the turn under way, as WebSocket mode sends it (`_frame`), read once: a finished
        response is kept for continuation, and a failed one evicts what it continued (`_observe`)."""
        try:
            event = json.loads(data)
        except json.JSONDecodeError:
            return data
        if not isinstance(event, dict):
            return data
        self._observe(event)
        return self._frame(event, data)

    def _observe(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        response = event.get("response")
        self._finished = self._finished or kind in (*_DONE_TYPES, "response.failed", "error")
        if kind in _DONE_TYPES and isinstance(response, dict) and isinstance(response.get("id"), str):
            self.chains[response["id"]] = [*self._input, *_as_items(response.get("output"))]
            while len(self.chains) > KEPT:
                self.chains.popitem(last=False)
        elif kind in ("response.failed", "error"):
            self._evict()

    @staticmethod
    def _frame(event: dict[str, Any], data: str) -> str:
        """The same event, but an `error` event, which WebSocket mode types as `ResponseWsError` (nested `error`,
        the `sequence_number` of the stream; the HTTP stream's flat `code`, `message` and `param` are not its
        fields)."""
        if event.get("type") != "error" or "status" in event:
            return data
        nested = event.get("error")
        if not isinstance(nested, dict):  # the flat form names no type: a stream that failed is the server's
            nested = {
                "type": "server_error",
                "code": event.get("code"),
                "message": event.get("message"),
                "param": event.get("param"),
            }
        shaped = {"type": "error", "error": nested}
        if "sequence_number" in event:
            shaped["sequence_number"] = event["sequence_number"]
        return dump_text(shaped)

    def failed(self, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> str:
        """The `error` event for a turn whose POST was refused with `status`, this error body and these headers:
        the body's error (its `type` kept), and the wait headers (`RETRY_HEADERS`) in `error.headers`."""
        self._evict()
        try:
            error = json.loads(body).get("error")
        except (json.JSONDecodeError, AttributeError):
            error = None
        error = error if isinstance(error, dict) else {}
        code = error.get("code") or error.get("type") or f"http_{status}"
        param = error.get("param") if isinstance(error.get("param"), str) else None
        kind = error.get("type") if isinstance(error.get("type"), str) else None
        wait = {k.lower(): v for k, v in (headers or {}).items() if k.lower() in RETRY_HEADERS}
        message = str(error.get("message") or body[:200].decode("utf-8", "replace"))
        return error_event(status, str(code), message, param, kind=kind, headers=wait)

    def _evict(self) -> None:
        if self._continued is not None:
            self.chains.pop(self._continued, None)
