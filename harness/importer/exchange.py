"""The exchange an import starts from: one recorded request and its answer, read from a capture file (vcrpy,
go-vcr v2, httprr, the harness's own cassettes) or from raw files, with its protocol, its secrets scrubbed and its
body cut as the replay will serve it."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import yaml

from harness import ir, safeyaml
from harness.capture import Interaction, load_interactions
from harness.protocols import DecodeError, HttpRequest, registry
from harness.record.chunks import event_boundaries, split_by_lengths
from harness.record.scrub import (
    REDACTED,
    SECRET_QUERY_KEYS,
    is_credential_query,
    rules,
    scrub_body,
    scrub_credentials_body,
    scrub_credentials_url,
    scrub_headers,
    scrub_url,
)
from harness.scenarios.resolve import split_scenario

TRANSFER_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Response headers about how the recorded body travelled; once the body is stored decoded they no longer apply."""
_PLACEHOLDER_SEGMENTS = frozenset({"accounts", "projects", "locations", "deployments"})
"""Path segments whose next segment is the user's own (an account, project, region or deployment name)."""


class ImportFailure(ValueError):
    """An exchange that cannot become a case; the message says which file, which part and why."""


class ImportUsageError(ImportFailure):
    """The arguments do not fit the file (an unknown protocol, a URL no protocol claims, an interaction the
    capture does not have, a raw body without the URL its protocol needs, an id already taken)."""


@dataclass(frozen=True)
class Origin:
    """Where an imported answer came from, written into the cassette's metadata and the scenario's description."""

    file: str
    """The capture file (or raw body file) as given."""
    interaction: int | None
    """Index of the exchange in the capture; None for raw files."""
    url: str
    """The recorded request URL, secrets scrubbed."""
    notes: tuple[str, ...] = ()
    """What the import changed or could not keep (gzip undone, chunk boundaries guessed, keys redacted)."""
    source: Literal["real", "reference"] = "real"
    """Where the answer was made: a real provider, unless the capture is one of the harness's own cassettes
    recorded from a reference backend (its `metadata.source`)."""

    @property
    def label(self) -> str:
        """`file#interaction` (or the file alone)."""
        return self.file if self.interaction is None else f"{self.file}#{self.interaction}"


@dataclass(frozen=True)
class Exchange:
    """One recorded exchange, ready to import: scrubbed, its body as the replay serves it."""

    protocol: str
    """Registry name of the protocol or profile that answered."""
    request: HttpRequest
    """The request as recorded (secrets scrubbed), its path relative to the host."""
    status: int
    """Recorded HTTP status."""
    headers: dict[str, str]
    """Response headers (lower-case), secrets and transfer headers dropped."""
    chunks: tuple[bytes, ...]
    """The response body in the pieces the replay sends (recorded boundaries where the capture kept them)."""
    origin: Origin
    """Where it came from."""
    base_url: str = field(default="")
    """Scheme, host and port of the recorded URL."""

    @property
    def body(self) -> bytes:
        """The whole response body."""
        return b"".join(self.chunks)

    @property
    def stream(self) -> bool:
        """Whether the request asked for a stream."""
        return registry.get(self.protocol).is_stream_request(self.request)


def redact_keys(data: bytes) -> tuple[bytes, int]:
    """`data` with every key-shaped string (each protocol's key patterns and the planted test keys) replaced by
    REDACTED, and how many were."""
    text = data.decode("utf-8", "surrogateescape")
    count = 0
    for pattern in rules().key_patterns:
        text, n = pattern.subn(REDACTED, text)
        count += n
    return (text.encode("utf-8", "surrogateescape") if count else data), count


def _scrub_chunks(chunks: list[bytes]) -> tuple[list[bytes], int]:
    scrubbed = [redact_keys(c) for c in chunks]
    out, count = [c for c, _ in scrubbed], sum(n for _, n in scrubbed)
    joined, whole = redact_keys(b"".join(out))
    if whole:  # a key cut by a chunk boundary: the boundaries cannot be kept around it
        return event_boundary_chunks(joined), count + whole
    return out, count


def event_boundary_chunks(body: bytes, media_type: str | None = None) -> list[bytes]:
    """A body cut at its event ends (binary event-stream frames by its media type, else SSE events or NDJSON
    lines), as the recorder stores a real provider's stream."""
    return split_by_lengths(body, event_boundaries(body, media_type))


def _path_pattern(path: str) -> re.Pattern[str]:
    parts, out = path.split("/"), []
    for i, part in enumerate(parts):
        if i and parts[i - 1] in _PLACEHOLDER_SEGMENTS:
            out.append("[^/]+")
        else:
            out.append(".+".join(re.escape(p) for p in part.split("MODEL")))
    return re.compile("/".join(out))


def _paths_of(name: str) -> list[re.Pattern[str]]:
    codec = registry.get(name)
    message = ir.Message(role="user", content=[ir.TextPart(text="probe")])
    return [
        _path_pattern(codec.encode_request(ir.Request(model="MODEL", messages=[message], stream=s)).path)
        for s in (False, True)
    ]


def _host(url: str) -> tuple[str, int | None]:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    return ("127.0.0.1" if host == "localhost" else host), parts.port


def own_layout(url: str) -> tuple[str, str] | None:
    """(protocol, path at the provider) of a URL in the harness's own layout, `<base>/<backend>/<provider path>`,
    as its reference recordings and its replay server have them; None for any other URL."""
    _, path = split_scenario(urlsplit(url).path)  # `<backend>/_s/<scenario>/...`: the scenario is ours, not the wire's
    first, _, rest = path.lstrip("/").partition("/")
    if first in registry.names() and any(p.fullmatch(f"/{rest}") for p in _paths_of(first)):
        return first, f"/{rest}"
    return None


def detect_protocol(url: str) -> str:
    """The protocol or profile a recorded request URL speaks: the ones whose request path has this shape, then,
    of several, the one whose real endpoint has this host. ImportFailure names the candidates when that leaves
    more or fewer than one."""
    _, path = split_scenario(urlsplit(url).path)
    by_path = [n for n in registry.names() if any(p.fullmatch(path) for p in _paths_of(n))]
    if len(by_path) == 1:
        return by_path[0]
    host = _host(url)
    by_host = [n for n in by_path if (real := registry.facts(n).real) is not None and _host(real.base_url) == host]
    if len(by_host) == 1:
        return by_host[0]
    if not by_path:
        raise ImportUsageError(f"{url}: no protocol has requests at this path; pass --protocol")
    names = ", ".join(by_host or by_path)
    raise ImportUsageError(f"{url}: several protocols have requests at this path ({names}); pass --protocol")


def _response_headers(headers: dict[str, str], notes: list[str]) -> dict[str, str]:
    encoding = headers.get("content-encoding", "").lower()
    if encoding and encoding != "identity":
        notes.append(f"{encoding} undone: the replay serves the body decoded, without content-encoding")
    return scrub_headers({k: v for k, v in headers.items() if k not in TRANSFER_HEADERS})


def _scrubbed_request(request: HttpRequest, notes: list[str]) -> HttpRequest:
    body, count = redact_keys(scrub_body(request.body))
    if count:
        notes.append(f"{count} key-shaped string(s) in the request body replaced by {REDACTED}")
    body, fields = scrub_credentials_body(body)
    if fields:
        notes.append(f"{fields} credential field(s) in the request body replaced by {REDACTED}")
    query = {
        k: (REDACTED if k.lower() in SECRET_QUERY_KEYS or is_credential_query(k) else v)
        for k, v in request.query.items()
    }
    return HttpRequest(request.method, request.path, query, scrub_headers(request.headers), body)


@dataclass
class _Recorded:
    """An exchange as read, before scrubbing."""

    request: HttpRequest
    url: str
    status: int
    headers: dict[str, str]
    chunks: list[bytes]
    notes: list[str]


def _exchange(
    protocol: str,
    recorded: _Recorded,
    *,
    file: str,
    interaction: int | None,
    source: Literal["real", "reference"] = "real",
) -> Exchange:
    notes = list(recorded.notes)
    request = _scrubbed_request(recorded.request, notes)
    headers = _response_headers(recorded.headers, notes)
    chunks, count = _scrub_chunks(recorded.chunks)
    if count:
        notes.append(f"{count} key-shaped string(s) in the response replaced by {REDACTED}")
    url, credentials = scrub_credentials_url(redact_keys(scrub_url(recorded.url).encode())[0].decode())
    if credentials:
        notes.append(f"{credentials} credential(s) in the URL (a password, signed-URL parameters) replaced")
    parts = urlsplit(url)
    return Exchange(
        protocol=protocol,
        request=request,
        status=recorded.status,
        headers=headers,
        chunks=tuple(chunks),
        origin=Origin(file=file, interaction=interaction, url=url, notes=tuple(notes), source=source),
        base_url=f"{parts.scheme}://{parts.netloc}" if parts.netloc else "",
    )


def _check_protocol(name: str) -> str:
    try:
        registry.get(name)
    except registry.UnknownProtocolError as exc:
        raise ImportUsageError(f"--protocol: {exc}") from exc
    return name


def _recorded_of(item: Interaction) -> _Recorded:
    notes = list(item.notes)
    if item.chunks:
        chunks = item.response_chunks()
    else:
        chunks = event_boundary_chunks(item.response.body, item.response.headers.get("content-type"))
        if len(chunks) > 1:
            notes.append(
                "the capture kept no chunk boundaries: the body is cut at its event ends, as the recorder "
                "stores a real provider's stream"
            )
    return _Recorded(item.request, item.url, item.response.status, dict(item.response.headers), chunks, notes)


def _own_source(path: Path) -> Literal["real", "reference"]:
    """`metadata.source` of one of the harness's own cassettes (`real` unless it says `reference`)."""
    try:
        doc = safeyaml.load(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError):  # UnicodeDecodeError and YamlBombError are ValueErrors
        return "real"
    metadata = doc.get("metadata") if isinstance(doc, dict) else None
    return "reference" if isinstance(metadata, dict) and metadata.get("source") == "reference" else "real"


def from_capture(path: Path, interaction: int, protocol: str | None = None) -> Exchange:
    """Exchange `interaction` of a capture file; the protocol is detected from the recorded URL when not given."""
    items = load_interactions(path)
    if not 0 <= interaction < len(items):
        raise ImportUsageError(f"{path}: --interaction {interaction}: the capture has {len(items)} (0-based)")
    item = items[interaction]
    recorded = _recorded_of(item)
    own = own_layout(item.url)
    if own is not None and protocol in (None, own[0]):
        # The harness's own recording: the backend is the first path segment, the provider path follows it.
        recorded.request = dataclasses.replace(recorded.request, path=own[1])
        source = _own_source(path)
        return _exchange(own[0], recorded, file=str(path), interaction=interaction, source=source)
    name = _check_protocol(protocol) if protocol else detect_protocol(item.url)
    return _exchange(name, recorded, file=str(path), interaction=interaction)


def interaction_count(path: Path) -> int:
    """How many exchanges a capture file holds."""
    return len(load_interactions(path))


def _media_type(body: bytes, stream: bool) -> str:
    head = body.lstrip()[:6]
    if head.startswith((b"data:", b"event:", b":")):
        return "text/event-stream"
    if stream and body.count(b"\n") > 1 and not head.startswith(b"["):
        return "application/x-ndjson"
    return "application/json"


def from_raw(body: Path, request: Path, *, protocol: str, url: str | None = None, status: int = 200) -> Exchange:
    """A raw response body and its raw request body, given as files. `url` is the request's URL (absolute, or
    path and query); without it the protocol's own path is assumed, which a protocol that keeps the model or the
    streaming flag in the URL cannot do without."""
    name = _check_protocol(protocol)
    codec = registry.get(name)
    try:
        raw_body, raw_request = body.read_bytes(), request.read_bytes()
    except OSError as exc:
        raise ImportUsageError(f"{exc.filename}: cannot read: {exc.strerror}") from exc
    if url is None:
        message = ir.Message(role="user", content=[ir.TextPart(text="probe")])
        probe = codec.encode_request(ir.Request(model="MODEL", messages=[message]))
        if "MODEL" in probe.path or b"MODEL" not in probe.body:
            raise ImportUsageError(f"{name} keeps the model in the URL: pass --url with the recorded request URL")
        url = probe.path
    http = HttpRequest.from_url("POST", url, {"content-type": "application/json"}, raw_request)
    try:
        stream = codec.is_stream_request(http)
    except DecodeError as exc:
        raise ImportFailure(f"{request}: the {name} decoder cannot read the request: {exc}") from exc
    headers = {"content-type": _media_type(raw_body, stream)}
    recorded = _Recorded(http, url, status, headers, event_boundary_chunks(raw_body) if stream else [raw_body], [])
    if stream:
        recorded.notes.append("a raw body has no chunk boundaries: it is cut at its event ends")
    return _exchange(name, recorded, file=str(body), interaction=None)
