"""Replay: cassettes served by scenario (found by decoding the request), with their recorded chunk boundaries
or re-cut adversarially. Never opens a socket; a request with no recording fails with a message naming the
nearest recordings."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx2
import yaml
from starlette.applications import Starlette
from vcr import matchers as vcr_matchers
from vcr import serialize as vcr_serialize
from vcr.cassette import Cassette
from vcr.errors import UnhandledHTTPRequestError
from vcr.record_mode import RecordMode as VcrMode
from vcr.request import Request as VcrRequest

from harness.backends import WireReply, wire_app
from harness.protocols import Codec, HttpRequest, registry
from harness.protocols.reference import as_requested
from harness.record import serializer
from harness.record.chunks import Rechunk, event_boundaries, rechunk, split_by_lengths
from harness.record.layout import cassette_path, mode_name, recorded
from harness.record.matching import StepKeys, backend_request, scenario_matcher
from harness.scenarios.model import Scenario
from harness.scenarios.resolve import split_scenario
from harness.wire.content import InflateError, decode_content

# Hop-by-hop and encoding headers describe the original transfer, not the body we serve.
_DROP_HEADERS = frozenset({"content-length", "transfer-encoding", "content-encoding", "connection"})


class ReplayMissError(httpx2.TransportError, LookupError):
    """No recording answers this request; the message names the nearest recordings. A transport error to the
    proxy's upstream client, a lookup error to the replay server (which answers it as a 400 with the text)."""


class CassetteError(ValueError):
    """A cassette that exists but cannot be read (broken YAML, not a cassette, no interaction); the message names
    it and the command that records it again."""


@dataclasses.dataclass
class _Parsed:
    """A vcrpy serializer that hands over a cassette already deserialized (by `Replayer.check`), once."""

    data: dict[str, Any] | None

    def deserialize(self, text: str) -> dict[str, Any]:
        if self.data is None:
            return serializer.deserialize(text)
        data, self.data = self.data, None
        return data

    def serialize(self, data: dict[str, Any]) -> str:
        return serializer.serialize(data)


class _AlreadyRead:
    """A vcrpy persister for a cassette `Replayer.check` already read (its `_Parsed` serializer holds it): vcrpy's
    own (`FilesystemPersister`) would stat and read the file a second time only to hand the text to a serializer
    that ignores it."""

    @staticmethod
    def load_cassette(cassette_path: str, serializer: _Parsed) -> tuple[Any, ...]:
        return tuple(vcr_serialize.deserialize("", serializer))

    @staticmethod
    def save_cassette(cassette_path: str, cassette_dict: dict[str, Any], serializer: _Parsed) -> None:
        raise NotImplementedError(f"{cassette_path}: a replayed cassette is never written")


@dataclasses.dataclass(frozen=True)
class _Answer:
    """A stored response of a cassette as it is served (`Replayer._answer`)."""

    response: dict[str, Any]
    """The stored response (vcrpy's): what the answer was worked out from."""
    status: int
    headers: dict[str, str]
    """Its headers, less those that describe the original transfer (lower-case names)."""
    body: bytes
    """Its body, decoded."""
    chunks: tuple[bytes, ...]
    """The body as its chunks."""
    recorded: HttpRequest
    """The request recorded with it: what it was the answer to."""


_Played = tuple[str, bool, Path, Cassette, dict[str, Any]]
"""(scenario, stream, cassette path, cassette, stored response) of a request a recording answers."""


class Replayer:
    """Answers backend requests from the cassettes under `root`."""

    def __init__(
        self,
        root: Path,
        scenarios: Sequence[Scenario],
        *,
        rechunk_mode: Rechunk | None = None,
        seed: int = 0,
    ) -> None:
        self.root = root
        self.scenarios = list(scenarios)
        self.rechunk_mode = rechunk_mode
        self.seed = seed
        self._cassettes: dict[Path, Cassette] = {}
        self._keys: dict[str, StepKeys] = {}
        """Each backend's requests, decoded once (for `reply` and its cassettes' matchers)."""
        self._paths: dict[tuple[str, str, bool], Path] = {}
        """Each recording's cassette path (`_path`)."""
        self._played: dict[tuple[str, str, str, bytes], _Played] = {}
        """The recording that answers each request, by backend and the request's method, URI and body (`_play`)."""
        self._answers: dict[int, _Answer] = {}
        """Each stored response's answer as served, by the response's id (`_answer`)."""
        self.served: list[tuple[str, str, bool, Path]] = []
        """(backend, scenario, stream, cassette) of every reply, in order."""
        self.issued: set[str] = set()
        """The ids of the stored responses this replayer gave (backends that store responses: `stored_responses`),
        the only ones a later request may continue."""

    def retarget(self, scenarios: Sequence[Scenario]) -> None:
        """Answer these scenarios from now on, reading their cassettes afresh (`conformance fuzz` records each
        example's answers under one id and serves them from one long-lived replay server)."""
        self.scenarios = list(scenarios)
        self._cassettes.clear()
        self._keys.clear()
        self._played.clear()
        self._answers.clear()

    def _cassette(self, backend: str, path: Path, parsed: dict[str, Any] | None = None) -> Cassette:
        """The cassette at `path`, loaded once (`parsed`: its text already read and deserialized, so it is neither
        read nor parsed twice)."""
        if path not in self._cassettes:
            codec = registry.get(backend)
            self._cassettes[path] = Cassette.load(
                path=str(path),
                serializer=serializer if parsed is None else _Parsed(parsed),
                persister=None if parsed is None else _AlreadyRead,
                match_on=(vcr_matchers.method, scenario_matcher(codec, self.scenarios, self._step_keys(backend))),
                record_mode=VcrMode.NONE,
                allow_playback_repeats=True,
            )
        return self._cassettes[path]

    def _path(self, backend: str, scenario: str, stream: bool) -> Path:
        """`cassette_path` under `root`, worked out once per recording (every run of a scenario asks again)."""
        key = (backend, scenario, stream)
        path = self._paths.get(key)
        if path is None:
            path = self._paths[key] = cassette_path(self.root, backend, scenario, stream)
        return path

    def _step_keys(self, backend: str) -> StepKeys:
        if backend not in self._keys:
            self._keys[backend] = StepKeys(registry.get(backend), self.scenarios)
        return self._keys[backend]

    def loaded(self, backend: str, scenario: str, stream: bool) -> bool:
        """Whether the recording of (backend, scenario, mode) is loaded: its file was there and read (`check`), and
        it is served from memory from now on, whatever becomes of the file."""
        return self._path(backend, scenario, stream) in self._cassettes

    def check(self, backend: str, scenario: str, stream: bool) -> None:
        """Raise CassetteError unless the recording of (backend, scenario, mode) reads as a cassette with at least
        one interaction (vcrpy would replay a broken one as empty, which reads as a backend failure)."""
        if self.loaded(backend, scenario, stream):
            return
        path = self._path(backend, scenario, stream)
        record = f"re-record it with `conformance record --backend {backend} --scenario {scenario}`"
        try:
            data = serializer.deserialize(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError, KeyError, TypeError) as exc:
            detail = " ".join(str(exc).split())[:300]
            raise CassetteError(f"unreadable cassette {path}: {type(exc).__name__}: {detail} ({record})") from None
        if not data["interactions"]:
            raise CassetteError(f"unreadable cassette {path}: it holds no interaction ({record})")
        self._cassette(backend, path, data)

    def _miss(self, backend: str, scenario: str, stream: bool, path: Path) -> ReplayMissError:
        mine = [r for r in recorded(self.root, backend) if r.scenario == scenario]
        others = [r.backend for r in recorded(self.root) if r.scenario == scenario and r.stream == stream]
        near = [
            f"{r.path.relative_to(self.root)} (recorded {mode_name(r.stream)}, asked {mode_name(stream)})" for r in mine
        ]
        if others:
            near.append(f"{scenario}.{mode_name(stream)} is recorded for: {', '.join(sorted(set(others)))}")
        hint = "; ".join(near) or f"nothing is recorded for scenario {scenario!r} on backend {backend!r}"
        return ReplayMissError(
            f"no recording for {backend}/{scenario}.{mode_name(stream)} (expected {path}); nearest: {hint}; "
            f"record it with `conformance record --backend {backend} --scenario {scenario}`"
        )

    def reply(self, backend: str, request: HttpRequest) -> WireReply:
        """The recorded answer to a backend request (relative to the backend's base URL); a request whose
        credentials do not have the shape the provider checks gets the provider's own rejection instead."""
        codec = registry.get(backend)
        rejected = rejection(codec, request) or self._unknown_id(backend, request) or _own_answer(backend, request)
        if rejected is not None:
            return rejected
        query = "&".join(f"{k}={v}" for k, v in request.query.items())
        uri = f"http://replay.invalid{request.path}" + (f"?{query}" if query else "")
        played = self._played.get((backend, request.method, uri, request.body))
        if played is None:
            played = self._play(backend, request, uri)
        scenario, stream, path, cassette, response = played
        answer = self._answer(path, cassette, response)
        body, chunks, status = answer.body, list(answer.chunks), answer.status
        if stream and status < 400:
            chunks = as_requested(codec, answer.recorded, request, chunks)
        chunks = rechunk(chunks, self.rechunk_mode, seed=self.seed)
        headers = dict(answer.headers)
        self.served.append((backend, scenario, stream, path))
        stored = registry.facts(backend).stored_responses
        if stored is not None and status < 400:
            self.issued.update(stored.issued(body))
        return WireReply(status, headers, chunks, scenario, stream)

    def _play(self, backend: str, request: HttpRequest, uri: str) -> _Played:
        """The recording that answers a request (at `uri`) and its stored response, found the way vcrpy finds it
        (its scenario's cassette, the first recorded request matching by method and scenario), and remembered for
        the request's method, URI and body: what that match is made of (`StepKeys`, `scenario_matcher`)."""
        vcr_request = VcrRequest(request.method, uri, request.body, dict(request.headers))
        scenario, stream, _ = self._step_keys(backend)(vcr_request)
        path = self._path(backend, scenario, stream)
        cassette = self._cassettes.get(path)
        if cassette is None:  # a cassette not loaded yet: is it there at all?
            if not path.is_file():
                raise self._miss(backend, scenario, stream, path)
            cassette = self._cassette(backend, path)
        try:
            response: dict[str, Any] = cassette.play_response(vcr_request)
        except UnhandledHTTPRequestError as exc:
            closest = cassette.find_requests_with_most_matches(vcr_request)
            detail = "; ".join(f"{'; '.join(str(f[1]) for f in fails)}" for _, _, fails in closest) or str(exc)
            raise ReplayMissError(f"{path}: recorded request does not match: {detail}") from exc
        played = (scenario, stream, path, cassette, response)
        self._played[(backend, request.method, uri, request.body)] = played
        return played

    def _answer(self, path: Path, cassette: Cassette, response: dict[str, Any]) -> _Answer:
        """A recorded answer as it is served, worked out once per stored response (every run of a scenario is
        answered with the same one): its body, served decoded when it was stored compressed, cut at its recorded
        chunk lengths, or at its events when vcrpy lost them, as the recorder cuts a real stream."""
        answer = self._answers.get(id(response))
        if answer is not None and answer.response is response:
            return answer
        body = response["body"]["string"] or b""
        chunks = split_by_lengths(body, response["body"].get("chunks"))
        encoding = _stored_encoding(response)
        if encoding:
            # A body stored compressed (a real recording kept as sent): served decoded, as the header that said
            # so is dropped.
            try:
                body = decode_content(body, {"content-encoding": encoding})
            except InflateError as exc:
                raise CassetteError(f"{path}: {exc}") from exc
            chunks = split_by_lengths(body, event_boundaries(body, _stored_media_type(response)))
        headers = {}
        for name, value in response["headers"].items():
            if name.lower() not in _DROP_HEADERS:
                headers[name.lower()] = ", ".join(value) if isinstance(value, list) else str(value)
        status = int(response["status"]["code"])
        answer = _Answer(response, status, headers, body, tuple(chunks), _recorded_request(cassette, response))
        self._answers[id(response)] = answer
        return answer

    def _unknown_id(self, backend: str, request: HttpRequest) -> WireReply | None:
        """The provider's error for a request that continues a stored response this replayer never gave (a
        backend that stores responses answers only ids it issued); None when it continues none, or a known one."""
        stored = registry.facts(backend).stored_responses
        wanted = stored.continued(request) if stored is not None else None
        if stored is None or wanted is None or wanted in self.issued:
            return None
        out = stored.not_found(wanted)
        named, _ = split_scenario(request.path)
        stream = registry.get(backend).is_stream_request(request)
        return WireReply(out.status, dict(out.headers), [out.body], named or "", stream)


def _own_answer(backend: str, request: HttpRequest) -> WireReply | None:
    """The backend's answer to a route its protocol answers by itself, from no recording (the Responses API's
    `/v1/responses/compact`: the reference compaction, lossless, that the protocol's decoder expands again);
    None for any other route. Named for no scenario: a compaction is no call of the run's scenario."""
    frontend = registry.facts(backend).frontend
    _, path = split_scenario(request.path)
    for route in frontend.routes if frontend is not None else ():
        if route.answer is not None and route.path == path:
            out = route.answer(dataclasses.replace(request, path=path))
            return WireReply(out.status, dict(out.headers), [out.body], "", False)
    return None


def _stored_encoding(response: dict[str, Any]) -> str:
    """The stored answer's `Content-Encoding` (lower case; "" when none)."""
    for name, value in response["headers"].items():
        if name.lower() == "content-encoding":
            return (", ".join(value) if isinstance(value, list) else str(value)).lower()
    return ""


def _stored_media_type(response: dict[str, Any]) -> str | None:
    """The stored answer's `Content-Type` (None when none)."""
    for name, value in response["headers"].items():
        if name.lower() == "content-type":
            return ", ".join(value) if isinstance(value, list) else str(value)
    return None


def _recorded_request(cassette: Cassette, response: dict[str, Any]) -> HttpRequest:
    """The request recorded with `response`: what the recorded answer was the answer to."""
    stored = next(request for request, played in cassette.data if played is response)
    body = stored.body if isinstance(stored.body, bytes) else (stored.body or "").encode("utf-8")
    return HttpRequest.from_url(stored.method, stored.uri, dict(stored.headers), body)


def rejection(codec: Codec, request: HttpRequest) -> WireReply | None:
    """The provider's error answer to a request whose credentials have the wrong shape (the protocol's facts say
    what to check, `Secrets.check`: Bedrock's SigV4 signature); None when there is nothing wrong with them."""
    check = registry.facts(codec.name).secrets.check
    error = check(request) if check is not None else None
    if error is None:
        return None
    out = codec.encode_error(error)
    return WireReply(out.status, dict(out.headers), [out.body], "", codec.is_stream_request(request))


def create_replay_app(replayer: Replayer, backends: Sequence[str] | None = None, *, pace: float = 0.0) -> Starlette:
    """The cassettes served as provider endpoints, each backend under `/<backend>/...`, chunk boundaries kept (and
    `pace` seconds apart when not 0)."""
    names = list(backends) if backends is not None else sorted({r.backend for r in recorded(replayer.root)})
    return wire_app(names, replayer.reply, replayer.scenarios, pace=pace)


class _ChunkStream(httpx2.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


class ReplayTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport answering `http://<any>/<backend>/...` from a Replayer: what the proxy's upstream
    client uses in-process. Chunk boundaries reach the proxy exactly as recorded (or re-cut)."""

    def __init__(self, replayer: Replayer) -> None:
        self.replayer = replayer

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Serve one upstream request from the cassettes."""
        backend, http = backend_request(request, await request.aread())
        reply = self.replayer.reply(backend, http)
        return httpx2.Response(reply.status, headers=reply.headers, stream=_ChunkStream(reply.chunks))
