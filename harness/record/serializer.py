"""A readable cassette serializer for vcrpy: JSON bodies stored parsed, streamed bodies as text with their chunk
boundaries, bytes kept exact.

A body is stored parsed (`json:`) only when dumping the parsed value compactly reproduces the exact bytes;
otherwise it is stored as text (`string:`), or base64 (`base64:`) when it is not UTF-8. `chunks:` lists the
byte length of each chunk as the backend sent it, so replay can keep the boundaries vcrpy itself does not keep.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import yaml

from harness import safeyaml

# The pure-Python dumper: libyaml escapes astral-plane characters (emoji), which forbids literal blocks.
_SAFE_DUMPER = yaml.SafeDumper
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    # Multi-line strings (SSE streams) as literal blocks so a person can read them.
    if (
        "\n" in data
        and not data.startswith(" ")
        and "\r" not in data
        and not any(ord(c) < 32 and c not in "\n\t" for c in data)
    ):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


class _Dumper(_SAFE_DUMPER):
    """Safe dumper with literal blocks for multi-line text."""


_Dumper.add_representer(str, _str_presenter)


def compact_json(value: Any) -> bytes:
    """The compact UTF-8 JSON providers (and our encoders) send."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def encode_body(raw: bytes | str | None) -> dict[str, Any]:
    """A body as the readable cassette form."""
    if raw is None:
        return {"string": ""}
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}
    if text[:1] in ("{", "["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = None
        if value is not None and compact_json(value) == data:
            return {"json": value}
    return {"string": text}


def decode_body(body: dict[str, Any]) -> bytes:
    """The exact bytes of a readable cassette body."""
    if "json" in body:
        return compact_json(body["json"])
    if "base64" in body:
        return base64.b64decode(body["base64"])
    value = body.get("string", "")
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def serialize(data: dict[str, Any]) -> str:
    """vcrpy serializer hook: `{"version", "interactions", "metadata"?}` -> readable YAML text."""
    interactions = []
    for item in data["interactions"]:
        req = dict(item["request"])
        req["body"] = encode_body(req.get("body"))
        resp = dict(item["response"])
        body = dict(resp.get("body") or {})
        stored = encode_body(body.get("string"))
        if body.get("chunks") is not None:
            stored["chunks"] = list(body["chunks"])
        resp["body"] = stored
        interactions.append({"request": req, "response": resp})
    doc: dict[str, Any] = {"version": data.get("version", 1)}
    if data.get("metadata"):
        doc["metadata"] = data["metadata"]
    doc["interactions"] = interactions
    return str(yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120))


def deserialize(text: str) -> dict[str, Any]:
    """vcrpy serializer hook: readable YAML text -> the dict vcrpy builds its cassette from."""
    doc = safeyaml.load(text)  # a YamlBombError is a ValueError, as a non-cassette is
    if not isinstance(doc, dict) or not isinstance(doc.get("interactions"), list):
        raise ValueError("not a cassette: no 'interactions' list")
    interactions = []
    for item in doc["interactions"]:
        req = dict(item["request"])
        req["body"] = decode_body(req.get("body") or {})
        resp = dict(item["response"])
        body = resp.get("body") or {}
        resp["body"] = {"string": decode_body(body), "chunks": body.get("chunks")}
        interactions.append({"request": req, "response": resp})
    out: dict[str, Any] = {"version": doc.get("version", 1), "interactions": interactions}
    if doc.get("metadata"):
        out["metadata"] = doc["metadata"]
    return out
