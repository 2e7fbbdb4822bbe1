"""Helpers every protocol shares: JSON loading with typed errors, status -> error kind, Retry-After, ids."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from harness import ir
from harness.protocols.base import DecodeError

SOURCE_DATE_EPOCH = "SOURCE_DATE_EPOCH"
"""The reproducible-builds variable: when set (seconds since the epoch), the time an encoder writes into a reply
instead of now (`created`, `created_at`), so that two runs on the same bytes write the same replies (a steady
`conformance run` sets it)."""


DATA_URL = re.compile(r"data:([^;,]+);base64,(.*)", re.DOTALL)
"""A base64 data URL (`data:<media type>;base64,<data>`), as OpenAI's image and file parts carry inline bytes:
group 1 is the media type, group 2 the data."""


def unix_now() -> int:
    """Now in Unix seconds, or SOURCE_DATE_EPOCH when set: the time a proxy's own reply says it was made."""
    fixed = os.environ.get(SOURCE_DATE_EPOCH)
    return int(fixed) if fixed and fixed.isdigit() else int(time.time())


_STATUS_KINDS: dict[int, ir.ErrorKind] = {
    400: ir.ErrorKind.INVALID_REQUEST,
    401: ir.ErrorKind.AUTH,
    403: ir.ErrorKind.PERMISSION,
    404: ir.ErrorKind.NOT_FOUND,
    408: ir.ErrorKind.TIMEOUT,
    409: ir.ErrorKind.INVALID_REQUEST,
    413: ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED,
    422: ir.ErrorKind.INVALID_REQUEST,
    429: ir.ErrorKind.THROTTLED,
    500: ir.ErrorKind.SERVER,
    502: ir.ErrorKind.SERVER,
    503: ir.ErrorKind.OVERLOADED,
    504: ir.ErrorKind.TIMEOUT,
    529: ir.ErrorKind.OVERLOADED,
}

# Not "too many tokens": that is Bedrock's throttling message ("Too many tokens, please wait before trying again.").
_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "maximum context",
    "prompt is too long",
    "too many input tokens",
    "input token count",
)

# The status each kind is sent with when a protocol has no more specific rule.
KIND_STATUS: dict[ir.ErrorKind, int] = {
    ir.ErrorKind.THROTTLED: 429,
    ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED: 400,
    ir.ErrorKind.AUTH: 401,
    ir.ErrorKind.PERMISSION: 403,
    ir.ErrorKind.NOT_FOUND: 404,
    ir.ErrorKind.INVALID_REQUEST: 400,
    ir.ErrorKind.OVERLOADED: 503,
    ir.ErrorKind.SERVER: 500,
    ir.ErrorKind.NETWORK: 502,
    ir.ErrorKind.TIMEOUT: 504,
    ir.ErrorKind.MALFORMED_STREAM: 502,
}


def kind_for_status(status: int, message: str = "") -> ir.ErrorKind:
    """The error kind an HTTP status (and, for 400s, a context-window message) means."""
    if status in (400, 413) and is_context_message(message):
        return ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
    if status in _STATUS_KINDS:
        return _STATUS_KINDS[status]
    if 500 <= status < 600:
        return ir.ErrorKind.SERVER
    return ir.ErrorKind.INVALID_REQUEST


def is_context_message(message: str) -> bool:
    """Whether an error message says the context window was exceeded."""
    return any(m in message.lower() for m in _CONTEXT_MARKERS)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from a `Retry-After` (or `retry-after-ms`) header; None when absent or unreadable."""
    lower = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lower:
        try:
            millis = float(lower["retry-after-ms"])
        except ValueError:
            return None
        return max(millis / 1000.0, 0.0) if math.isfinite(millis) else None
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return _retry_after_date(value)
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def _retry_after_date(value: str) -> float | None:
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 5322 `-0000` means "UTC, zone unknown": parsed as naive
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def retry_after_headers(error: ir.IRError) -> dict[str, str]:
    """The `retry-after` header for an error that carries one (whole seconds, rounded up)."""
    if error.retry_after is None:
        return {}
    seconds = int(-(-error.retry_after // 1))
    return {"retry-after": str(seconds)}


_DECODER = json.JSONDecoder()


def _compact_encoder(*, sort_keys: bool) -> Callable[[Any], str]:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)` by the C encoder that
    `JSONEncoder.encode` builds on every call (with its options), built once; without the check for circular
    values, which JSON read off a wire or built from the IR (pydantic refuses cycles) cannot hold: a cycle raises
    RecursionError instead of ValueError. `JSONEncoder.encode` itself on an interpreter without the C accelerator."""
    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    if c_make_encoder is None:
        return encoder.encode
    make = c_make_encoder(None, encoder.default, encode_basestring, None, ":", ",", sort_keys, False, True)

    def encode(value: Any) -> str:
        return "".join(make(value, 0))

    return encode


_COMPACT = _compact_encoder(sort_keys=False)
_COMPACT_SORTED = _compact_encoder(sort_keys=True)


def load_json(protocol: str, data: bytes | str, *, offset: int = 0, what: str = "body") -> Any:
    """Parse JSON or raise `DecodeError` naming the protocol, what was parsed and the byte offset: also for JSON
    nested deeper than Python's recursion limit and integer literals too long to convert."""
    if type(data) is str:
        # The common case, a stream event's data: one value filling the whole text (no surrounding whitespace)
        # is exactly what `json.loads` returns, read without its two whitespace scans. Anything else (or any
        # failure) goes through `json.loads` below, so the value and every error are its own.
        try:
            value, end = _DECODER.raw_decode(data)
        except (ValueError, RecursionError):
            pass
        else:
            if end == len(data):
                return value
    try:
        return json.loads(data)
    except UnicodeDecodeError as exc:
        raise DecodeError(protocol, f"{what} is not UTF-8: {exc.reason}", offset=offset + exc.start) from exc
    except json.JSONDecodeError as exc:
        raise DecodeError(protocol, f"{what} is not JSON: {exc.msg}", offset=offset + exc.pos) from exc
    except RecursionError as exc:
        raise DecodeError(protocol, f"{what} nests too deeply", offset=offset) from exc
    except ValueError as exc:  # an integer literal longer than Python converts (sys.int_max_str_digits)
        raise DecodeError(protocol, f"{what} is not usable JSON: {exc}", offset=offset) from exc


def load_object(protocol: str, data: bytes | str, *, offset: int = 0, what: str = "body") -> dict[str, Any]:
    """Parse a JSON object or raise `DecodeError`."""
    value = load_json(protocol, data, offset=offset, what=what)
    if not isinstance(value, dict):
        raise DecodeError(protocol, f"{what} is {type(value).__name__}, expected a JSON object", offset=offset)
    return value


UNSAID_SCHEMA_KEYWORDS = "unsaid_schema_keywords"
"""Key in `Request.provider_fields[<protocol>]`: JSON Schema keywords the request's response schema could not say,
because the client wrote it in a schema dialect without them (Gemini's OpenAPI-subset `responseSchema` has no
`additionalProperties`). The request diff does not compare these keywords for that request."""


def dump_json(value: Any) -> bytes:
    """Compact JSON bytes as providers send them (UTF-8, no ASCII escaping): what `json.dumps` writes with
    these options, by an encoder built once (`json.dumps` builds one per call)."""
    return dump_text(value).encode("utf-8")


def dump_text(value: Any) -> str:
    """`dump_json` as text (what an SSE event's data holds), without encoding it to bytes and back."""
    return _COMPACT(value)


dump_str: Callable[[str], str] = encode_basestring
"""`dump_text` of a string (the quoted, escaped JSON string), by the function the encoder itself calls for one;
for a value known to be a string, without the encoder around it."""


class JsonTemplate:
    """The JSON text of a value built around a few varying leaves (its holes), kept as the constant text between
    them: `fill(*leaves)` is `dump_text` of the value built with those leaves, joined from the pieces instead of
    encoding the whole value again. A stream encoder's chunks for a text delta differ only in the text (and a
    counter, a padding): the rest of the chunk, ids and extras, is written once per block instead of per chunk.

    `of(build, holes)` calls `build` with one marker string per hole and finds each marker's JSON in the text;
    the value must be built from its arguments only where the markers go (nothing else may depend on them). A
    marker the value does not hold is a hole `fill` ignores; a marker found twice (or in another value) gives
    no template (None): the caller encodes the value as before."""

    __slots__ = ("_order", "_pieces")

    def __init__(self, pieces: tuple[str, ...], order: tuple[int, ...]) -> None:
        self._pieces = pieces
        self._order = order

    @classmethod
    def of(cls, build: Callable[..., Any], holes: int) -> JsonTemplate | None:
        """The template of `build`'s value, or None when its holes cannot be told from the rest of its text."""
        nonce = secrets.token_hex(8)  # no value from a wire can hold a marker by design
        markers = [f"\x00{nonce} hole {i}\x00" for i in range(holes)]
        text = dump_text(build(*markers))
        found: list[tuple[int, int, int]] = []  # (position, hole, length of its JSON)
        for hole, marker in enumerate(markers):
            quoted = dump_str(marker)
            at = text.find(quoted)
            if at >= 0 and text.find(quoted, at + 1) >= 0:
                return None
            if at >= 0:
                found.append((at, hole, len(quoted)))
        found.sort()
        pieces: list[str] = []
        start = 0
        for at, _, length in found:
            pieces.append(text[start:at])
            start = at + length
        pieces.append(text[start:])
        return cls(tuple(pieces), tuple(hole for _, hole, _ in found))

    def fill(self, *leaves: Any) -> str:
        """`dump_text` of the value built with `leaves` in the holes."""
        pieces = self._pieces
        out = [pieces[0]]
        for hole, piece in zip(self._order, pieces[1:], strict=True):
            leaf = leaves[hole]
            out.append(dump_str(leaf) if type(leaf) is str else dump_text(leaf))
            out.append(piece)
        return "".join(out)


def dump_sorted(value: Any) -> bytes:
    """`dump_json` with every object's keys sorted (how Bedrock writes its bodies and events): what `json.dumps`
    writes with `sort_keys=True`, by an encoder built once (`json.dumps` builds one per call, a third of the
    cost of a Bedrock stream frame)."""
    return _COMPACT_SORTED(value).encode("utf-8")


def parse_arguments(raw: str) -> Any:
    """Tool arguments parsed from JSON text; an empty string means no arguments (`{}`); None if invalid."""
    if raw.strip() == "":
        return {}
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, nested too deeply, or an unconvertible number
        return None


def synth_tool_id(prefix: str, *parts: object) -> str:
    """A deterministic tool-call id for protocols without ids: prefix + short hash of what identifies it."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:24]
    return f"{prefix}{digest}"


def estimate_tokens(request: ir.Request) -> int:
    """A rough count of a request's input tokens, for a frontend that must report one before its upstream
    has (Anthropic's message_start): one token per four characters of the system prompt, the messages' text,
    thinking, tool arguments and results, the bytes of files, and the tools' names, descriptions and schemas; 85
    per image (what OpenAI charges a low-detail image). At least 1. Deterministic; not any provider's tokenizer."""
    chars = len(request.system or "")
    images = 0
    for message in request.messages:
        for part in message.content:
            parts = part.content if isinstance(part, ir.ToolResultPart) else [part]
            for inner in parts:
                if isinstance(inner, ir.ImagePart):
                    images += 1
                else:
                    chars += len(_text_of(inner))
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description or "") + len(json.dumps(tool.parameters))
    return max(1, math.ceil(chars / 4) + 85 * images)


def _text_of(part: ir.ContentPart) -> str:
    if isinstance(part, ir.TextPart | ir.ThinkingPart):
        return part.text
    if isinstance(part, ir.ToolCallPart):
        return part.name + part.arguments_raw
    if isinstance(part, ir.FilePart) and part.data is not None:
        return "x" * (len(part.data) * 3 // 4 - part.data[-2:].count("="))  # a character per byte of the file
    return ""
