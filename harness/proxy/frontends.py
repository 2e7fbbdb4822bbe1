"""Where the model name sits in each frontend's request: in the JSON body, or (Gemini) in the URL path.

This is routing knowledge, not protocol decoding: the proxy needs the model before it knows whether to
decode the request at all (pass-through forwards bytes it may not be able to decode).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from harness.protocols import Codec, HttpRequest

GEMINI_ACTIONS = ("generateContent", "streamGenerateContent")
_GEMINI_PATH = re.compile(r"^/(?P<version>v1|v1beta)/models/(?P<model>[^/:]+):(?P<action>[A-Za-z]+)$")


class RequestShapeError(ValueError):
    """The request does not say which model it is for (or is not the shape its route expects)."""


@dataclass(frozen=True)
class Frontend:
    """One frontend protocol's routing facts."""

    protocol: str
    """Registry name of the frontend codec."""
    model_in_path: bool = False
    """Whether the model is a path segment (Gemini) rather than the body's `model` field."""

    def model_of(self, request: HttpRequest) -> str:
        """The model name the request asks for."""
        if self.model_in_path:
            match = _GEMINI_PATH.match(request.path)
            if match is None:
                raise RequestShapeError(f"path {request.path!r} is not /v1beta/models/MODEL:ACTION")
            if match["action"] not in GEMINI_ACTIONS:
                raise RequestShapeError(f"action {match['action']!r} is not one of {', '.join(GEMINI_ACTIONS)}")
            return match["model"]
        model = _body_object(request).get("model")
        if not isinstance(model, str) or not model:
            raise RequestShapeError("request body has no 'model' string")
        return model

    def stream_media_type(self, codec: Codec, request: HttpRequest) -> str:
        """Content-Type of a translated stream: Gemini streams a JSON array unless the query says `alt=sse`."""
        if self.model_in_path and request.query.get("alt") != "sse":
            return "application/json"
        return codec.stream_media_type

    def with_model(self, request: HttpRequest, model: str) -> HttpRequest:
        """The same request for another model name (pass-through with a configured upstream model)."""
        if self.model_in_path:
            match = _GEMINI_PATH.match(request.path)
            if match is None:
                raise RequestShapeError(f"path {request.path!r} is not /v1beta/models/MODEL:ACTION")
            return replace(request, path=f"/{match['version']}/models/{model}:{match['action']}")
        body = _body_object(request)
        body["model"] = model
        # The body is re-serialized only when a rename is configured; otherwise bytes pass unchanged.
        return replace(request, body=json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _body_object(request: HttpRequest) -> dict[str, Any]:
    try:
        value = json.loads(request.body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RequestShapeError(f"request body is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise RequestShapeError(f"request body is a JSON {type(value).__name__}, expected an object")
    return value


OPENAI = Frontend("openai")
ANTHROPIC = Frontend("anthropic")
GEMINI = Frontend("gemini", model_in_path=True)
OLLAMA = Frontend("ollama")
