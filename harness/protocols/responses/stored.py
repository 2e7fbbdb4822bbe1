"""The responses an OpenAI Responses server stores: a request continues one with `previous_response_id` and only its
new input; an id the server does not hold is answered 400 `previous_response_not_found`.

The error is OpenAI's, as the Responses API answers it over HTTP (and as `websocket.error_event` sends it over
WebSocket): `{"error": {"message": "Previous response with id '<id>' not found.", "type": "invalid_request_error",
"param": "previous_response_id", "code": "previous_response_not_found"}}`.
"""

from __future__ import annotations

import json
from typing import Any

from harness.protocols import facts
from harness.protocols.common import dump_json
from harness.wire.http import HttpRequest, HttpResponse

NOT_FOUND = "previous_response_not_found"
"""The error code of an unknown `previous_response_id`."""
_WITH_RESPONSE = ("response.created", "response.in_progress", "response.completed", "response.incomplete")


def not_found_message(response_id: str) -> str:
    """OpenAI's message for an id it does not hold."""
    return f"Previous response with id '{response_id}' not found."


def continued(request: HttpRequest) -> str | None:
    """The `previous_response_id` a request body names (None: none, or a body that is no JSON object)."""
    try:
        body = json.loads(request.body or b"{}")
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    value = body.get("previous_response_id") if isinstance(body, dict) else None
    return value if isinstance(value, str) else None


def _id_of(value: Any) -> list[str]:
    if isinstance(value, dict) and value.get("object") == "response" and isinstance(value.get("id"), str):
        return [value["id"]]
    return []


def issued(body: bytes) -> list[str]:
    """The response ids an answer gives: a whole body's `id`, or a stream's `response.*` events' `response.id`."""
    try:
        return _id_of(json.loads(body))
    except (UnicodeDecodeError, json.JSONDecodeError):
        pass
    found: list[str] = []
    for line in body.decode("utf-8", "replace").splitlines():
        if not line.startswith("data:"):
            continue
        try:
            event = json.loads(line[5:])
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("type") in _WITH_RESPONSE:
            found += [i for i in _id_of(event.get("response")) if i not in found]
    return found


def not_found(response_id: str) -> HttpResponse:
    """The 400 OpenAI answers for a `previous_response_id` it does not hold."""
    error = {
        "message": not_found_message(response_id),
        "type": "invalid_request_error",
        "param": "previous_response_id",
        "code": NOT_FOUND,
    }
    return HttpResponse(status=400, headers={"content-type": "application/json"}, body=dump_json({"error": error}))


STORED = facts.StoredResponses(continued=continued, issued=issued, not_found=not_found)
"""The fact (`ProtocolFacts.stored_responses`)."""
