"""`GET /api/tags`: the list of local models, for the proxy and the reference backends.

The reply is `{"models": [{"name", "model", "modified_at", "size", "digest", "details": {...}}]}`. Encoded
entries carry fixed placeholder metadata (no real files back them), so recorded listings stay byte-stable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from harness.protocols import common
from harness.protocols.ollama._fields import PROTOCOL, READ
from harness.wire.http import HttpResponse

TAGS_PATH = "/api/tags"
"""Path of the model-listing endpoint."""

_EPOCH = "1970-01-01T00:00:00Z"


def encode_tags(models: Iterable[str]) -> HttpResponse:
    """A `/api/tags` reply listing `models` by name."""
    entries: list[dict[str, Any]] = []
    for name in models:
        entries.append(
            {
                "name": name,
                "model": name,
                "modified_at": _EPOCH,
                "size": 0,
                "digest": hashlib.sha256(name.encode("utf-8")).hexdigest(),
                "details": {
                    "parent_model": "",
                    "format": "gguf",
                    "family": "",
                    "families": None,
                    "parameter_size": "",
                    "quantization_level": "",
                },
            }
        )
    return HttpResponse(200, {"content-type": "application/json; charset=utf-8"}, common.dump_json({"models": entries}))


def decode_tags(body: bytes) -> list[str]:
    """The model names of a `/api/tags` reply (`model`, or the older `name` field)."""
    obj = common.load_object(PROTOCOL, body, what="tags body")
    names: list[str] = []
    for i, value in enumerate(READ.get_list(obj, "models", "tags")):
        entry = READ.as_obj(value, f"tags.models[{i}]")
        name = READ.get_str(entry, "model", f"tags.models[{i}]") or READ.get_str(entry, "name", f"tags.models[{i}]")
        if name is None:
            raise READ.error(f"tags.models[{i}] has no model name")
        names.append(name)
    return names
