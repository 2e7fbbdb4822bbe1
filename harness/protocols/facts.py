"""What the rest of the harness needs to know about a protocol besides its codec: its facts.

A protocol package declares one `ProtocolFacts` next to its codec (in its own `facts.py`) and registers both
together, `registry.register(CODEC, facts=FACTS)`. The proxy, the recorder, the reference backends, the runner
and the gateway configs read these through `registry.facts(name)`, never by naming a protocol. A provider
profile derives its facts from its family's and overrides what differs (`FAMILY.derive(real=...)`).

Every field is required, so a declaration says each fact, or says `None` (or empty) where one does not apply:
a backend-only profile serves no frontend routes; a local server has no key patterns. The exceptions are the
few facts nearly every protocol shares, which have a default: `stream_only`, `tool_results_as_objects`,
`text_runs_joined`, a key's shape and its check, and path placeholders of a real endpoint.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from harness import ir
from harness.ir import IRError
from harness.wire.http import HttpRequest, HttpResponse


class RequestShapeError(ValueError):
    """The request does not say which model it is for (or is not the shape its route expects)."""


def _as_is(model: str) -> str:
    return model


def _body_object(request: HttpRequest) -> dict[str, Any]:
    try:
        value = json.loads(request.body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RequestShapeError(f"request body is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise RequestShapeError(f"request body is a JSON {type(value).__name__}, expected an object")
    return value


@dataclass(frozen=True)
class ModelInBody:
    """The model name is a string field of the JSON request body (`{"model": "..."}`)."""

    field: str = "model"
    """Name of the body field."""

    def model_of(self, request: HttpRequest) -> str:
        """The model name the request asks for."""
        model = _body_object(request).get(self.field)
        if not isinstance(model, str) or not model:
            raise RequestShapeError(f"request body has no {self.field!r} string")
        return model

    def with_model(self, request: HttpRequest, model: str) -> HttpRequest:
        """The same request for another model name (re-serialized only because a rename is configured)."""
        body = _body_object(request)
        body[self.field] = model
        return dataclasses.replace(
            request, body=json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        )

    def label(self, route_path: str, request_path: str) -> str:
        """The route label of a trace: the route's own path (it names no model)."""
        return f"POST {route_path}"


@dataclass(frozen=True)
class ModelInPath:
    """The model name is a segment of the URL path (`/v1beta/models/{model}:generateContent`)."""

    pattern: re.Pattern[str]
    """Matches a whole request path; group `model` is the model, group `action` (if any) the method called."""
    rewrite: str
    """The path for another model, a format string over the pattern's groups (`/{version}/models/{model}:{action}`)."""
    label_format: str
    """The route label, a format string over the groups, with the model left as a placeholder."""
    shape: str
    """The path form in words, for errors (`/v1beta/models/MODEL:ACTION`)."""
    actions: tuple[str, ...] = ()
    """Allowed values of the `action` group (empty: any)."""
    quote: Callable[[str], str] = _as_is
    """How a model name is written into a rewritten path (Bedrock percent-encodes an id's `:` and `/`; a
    Workers AI model keeps its slashes): the matched path is already percent-decoded."""

    def _match(self, request: HttpRequest) -> re.Match[str]:
        match = self.pattern.match(request.path)
        if match is None:
            raise RequestShapeError(f"path {request.path!r} is not {self.shape}")
        action = match.groupdict().get("action")
        if self.actions and action not in self.actions:
            raise RequestShapeError(f"action {action!r} is not one of {', '.join(self.actions)}")
        return match

    def model_of(self, request: HttpRequest) -> str:
        """The model name the request asks for."""
        return self._match(request)["model"]

    def with_model(self, request: HttpRequest, model: str) -> HttpRequest:
        """The same request for another model name: the path rewritten, the body unchanged."""
        groups = {**self._match(request).groupdict(), "model": self.quote(model)}
        return dataclasses.replace(request, path=self.rewrite.format(**groups))

    def label(self, route_path: str, request_path: str) -> str:
        """The route label of a trace: the request's path with the model as a placeholder (so labels group)."""
        match = self.pattern.match(request_path)
        if match is None:
            return f"POST {route_path}"
        return self.label_format.format(**match.groupdict())


ModelLocation = ModelInBody | ModelInPath
"""Where a frontend request names its model."""


@dataclass(frozen=True)
class Route:
    """One HTTP route a protocol serves as a proxy frontend."""

    path: str
    """Starlette path template (`/v1/chat/completions`, `/v1beta/models/{target}`)."""
    kind: Literal["generate", "count_tokens"] = "generate"
    """`generate`: a generation call; `count_tokens`: a token count the proxy answers locally in translate mode."""
    answer: Callable[[HttpRequest], HttpResponse] | None = None
    """The protocol's own answer, given by the proxy in translate mode instead of calling upstream (the
    Responses API's `/v1/responses/compact`); None for a route that goes upstream."""


def codec_media_type(request: HttpRequest) -> str | None:
    """The default stream media type rule: the codec's own (`Codec.stream_media_type`)."""
    return None


def no_server_state(request: ir.Request) -> tuple[str, ...]:
    """The default server-state rule: no request of this protocol relies on state its server keeps."""
    return ()


@dataclass(frozen=True)
class WireRule:
    """Something the real provider's answers always do that its official SDK does not enforce. A proxy serving this
    protocol that breaks it gets a wire deviation: a warning naming the rule (failing the gate only under
    `--strict`)."""

    name: str
    """`<protocol>.<rule>`, as reports name it."""
    source: str
    """The provider documentation or real recording the rule rests on."""
    check: Callable[[bytes, bool], list[str]]
    """Findings in one answer's raw body (`bytes`, streamed or not: `bool`), each in words; empty when kept."""
    undocumented_fields: bool = False
    """It judges the answer's undocumented fields by its own list, so the spec's warnings about them are left out
    (`answer.spec_warnings`): one finding is reported once."""
    defect: bool = False
    """A break is a proxy bug judged by `frontend_wire`, not a deviation: the codec's decoder reads past it as a
    lenient client does (a real provider breaks it too), and clients that rely on the rule misread the answer."""

    def findings(self, body: bytes, stream: bool) -> list[str]:
        """`check`'s findings, one finding made at several numbered places of the stream said once (`collapsed`)."""
        return collapsed(self.check(body, stream))


_AT_PLACE = re.compile(r"(chunk|event) (\d+) (.+)", re.S)
"""A finding made at one numbered place of a stream: `chunk 3 has provider`."""


def collapsed(findings: Sequence[str]) -> list[str]:
    """The same finding at several numbered places of one answer as one, where the first was: `chunk 0 has
    provider`, `chunk 1 has provider`, ... -> `chunks 0-547 (each) has provider`. A gateway that adds a field to
    every chunk (MLflow's `provider`) otherwise filled a long stream's case with hundreds of lines saying one thing.
    """
    places: dict[tuple[str, str], list[int]] = {}
    order: list[str | tuple[str, str]] = []
    for finding in findings:
        match = _AT_PLACE.fullmatch(finding)
        if match is None:
            order.append(finding)
            continue
        key = (match[1], match[3])
        if key not in places:
            places[key] = []
            order.append(key)
        places[key].append(int(match[2]))
    return [item if isinstance(item, str) else _at_places(*item, places[item]) for item in order]


def _at_places(place: str, finding: str, numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"{place} {numbers[0]} {finding}"
    runs: list[list[int]] = []
    for number in sorted(set(numbers)):
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    spans = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
    return f"{place}s {spans} (each) {finding}"


class WebSocketSession(Protocol):
    """One WebSocket connection of a frontend's WebSocket mode, with the state the protocol keeps per connection."""

    def begin(self, message: str) -> tuple[bytes | None, str | None]:
        """A client message -> (the body of the streamed POST it stands for, None) or (None, an error message)."""

    def relay(self, data: str) -> str:
        """One event of the turn's stream (an SSE event's data) as this mode sends it, taken into the state."""

    def failed(self, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> str:
        """The error message for a turn whose POST was answered with `status`, the error `body` and `headers`."""

    @property
    def finished(self) -> bool:
        """Whether the turn under way has sent its terminal event (a stream that ends without one was cut)."""


@dataclass(frozen=True)
class Frontend:
    """How the proxy serves this protocol to its clients."""

    routes: tuple[Route, ...]
    """The POST routes, each answered by this protocol's codec."""
    model: ModelLocation
    """Where the model name sits in a request (the proxy routes by it before decoding anything)."""
    stream_media_type: Callable[[HttpRequest], str | None] = codec_media_type
    """Content-Type of a translated stream for this request, when it is not the codec's own (None: the codec's)."""
    server_state: Callable[[ir.Request], Sequence[str]] = no_server_state
    """The features of a decoded request that rely on state only a server of this protocol keeps (a stored
    response or conversation it refers to by id). Translate mode answers such a request with a 400 naming them
    when the upstream speaks another protocol family, rather than send it without the history it refers to."""
    wire_rules: tuple[WireRule, ...] = ()
    """What the real provider's successful answers always do beyond what the codec needs to read them (wire
    deviations of a proxy serving this frontend are judged against these)."""
    opaque_signatures: bool = False
    """A thinking block's signature reaches this frontend's client as an opaque value it only passes back
    (Responses' `encrypted_content`): what a proxy puts there is its own business, so the diff compares it by
    presence, not value."""
    concurrent_blocks: bool = False
    """Its stream may keep several output blocks open at once (each event names its item: Responses'
    `output_index` and `item_id`), so the diff compares each block's events, not how blocks interleave."""
    reads_retry_after: bool = False
    """Its official SDK waits as an error's `Retry-After` (or `retry-after-ms`) header says before retrying, so a
    proxy serving this frontend passes the upstream's on (the openai and anthropic SDKs; google-genai backs off on
    its own, and Gemini's own 429 carries no such header)."""
    request_id_header: str | None = None
    """The answer header its provider names each request in (Anthropic's `request-id`): the SDK shows it
    (`response._request_id`) and support asks for it, so a proxy serving this frontend sends one too. None: the
    provider sends none a client reads."""
    websocket: Callable[[], WebSocketSession] | None = None
    """Its WebSocket mode on the generation routes: a new session per connection, which turns each client message
    into the body of a streamed POST and each of that stream's events into a message (the Responses API's
    WebSocket mode); None: HTTP only."""


@dataclass(frozen=True)
class ListedModel:
    """One model as the proxy lists it."""

    name: str
    """The frontend model name."""
    mode: str
    """How the proxy serves it (`translate` or `passthrough`)."""


@dataclass(frozen=True)
class ModelList:
    """How this protocol's clients list models, and the shape of the answer."""

    paths: tuple[str, ...]
    """GET paths that list every model in this shape."""
    item_paths: tuple[str, ...]
    """GET paths (with a `{model_id}` parameter) that describe one model."""
    entry: Callable[[ListedModel], dict[str, Any]]
    """One model in this protocol's shape."""
    envelope: Callable[[list[dict[str, Any]]], dict[str, Any]]
    """The list body around the entries."""
    claims: Callable[[Mapping[str, str], Mapping[str, str]], bool] | None
    """On a path several protocols list at (`/v1/models`): whether a request's headers and query mark it as this
    protocol's client. None: this protocol is the default there."""


@dataclass(frozen=True)
class Sdk:
    """How the harness drives this protocol's official SDK."""

    driver: str
    """Module of the SDK driver (defines `DRIVER`), imported on first use: SDKs are slow to import."""
    package: str
    """Distribution name of the SDK, for version reports."""
    http_client: Literal["httpx2", "httpx"]
    """The HTTP client library the SDK is built on; the runner hands it a client of that kind."""
    capabilities: frozenset[ir.Capability]
    """What the SDK can ask for and surface (its driver's `capabilities` are these); a scenario requiring more is
    unsupported with this client. Declared here, with the facts, so that planning a matrix imports no SDK."""
    socket_capabilities: frozenset[ir.Capability] = frozenset()
    """The same over the frontend's WebSocket mode (`Frontend.websocket`); empty: the SDK has no such mode."""


@dataclass(frozen=True)
class RealEndpoint:
    """Where and how to reach the real provider, to record from it."""

    base_url: str
    """API root the codec's paths are appended to."""
    key_env: tuple[str, ...]
    """Environment variables holding the key, in order of preference (empty: no key, e.g. a local server)."""
    model: str
    """Model recorded when none is given."""
    host_env: str | None = None
    """Environment variable that overrides the base URL (a local server's host variable)."""
    placeholders: tuple[tuple[str, str], ...] = ()
    """(placeholder, environment variable) pairs: a value the codec writes into its request paths in place of an
    account's own (Cloudflare's account id), which the recorder replaces with the variable's value when it calls
    the real provider and puts back in everything it stores."""


@dataclass(frozen=True)
class Secrets:
    """What of this protocol's traffic is a secret or identifies an account; scrubbed before anything is stored."""

    headers: frozenset[str] = frozenset()
    """Header names (lower case) carrying keys or account ids."""
    header_prefixes: tuple[str, ...] = ()
    """Header name prefixes (lower case) of such headers."""
    key_patterns: tuple[str, ...] = ()
    """Regular expressions matching the provider's key shapes, so that a leaked key is found anywhere."""
    key_shape: str = "{key}"
    """How the key string `Codec.with_auth` takes is written around one opaque secret (Bedrock:
    `ACCESS_KEY_ID:SECRET`, which it signs with): the harness plants its test key in this shape, so the proxy
    authenticates upstream the way it would with a real key."""
    credentials: frozenset[str] = frozenset()
    """Header names (lower case) its clients authenticate with besides `authorization` (`x-api-key`): a proxy that
    holds its own upstream key never forwards a client's."""
    credential_query: frozenset[str] = frozenset()
    """Query parameters its clients may authenticate with (Gemini's `key`), never forwarded either."""
    check: Callable[[HttpRequest], IRError | None] | None = None
    """The error a replayed upstream answers a request whose credentials have the wrong shape with, checked
    without real keys (Bedrock: a SigV4 signature's algorithm, scope and signed headers); None: it looks right,
    or the protocol has nothing to check beyond the key's presence."""


@dataclass(frozen=True)
class TypicalChunking:
    """How the provider cuts a stream when a scenario does not say (measured against real recordings)."""

    text_chunk_size: int | None = None
    """Characters per text/thinking delta (None: one delta per part)."""
    arguments_chunk_size: int | None = None
    """Characters per tool-argument fragment (None: whole arguments in one piece)."""
    transport_chunk_bytes: int | None = None
    """Bytes per transport chunk (None: one chunk per encoded event)."""


@dataclass(frozen=True)
class WireSpec:
    """One vendored spec document of the protocol's wire (`<package>/<document>.json`, with its PROVENANCE.json),
    read by `harness.protocols.wire_schema`."""

    package: str
    """Dotted name of the package holding the document (the protocol's own `spec` package)."""
    document: str
    """File name without `.json`."""
    strict_requests: bool = True
    """Whether an unknown request field is a violation where the document says the API rejects them; False for a
    server that ignores what it does not know (the OpenAI-compatible ones): it only warns."""


@dataclass(frozen=True)
class HeaderRule:
    """A request header that matters to the provider, compared between what a client of this protocol sends and
    what a proxy sends upstream (`harness/checks/upstream.py`)."""

    name: str
    """Lower-case header name."""
    role: str
    """What it says: `version`, `beta`, `content type`, ..."""
    value: str | None = None
    """The value it must have when sent (a prefix: `application/json` matches `application/json; charset=utf-8`);
    None: any value (a version pinned by the client's SDK release, say)."""
    required: bool = False
    """Every request carries it (any value, or `value`): a proxy that leaves it out sends a request the provider
    refuses or reads with another default."""
    client_only: bool = False
    """Sent only when the client asked for it (a beta flag): a proxy that adds it on its own changes what the
    provider does for every request."""
    read: bool = True
    """Whether the provider reads it; False: a wrong value is a warning, since the provider parses the body
    whatever it says (Ollama's Go server binds any body as JSON)."""


@dataclass(frozen=True)
class UpstreamRequest:
    """What the provider's API needs of a request beyond what the codec reads: the headers that matter, and the
    top-level body fields it documents (with whether it rejects any other)."""

    headers: tuple[HeaderRule, ...] = ()
    fields: frozenset[str] | None = None
    """The top-level body fields the API reference documents; None: not declared (nothing is judged)."""
    rejects_unknown_fields: bool = False
    """Whether the API answers 400 to a field it does not know (an unknown field is then a proxy bug, else a
    deviation)."""
    source: str = ""
    """The API reference or error the table rests on."""
    always: frozenset[str] = frozenset()
    """Fields every request carries, empty or not (swink's `system: ""` means no system prompt): never judged as
    sent empty."""


@dataclass(frozen=True)
class StoredResponses:
    """A backend that keeps the responses it gives, so a later request may continue one by its id and carry only
    its new input (a stored-response chain). The replay server answers such a request as the provider does: from
    the call it stored, or with the provider's error for an id it never issued."""

    continued: Callable[[HttpRequest], str | None]
    """The id of the stored response a request continues; None: it continues none."""
    issued: Callable[[bytes], Sequence[str]]
    """The ids of the responses an answer's body (whole or streamed) gives."""
    not_found: Callable[[str], HttpResponse]
    """The provider's answer to a request that continues an id it does not hold."""


@dataclass(frozen=True, kw_only=True)
class ProtocolFacts:
    """Everything outside the codec that the harness knows about one protocol or profile."""

    frontend: Frontend | None
    """The routes the proxy serves it on and where the model sits; None: not a frontend (a backend-only profile)."""
    model_list: ModelList | None
    """How its clients list models; None: the proxy serves no list in its shape."""
    sdk: Sdk | None
    """Its official SDK; None: its baseline is driven by its family's SDK (`Codec.family`)."""
    real: RealEndpoint | None
    """The real provider to record from; None: there is none to call."""
    upstream_model: str
    """A realistic model name of this backend: what the matrix's routes send upstream and reference recordings
    carry. Gateways choose behaviour by model name, so a made-up one (a scenario id) takes their unknown-model
    paths and gates a configuration nobody runs."""
    secrets: Secrets
    """Headers and key shapes to scrub."""
    chunking: TypicalChunking
    """Typical stream chunking of its reference backend."""
    stream_only: bool = False
    """Whether its only answer is a stream (swink's `/v1/stream`): its non-streamed cases cannot run, as a
    frontend or as a backend, and are planned as unsupported. The one fact with a default: nearly every
    protocol has both forms."""
    tool_results_as_objects: bool = False
    """Its wire carries a tool result only as a JSON object (Gemini's `functionResponse.response`), which the codec
    reads as that object's compact JSON text: a gateway must wrap a text result in one (the request diff accepts a
    one-key wrapper of the exact text, and the same object re-serialized). False for text-carrying wires."""
    text_runs_joined: bool = False
    """Its answers have no text block boundaries (Chat Completions' one content string, a Gemini, Ollama or Workers
    AI run of text): adjacent text blocks come back as one, so the diff compares both runs with adjacent text
    blocks joined wherever it is on the way (`diff.normalize.text_runs_joined`). False for block wires."""
    upstream_request: UpstreamRequest | None = None
    """What its API needs of a request beyond the codec (headers, documented fields); None: not declared."""

    gateway_upstream: bool = True
    """Whether a gateway config can name it as an upstream the way it names its family (a base URL and a key);
    False for a backend whose auth no such config holds (Vertex AI's OAuth access token)."""
    wire_specs: tuple[WireSpec, ...] = ()
    """The provider's own published specs of its wire (answers, stream events, errors, requests), the governing one
    first; a profile inherits its family's. Empty: none is vendored (`wire_schema.has_spec` is False)."""
    stored_responses: StoredResponses | None = None
    """How it keeps the responses it gives, for a stored-response chain; None: it keeps none (every request carries
    the whole conversation)."""

    def derive(self, **changes: Any) -> ProtocolFacts:
        """These facts with some replaced: how a profile inherits from its family and overrides."""
        return dataclasses.replace(self, **changes)
