"""Readers for the capture formats found in public projects' test suites."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness import safeyaml
from harness.wire.content import decode_content_noted
from harness.wire.http import HttpRequest, HttpResponse

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CaptureError(ValueError):
    """A capture file that cannot be read; names the file and what is wrong."""


@dataclass(frozen=True)
class Interaction:
    """One recorded request and its response."""

    request: HttpRequest
    """The request as recorded (path and query split; body bytes)."""
    url: str
    """The absolute URL as recorded."""
    response: HttpResponse
    """The response, body decoded from gzip/deflate and chunked transfer encoding."""
    chunks: tuple[int, ...] | None = None
    """Byte length of each response chunk as the backend sent it, where the cassette kept them (ours do)."""
    notes: tuple[str, ...] = ()
    """What reading the interaction took on trust (a body stored decoded that keeps `Content-Encoding: gzip`)."""

    def response_chunks(self) -> list[bytes]:
        """The response body cut at its recorded chunk boundaries (one piece when none were kept)."""
        if not self.chunks:
            return [self.response.body]
        out, pos = [], 0
        for size in self.chunks:
            out.append(self.response.body[pos : pos + size])
            pos += size
        return out


_CASSETTE_START = re.compile(rb"^(?:---\s*)?(?:interactions|version|metadata)\s*:", re.M)


def is_capture(raw: bytes) -> bool:
    """Whether file bytes are a capture (httprr trace, or a YAML/JSON document with an `interactions` list) rather
    than a raw body; a broken cassette still counts, so that reading it reports what is wrong with it."""
    if raw.startswith(b"httprr trace v1"):
        return True
    try:
        doc = safeyaml.load(raw)
    except (yaml.YAMLError, ValueError):
        return _CASSETTE_START.search(raw[:4096]) is not None
    return isinstance(doc, dict) and "interactions" in doc


def load_interactions(path: str | Path) -> list[Interaction]:
    """All interactions in a capture file, in recorded order."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise CaptureError(f"{p}: cannot read: {exc.strerror}") from exc
    if raw.startswith(b"httprr trace v1"):
        return _load_httprr(p, raw)
    try:
        doc = safeyaml.load(raw)
    except safeyaml.YamlBombError as exc:
        raise CaptureError(f"{p}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise CaptureError(f"{p}: not a YAML cassette: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("interactions"), list):
        raise CaptureError(f"{p}: no 'interactions' list; not a vcrpy or go-vcr cassette")
    version = doc.get("version")
    loader = _go_vcr_interaction if version == 2 else _vcrpy_interaction
    out = []
    for i, item in enumerate(doc["interactions"]):
        try:
            out.append(loader(item))
        except KeyError as exc:
            raise CaptureError(f"{p}: interaction {i}: {exc!r}: the interaction has no {exc.args[0]!r}") from exc
        except (TypeError, ValueError) as exc:
            raise CaptureError(f"{p}: interaction {i}: {exc!r}") from exc
    return out


def _headers(raw: dict[str, Any] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in (raw or {}).items():
        out[str(name).lower()] = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return out


def _body_bytes(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise ValueError(f"body is a {type(value).__name__}, expected text or bytes")


def _parsed_body(value: Any) -> bytes:
    # pydantic-ai's parsed_body: the JSON body as a YAML mapping.
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


_BODY_FORMS = ("string", "json", "base64")


def _stored_body(value: Any) -> bytes:
    """A body as a cassette stores it: text or bytes (vcrpy's request, go-vcr), or a mapping with one of
    `string` (vcrpy's response), `json` (parsed, compact on the wire) or `base64`, the readable form the harness
    writes (`harness.record.serializer`)."""
    if not isinstance(value, dict):
        return _body_bytes(value)
    if "json" in value:
        return json.dumps(value["json"], ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if "base64" in value:
        try:
            return base64.b64decode(value["base64"], validate=True)
        except (binascii.Error, TypeError) as exc:
            raise ValueError(f"body.base64 is not base64: {exc}") from exc
    if "string" in value:
        return _body_bytes(value["string"])
    raise ValueError(f"body has none of {', '.join(_BODY_FORMS)} (keys: {', '.join(map(str, value)) or 'none'})")


def _chunks(body: Any, length: int) -> tuple[int, ...] | None:
    sizes = body.get("chunks") if isinstance(body, dict) else None
    if sizes is None:
        return None
    if not isinstance(sizes, list) or not all(isinstance(n, int) and n >= 0 for n in sizes):
        raise ValueError("body.chunks is not a list of byte counts")
    if sum(sizes) != length:
        raise ValueError(f"body.chunks add up to {sum(sizes)} bytes, the body has {length}")
    return tuple(sizes)


def _vcrpy_interaction(item: dict[str, Any]) -> Interaction:
    req, resp = item["request"], item["response"]
    req_headers = _headers(req.get("headers"))
    req_body = _parsed_body(req["parsed_body"]) if "parsed_body" in req else _stored_body(req.get("body"))
    resp_headers = _headers(resp.get("headers"))
    body = resp.get("body")
    resp_body = _parsed_body(resp["parsed_body"]) if "parsed_body" in resp else _stored_body(body)
    status = resp["status"]["code"] if isinstance(resp.get("status"), dict) else int(resp["status"])
    made = _make(req["method"], req["uri"], req_headers, req_body, int(status), resp_headers, resp_body)
    chunks = _chunks(body, len(resp_body))
    # Boundaries count the bytes as sent: they no longer apply once a compressed body is inflated.
    if chunks is None or made.response.body != resp_body:
        return made
    return dataclasses.replace(made, chunks=chunks)


def _go_vcr_interaction(item: dict[str, Any]) -> Interaction:
    req, resp = item["request"], item["response"]
    return _make(
        req["method"],
        req["url"],
        _headers(req.get("headers")),
        _body_bytes(req.get("body")),
        int(resp["code"]),
        _headers(resp.get("headers")),
        _body_bytes(resp.get("body")),
    )


def _make(
    method: str,
    url: str,
    req_headers: dict[str, str],
    req_body: bytes,
    status: int,
    resp_headers: dict[str, str],
    resp_body: bytes,
) -> Interaction:
    request = HttpRequest.from_url(method, url, req_headers, req_body)
    body, note = decode_content_noted(resp_body, resp_headers)
    response = HttpResponse(status, resp_headers, body)
    return Interaction(request=request, url=url, response=response, notes=(note,) if note else ())


def _load_httprr(path: Path, raw: bytes) -> list[Interaction]:
    out = []
    pos = raw.index(b"\n") + 1
    while pos < len(raw):
        eol = raw.find(b"\n", pos)
        if eol < 0:
            raise CaptureError(f"{path}: truncated record header at byte {pos}")
        try:
            n_req, n_resp = (int(x) for x in raw[pos:eol].split())
        except ValueError as exc:
            raise CaptureError(f"{path}: bad record header {raw[pos:eol]!r} at byte {pos}") from exc
        start = eol + 1
        req_raw, resp_raw = raw[start : start + n_req], raw[start + n_req : start + n_req + n_resp]
        if len(req_raw) != n_req or len(resp_raw) != n_resp:
            raise CaptureError(f"{path}: record at byte {pos} is shorter than its header says")
        try:
            out.append(_httprr_record(path, req_raw, resp_raw))
        except (IndexError, ValueError) as exc:  # a CaptureError says it all; anything else gets the file named
            if isinstance(exc, CaptureError):
                raise
            raise CaptureError(f"{path}: record at byte {pos}: {exc}") from exc
        pos = start + n_req + n_resp
    return out


def _split_http(path: Path, message: bytes) -> tuple[bytes, dict[str, str], bytes]:
    head, sep, body = message.partition(b"\r\n\r\n")
    if not sep:
        raise CaptureError(f"{path}: HTTP message without a header/body separator")
    lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        for sub in line.split("\n"):  # tolerate bare-LF header lines seen in some traces
            name, _, value = sub.partition(":")
            if name:
                headers[name.strip().lower()] = value.strip()
    return lines[0].encode("latin-1"), headers, body


def _dechunk(path: Path, body: bytes) -> bytes:
    out = bytearray()
    pos = 0
    while True:
        eol = body.find(b"\r\n", pos)
        if eol < 0:
            raise CaptureError(f"{path}: truncated chunked body at byte {pos}")
        size = int(body[pos:eol].split(b";")[0], 16)
        if size == 0:
            return bytes(out)
        out += body[eol + 2 : eol + 2 + size]
        pos = eol + 2 + size + 2


def _httprr_record(path: Path, req_raw: bytes, resp_raw: bytes) -> Interaction:
    req_line, req_headers, req_body = _split_http(path, req_raw)
    method, url, _ = req_line.decode("latin-1").split(" ", 2)
    status_line, resp_headers, resp_body = _split_http(path, resp_raw)
    status = int(status_line.split()[1])
    if "chunked" in resp_headers.get("transfer-encoding", "").lower():
        resp_body = _dechunk(path, resp_body)
    return _make(method, url, req_headers, req_body, status, resp_headers, resp_body)
