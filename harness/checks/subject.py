"""What a check looks at: one run, as plain data the runner takes from the proxy's tap and the SDK driver."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness import ir
from harness.checks.memo import Memo
from harness.protocols import registry

if TYPE_CHECKING:
    from harness.drivers.base import SdkResult
    from harness.scenarios.model import Scenario


def decode_stream(protocol: str, chunks: Iterable[bytes]) -> tuple[list[ir.StreamEvent], str | None]:
    """A stream decoded with `protocol`'s own decoder: the events, and why the decoder stopped (None: it read the
    whole stream)."""
    decoder = registry.get(protocol).stream_decoder()
    events: list[ir.StreamEvent] = []
    try:
        for chunk in chunks:
            events += decoder.feed(chunk)
        events += decoder.close()
    except ValueError as exc:  # DecodeError or FramingError: both carry the byte offset
        return events, str(exc)
    return events, None


STREAM_MEMO = 512
"""Decoded client streams kept (per process; forgotten all at once when full). A stream the proxy sends again
byte for byte, cut at the same places (a pass-through, an answer two backends' recordings translate to alike:
about a third of a matrix's translated streams), is decoded once."""
_decoded: Memo[tuple[str, bytes], tuple[tuple[ir.StreamEvent, ...], str | None]] = Memo(STREAM_MEMO)


def chunks_digest(chunks: Sequence[bytes]) -> bytes:
    """A digest of the chunks and where each begins: equal only for the same bytes cut at the same places."""
    digest = hashlib.blake2b(digest_size=20)
    for chunk in chunks:
        digest.update(len(chunk).to_bytes(8, "little"))
        digest.update(chunk)
    return digest.digest()


def decoded_stream(
    protocol: str, chunks: Sequence[bytes], digest: bytes | None = None
) -> tuple[list[ir.StreamEvent], str | None]:
    """`decode_stream`, remembered by the exact chunks (`digest`: their `chunks_digest`, when known): a decoder's
    result depends on nothing else, and the events are frozen IR models (each caller gets a list of its own).

    The chunks are decoded joined, in one piece: a stream decodes the same in any chunking (the codec contract,
    `tests/protocols/test_contract.py`), and one piece is read in far fewer steps (a third less time on a
    matrix's answers). A stream that does not decode is decoded again chunk by chunk, so why it stopped is said
    as a client reading those chunks meets it."""

    def decode() -> tuple[tuple[ir.StreamEvent, ...], str | None]:
        events, error = decode_stream(protocol, [b"".join(chunks)] if len(chunks) > 1 else chunks)
        if error is not None and len(chunks) > 1:
            events, error = decode_stream(protocol, chunks)
        return tuple(events), error

    found = _decoded.get((protocol, digest if digest is not None else chunks_digest(chunks)), decode)
    return list(found[0]), found[1]


@dataclass(frozen=True)
class Subject:
    """One run: who spoke to whom, what the SDK saw, and what crossed the wire on both sides."""

    role: str
    """`baseline_frontend`, `baseline_backend` or `translated`."""
    client: str
    """The frontend protocol (the SDK's)."""
    backend: str
    """The backend protocol or profile."""
    stream: bool
    scenario: Scenario
    result: SdkResult
    """What the SDK saw."""
    capabilities: frozenset[ir.Capability] | None = None
    """What the client's SDK, its protocol and the backend's all carry (None: everything)."""
    frontend_request: ir.Request | None = None
    """The client's request as the proxy decoded it."""
    upstream_request: ir.Request | None = None
    """The request sent upstream, decoded back (an exact system-prompt fold undone, as the diff does)."""
    upstream_body: bytes = b""
    """The raw body sent upstream."""
    upstream_headers: Mapping[str, str] = field(default_factory=dict)
    """The headers sent upstream, credentials left out."""
    frontend_headers: Mapping[str, str] = field(default_factory=dict)
    """The client's request headers, credentials left out."""
    frontend_response_headers: Mapping[str, str] = field(default_factory=dict)
    """The headers of the answer the client received, credentials left out."""
    frontend_status: int | None = None
    frontend_chunks: tuple[bytes, ...] = ()
    """What the client received, with its chunk boundaries."""
    truncated: bool = False
    """Whether the tap cut the recorded bytes (nothing about the whole answer can be judged)."""
    upstream_text_chunks: tuple[int, ...] = ()
    frontend_text_chunks: tuple[int, ...] = ()

    @functools.cached_property
    def client_stream(self) -> tuple[list[ir.StreamEvent], str | None]:
        """The stream the client received, decoded once for every check with its protocol's own decoder: the events,
        and why the decoder stopped (None: it read the whole stream)."""
        return decoded_stream(self.client, self.frontend_chunks, self.frontend_digest)

    @functools.cached_property
    def frontend_digest(self) -> bytes:
        """A digest of what the client received and where each chunk began (`chunks_digest`), found once for
        every check: the key under which the checks of the answer alone remember what they found."""
        return chunks_digest(self.frontend_chunks)

    @functools.cached_property
    def frontend_body(self) -> bytes:
        """What the client received, whole (its chunks joined once for every check)."""
        return b"".join(self.frontend_chunks)

    @functools.cached_property
    def upstream_json(self) -> tuple[bool, Any]:
        """The body sent upstream parsed once for every check (which only read it): whether it is JSON (False for
        no body, or bytes that are no JSON or no UTF-8), and its value."""
        if not self.upstream_body:
            return False, None
        try:
            return True, json.loads(self.upstream_body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return False, None

    def answer_header(self, name: str) -> str | None:
        """A header of the answer the client received, by its name in any case; None when absent."""
        wanted = name.lower()
        return next((v for k, v in self.frontend_response_headers.items() if k.lower() == wanted), None)
