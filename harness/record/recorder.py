"""Recording with vcrpy: one scenario's request sent to a source (a reference backend, or the real provider)
while vcrpy records it into the readable cassette, with chunk boundaries and metadata added.

vcrpy buffers a streamed body while recording, so the boundaries come from the source itself: a reference
backend reports the chunks it produced; for a real provider the SSE event / NDJSON line boundaries are stored.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx2
import vcr
from vcr import matchers as vcr_matchers

from harness import __version__
from harness.backends import WireReply, respond
from harness.protocols import Codec, HttpRequest, registry
from harness.record import serializer
from harness.record.chunks import event_boundaries
from harness.record.layout import cassette_path, mode_name
from harness.record.matching import backend_request, scenario_matcher
from harness.record.modes import RecordMode
from harness.record.scrub import scrub_body, scrub_headers, scrub_url
from harness.scenarios.model import Scenario
from harness.scenarios.resolve import scenario_path

RECORD_TIMEOUT = httpx2.Timeout(connect=10.0, read=120.0, write=30.0, pool=10.0)
REFERENCE_BASE = "http://reference.invalid"


@dataclass
class Source:
    """Where recordings come from."""

    kind: Literal["reference", "real"]
    """A reference backend (no keys, in-process) or the real provider over the network."""
    base_url: str = REFERENCE_BASE
    """Provider base URL (real), or the placeholder the reference transport answers on."""
    api_key: str | None = None
    """Key for the real provider; never stored."""
    model: str | None = None
    """Model name to send; None: the backend's realistic model (its `upstream_model` fact)."""
    transport: httpx2.BaseTransport | None = None
    """Transport to use; None builds the default for the kind."""
    replies: list[WireReply] = field(default_factory=list)
    """Replies the source produced, with their chunk boundaries (filled while recording by a reference backend,
    or by an imported recording replayed into the recorder)."""
    placeholders: dict[str, str] = field(default_factory=dict, repr=False)
    """Placeholder -> the account's real value, for request paths (real only; `RealEndpoint.placeholders`): the
    request carries the real value, everything stored the placeholder."""
    origin: dict[str, Any] | None = None
    """Where a recording made elsewhere came from (`conformance import`: file, interaction, URL), kept in the
    cassette's metadata as `origin`."""


def reference_source(scenarios: Sequence[Scenario]) -> Source:
    """A source answering with the reference backends in-process, through an httpx2 MockTransport."""
    source = Source(kind="reference")

    def handler(request: httpx2.Request) -> httpx2.Response:
        backend, http = backend_request(request, request.read())
        reply = respond(registry.get(backend), http, scenarios)
        source.replies.append(reply)
        return httpx2.Response(reply.status, headers=reply.headers, content=reply.body)

    source.transport = httpx2.MockTransport(handler)
    return source


def _filled(path: str, placeholders: dict[str, str]) -> str:
    for placeholder, value in placeholders.items():
        path = path.replace(placeholder, value)
    return path


def _scrubber(source: Source) -> Any:
    def before_record_request(request: Any) -> Any:
        request.headers = scrub_headers(dict(request.headers))
        request.uri = scrub_url(request.uri)
        for placeholder, value in source.placeholders.items():
            request.uri = request.uri.replace(value, placeholder)
        if request.body:
            request.body = scrub_body(request.body if isinstance(request.body, bytes) else request.body.encode())
        return request

    return before_record_request


def _content_type(headers: dict[str, Any]) -> str | None:
    for name, value in headers.items():
        if name.lower() == "content-type":
            return str(value[0] if isinstance(value, list) and value else value)
    return None


def _attach(source: Source) -> Any:
    def before_record_response(response: dict[str, Any]) -> dict[str, Any]:
        response["headers"] = scrub_headers(response["headers"])
        body = response["body"]["string"] or b""
        # The source's own boundaries (a reference backend's, an imported recording's), else its event ends.
        if source.replies:
            lengths = [len(c) for c in source.replies[-1].chunks]
        else:
            lengths = event_boundaries(body, _content_type(response["headers"]))
        response["body"]["chunks"] = lengths if sum(lengths) == len(body) else [len(body)]
        return response

    return before_record_response


def record_one(
    backend: str,
    scenario: Scenario,
    stream: bool,
    *,
    scenarios: Sequence[Scenario],
    root: Path,
    source: Source,
    mode: RecordMode = RecordMode.ONCE,
) -> Path:
    """Record (or, per `mode`, keep) the cassette of one (backend, scenario, streaming mode); returns its path."""
    codec = registry.get(backend)
    model = source.model or registry.facts(backend).upstream_model
    # A stored-response chain records each call, in order, as a client without server state makes it.
    requests = [scenario.request_for(model, stream=stream, step=n) for n in range(len(scenario.steps) + 1)]
    # A reference recording's URL names its scenario (as every route of the matrix does), so replay finds it by
    # URL; a real provider's URL is its own, and replay finds its scenario by content.
    if source.kind == "reference":
        prefix = f"{source.base_url}/{backend}{scenario_path(scenario.id)}"
    else:
        prefix = source.base_url.rstrip("/")
    path = cassette_path(root, backend, scenario.id, stream)
    if mode is RecordMode.REWRITE:
        path.unlink(missing_ok=True)
    recorder = vcr.VCR(
        record_mode=mode.vcr_mode,
        match_on=["method", "scenario"],
        before_record_request=_scrubber(source),
        before_record_response=_attach(source),
        decode_compressed_response=False,
    )
    recorder.register_serializer("harness", serializer)
    recorder.register_matcher("scenario", scenario_matcher(codec, scenarios))
    recorder.register_matcher("method", vcr_matchers.method)
    with recorder.use_cassette(str(path), serializer="harness") as cassette:
        for key, value in _metadata(backend, scenario, stream, source, model).items():
            cassette.get_metadata(key, value)
        transport = source.transport or httpx2.HTTPTransport()
        with httpx2.Client(transport=transport, timeout=RECORD_TIMEOUT) as client:
            for request in requests:
                http = _prepared(codec, codec.encode_request(request), source, prefix)
                url = prefix + http.path
                headers = {k: v for k, v in http.headers.items() if k != "host"} | {"accept-encoding": "identity"}
                response = client.request(http.method, url, params=http.query, headers=headers, content=http.body)
                response.read()
    return path


def _prepared(codec: Codec, http: HttpRequest, source: Source, prefix: str) -> HttpRequest:
    """The encoded request with the account's path values filled in and signed for its host (real sources)."""
    if source.placeholders:
        http = dataclasses.replace(http, path=_filled(http.path, source.placeholders))
    if source.api_key:
        # A signature may cover the host (SigV4): sign for the one the request goes to.
        host = httpx2.URL(prefix).netloc.decode("ascii")
        http = codec.with_auth(dataclasses.replace(http, headers={**http.headers, "host": host}), source.api_key)
    return http


def _metadata(backend: str, scenario: Scenario, stream: bool, source: Source, model: str) -> dict[str, Any]:
    origin = {"origin": source.origin} if source.origin else {}
    return {
        "source": source.kind,
        "backend": backend,
        "scenario": scenario.id,
        "mode": mode_name(stream),
        "model": model,
        "recorded_at": dt.date.today().isoformat(),
        "harness_version": __version__,
        **origin,
    }
