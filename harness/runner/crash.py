"""Who crashed when a run raised: the client SDK on the bytes it received, or the harness's own code.

A driver catches its SDK's API error classes and reports them as an `SdkResult`; anything else that escapes a
driver is decided here from the traceback. Its innermost frame that belongs either to the SDK's own package or
to the harness says whose code raised (frames of the libraries both call, pydantic, json, httpx, are skipped): an
SDK frame means the client crashed on what it was sent, a harness frame (the driver, the rig) is a harness
bug, except the driver's `ImpossibleStream` (the SDK delivered events no client can build a message from). The
event it choked on is found by decoding the client's wire with the frontend protocol's codec.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Sequence
from types import TracebackType

import httpx2

from harness import ir
from harness.checks import CLIENT_CRASH
from harness.checks.subject import decoded_stream
from harness.drivers.event_builder import ImpossibleStream
from harness.protocols import registry
from harness.trace.model import Check

HARNESS = "harness"
EXCERPT = 300
"""Characters of the event the client choked on kept in the check."""


def reraise_interrupt(exc: BaseException) -> None:
    """Raise the Ctrl-C or SIGTERM that `exc` was made from, if any: an interrupt that lands while a module is
    imported or a class is built comes out wrapped (Python 3.11: "Error calling __set_name__"), and must stop the
    run, not become a harness error on one case."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            raise cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__


@functools.cache
def sdk_modules(protocol: str) -> tuple[str, ...]:
    """Top-level import names of the distribution of `protocol`'s SDK (`google-genai` -> `google`)."""
    package = registry.sdk(protocol).package
    mapping = importlib.metadata.packages_distributions()
    names = tuple(sorted(top for top, dists in mapping.items() if package in dists))
    return names or (package.replace("-", "_"),)


def _owner(module: str, sdk: tuple[str, ...]) -> str | None:
    top = module.split(".", 1)[0]
    if top == HARNESS:
        return HARNESS
    return "sdk" if top in sdk else None


def raised_in_sdk(exc: BaseException, protocol: str) -> bool:
    """Whether the client crashed on what it received: the innermost frame of `exc`'s traceback that is the SDK's
    or the harness's is the SDK's, or the driver found the SDK's events impossible to build a message from."""
    if isinstance(exc, ImpossibleStream):
        return True
    sdk = sdk_modules(protocol)
    owner: str | None = None
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        found = _owner(str(tb.tb_frame.f_globals.get("__name__", "")), sdk)
        owner = found or owner
        tb = tb.tb_next
    return owner == "sdk"


def where(exc: BaseException) -> str:
    """`file.py:line` of the innermost harness frame of `exc`'s traceback (empty when there is none)."""
    found = ""
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if str(frame.f_globals.get("__name__", "")).split(".", 1)[0] == HARNESS:
            name = str(frame.f_globals.get("__name__", "")).replace(".", "/")
            found = f"{name}.py:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "\u2026"


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def last_frame(data: bytes) -> str:
    """The last non-empty frame of a stream's raw bytes (SSE events end with a blank line, NDJSON with a newline)."""
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    frames = [f for f in text.split("\n\n") if f.strip()]
    if len(frames) <= 1:
        frames = [f for f in text.split("\n") if f.strip()]
    return frames[-1] if frames else ""


def frame_at(data: bytes, offset: int) -> str:
    """The frame of a stream's raw bytes that holds byte `offset` (frames end with a blank line)."""
    text = data.replace(b"\r\n", b"\n")
    offset = min(max(offset, 0), len(text))
    start = text.rfind(b"\n\n", 0, offset)
    end = text.find(b"\n\n", offset)
    return _text(text[start + 2 if start >= 0 else 0 : end if end >= 0 else len(text)])


def choke_point(protocol: str, chunks: Sequence[bytes], stream: bool) -> str:
    """Which event of the client's wire the SDK choked on, in words: decoded with `protocol`'s codec, the one its
    decoder rejects, else the last one the client received (the SDK stops reading where it crashed)."""
    data = b"".join(chunks)
    if not data:
        return "before any byte of the answer"
    codec = registry.get(protocol)
    if not stream:
        try:
            codec.decode_response(data)
        except ValueError as exc:  # DecodeError: the body is not a valid answer of the protocol
            return f"the response body, which the {protocol} codec rejects too ({exc}): {_cut(_text(data))}"
        return f"the response body: {_cut(_text(data))}"
    decoder = codec.stream_decoder()
    events = []
    try:
        for chunk in chunks:
            events += decoder.feed(chunk)
        events += decoder.close()
    except ValueError as exc:  # DecodeError or FramingError, with the byte offset
        offset = getattr(exc, "offset", None)
        frame = frame_at(data, offset) if isinstance(offset, int) else last_frame(data)
        return f"event {len(events)}, which the {protocol} codec rejects too ({exc}): {_cut(frame)}"
    kind = events[-1].kind if events else "none"
    return f"event {len(events) - 1} ({kind}), the last it received: {_cut(last_frame(data))}"


def crash_check(exc: BaseException, protocol: str, chunks: Sequence[bytes], stream: bool) -> Check:
    """The failed `client_crash` check: what the SDK raised and the event it choked on."""
    actual = f"{type(exc).__name__}: {exc} at {choke_point(protocol, chunks, stream)}"
    expected = f"the {protocol} SDK returns an answer or raises its own API error"
    return Check(name=CLIENT_CRASH, passed=False, expected=expected, actual=actual)


def recording_at_fault(role: str, upstream: Sequence[bytes], frontend: Sequence[bytes]) -> bool:
    """Whether an SDK crash is the recording's fault, not the proxy's: a baseline run (the SDK of the recording's
    own protocol, through pass-through) whose client received the recorded bytes unchanged. Those bytes are what
    the cassette holds (a gzip-stored body its own SDK cannot read, say): no system under test touched them, so
    blaming one would be a false alarm, and the run is a harness error naming the cassette instead. A baseline
    whose bytes the system under test changed on the way, and every translated run, stay a `client_crash`."""
    return role != "translated" and bool(upstream) and b"".join(upstream) == b"".join(frontend)


def transport_fault(exc: BaseException) -> bool:
    """Whether `exc` is the wire failing under the client (a cut stream, a timeout, a broken protocol), whichever
    frame raised it: the answer's sender is at fault, not the code reading it."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, httpx2.TransportError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _decoded(protocol: str, chunks: Sequence[bytes], stream: bool) -> list[ir.StreamEvent] | None:
    """The events of what the client received (none for a body), or None when `protocol`'s codec rejects it."""
    data = b"".join(chunks)
    if not data:
        return None
    if stream:  # the checks' decode of the same client stream, remembered
        events, error = decoded_stream(protocol, chunks)
        return events if error is None else None
    try:
        registry.get(protocol).decode_response(data)
    except ValueError:  # DecodeError: not a valid answer of the protocol
        return None
    return []


def unreadable(protocol: str, chunks: Sequence[bytes], stream: bool) -> bool:
    """Whether the bytes the client received are no answer of `protocol` at all (its codec rejects them: an HTML
    page, a cut body): then whatever the driver raised on them, the sender is at fault."""
    return _decoded(protocol, chunks, stream) is None


def answered(protocol: str, chunks: Sequence[bytes], stream: bool) -> bool:
    """Whether the bytes the client received answer the request: readable as `protocol`, and no stream carrying an
    error event (a proxy that answers with its own error in a 2xx stream refused the request; every WebSocket turn
    is 2xx: the upgrade succeeded)."""
    events = _decoded(protocol, chunks, stream)
    return events is not None and not any(isinstance(event, ir.ErrorEvent) for event in events)
