"""How faithful a reference backend is: real recorded answers decoded to IR, re-encoded by the reference, and the
two wire shapes compared (`harness.protocols.shape`).

`measure` takes recorded exchanges of one protocol or profile and returns what agrees and what does not, each
difference with the reason its reference declares (`Reference.differences`). `render` writes the agreement
table of `docs/shape.md`. Reading capture files is the caller's job (`conformance shapes`, the shape test).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from harness.protocols import base, registry
from harness.protocols.base import Codec, DecodeError
from harness.protocols.reference import body_reply, error_reply, reference_of, stream_reply, strip_extras
from harness.protocols.shape import Agreement, Difference, Shape, agreement, differences, probe, reason_for
from harness.wire.http import HttpRequest, HttpResponse

COUNTED_HEADERS = frozenset(
    {
        "content-type",
        "cache-control",
        "content-disposition",
        "request-id",
        "x-request-id",
        "openai-processing-ms",
        "openai-version",
        "x-should-retry",
        "retry-after",
    }
)
"""Response headers the shape compares: the ones clients and SDKs read or that belong to the provider's API
(request ids, retry advice, processing time). Transport, CDN, security and account headers are left out: no
client reads them, and the recorder scrubs the account and rate-limit ones anyway."""


@dataclass(frozen=True)
class Exchange:
    """One recorded request and response, with where it came from."""

    request: HttpRequest
    """The request as recorded."""
    response: HttpResponse
    """The response as recorded (body decompressed and de-chunked)."""
    source: str
    """`file#interaction`, shown in reports and used as the seed of what the reference invents."""


@dataclass
class Measurement:
    """The agreement of one protocol's reference with its real recordings."""

    protocol: str
    """Registry name of the codec measured."""
    real: Shape = field(default_factory=Shape)
    """Shape of the recorded answers."""
    ours: Shape = field(default_factory=Shape)
    """Shape of the reference's answers to the same IR."""
    sources: list[str] = field(default_factory=list)
    """Exchanges measured."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """Exchanges that could not be measured, with the reason."""

    @property
    def agreement(self) -> Agreement:
        """Agreement counts (event types, key paths, sequences, headers)."""
        return agreement(self.real, self.ours)

    def differences(self) -> list[tuple[Difference, str | None]]:
        """Every difference with its declared reason (None: undeclared)."""
        reasons = reference_of(registry.get(self.protocol)).differences
        return [(d, reason_for(d, reasons)) for d in differences(self.real, self.ours)]


def _counted(headers: dict[str, str]) -> list[str]:
    return [name.lower() for name in headers if name.lower() in COUNTED_HEADERS]


def reencode(codec: Codec, exchange: Exchange) -> HttpResponse | tuple[dict[str, str], bytes]:
    """The reference's answer to the IR of a recorded exchange: a whole response, or (headers, streamed body)."""
    request = codec.decode_request(exchange.request)
    response = exchange.response
    seed = exchange.source
    if response.status >= 400:
        error = codec.decode_error(response.status, response.headers, response.body)
        return error_reply(codec, error, seed=seed, status=response.status)
    if codec.is_stream_request(exchange.request):
        events = strip_extras(base.decode_events(codec, [response.body]))
        reply = stream_reply(codec, request, events, seed=seed)
        return reply.headers, b"".join(reply.chunks)
    decoded = codec.decode_response(response.body).model_copy(update={"extras": None})
    return body_reply(codec, request, decoded, seed=seed)


def measure(codec: Codec, exchanges: Iterable[Exchange]) -> Measurement:
    """Shapes of the recorded answers and of the reference's answers to their IR."""
    found = Measurement(codec.name)
    shaper = probe(codec)
    for exchange in exchanges:
        if shaper is None:
            found.skipped.append((exchange.source, f"{codec.name} cannot split its bodies into wire events"))
            continue
        try:
            ours = reencode(codec, exchange)
            stream = codec.is_stream_request(exchange.request)
            real_events = shaper.wire_events(exchange.response.body, stream=stream, status=exchange.response.status)
            if isinstance(ours, HttpResponse):
                our_headers, our_body, status = ours.headers, ours.body, ours.status
            else:
                (our_headers, our_body), status = ours, 200
            our_events = shaper.wire_events(our_body, stream=stream, status=status)
        except (DecodeError, ValueError) as exc:
            found.skipped.append((exchange.source, f"{type(exc).__name__}: {exc}"))
            continue
        found.real.add(real_events, _counted(exchange.response.headers))
        found.ours.add(our_events, _counted(our_headers))
        found.sources.append(exchange.source)
    return found


def _ratio(pair: tuple[int, int]) -> str:
    done, total = pair
    if total == 0:
        return "-"
    return f"{done}/{total} ({100 * done / total:.0f}%)"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render(measurements: Sequence[Measurement], *, header: str) -> str:
    """The agreement table, then every remaining difference with its reason, as Markdown."""
    lines = [header.rstrip(), ""]
    lines += [
        "| protocol / profile | exchanges | event types | key paths | sequences | headers | differences |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in measurements:
        a = m.agreement
        count = len(m.differences())
        lines.append(
            f"| `{m.protocol}` | {len(m.sources)} | {_ratio(a.event_types)} | {_ratio(a.key_paths)} | "
            f"{_ratio(a.sequences)} | {_ratio(a.headers)} | {count} |"
        )
    lines += ["", "## Remaining differences", ""]
    for m in measurements:
        rows = m.differences()
        skipped = m.skipped
        if not rows and not skipped:
            continue
        lines += [f"### `{m.protocol}`", "", "| difference | reason |", "|---|---|"]
        lines += [f"| `{_cell(d.key)}` | {_cell(reason or 'UNDECLARED')} |" for d, reason in rows]
        lines += [f"| not measured: `{source}` | {_cell(reason)} |" for source, reason in skipped]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def undeclared(measurements: Iterable[Measurement]) -> list[str]:
    """Differences without a declared reason, as `protocol: key` lines."""
    return [f"{m.protocol}: {d.key}" for m in measurements for d, reason in m.differences() if reason is None]


def stale_reasons(measurements: Iterable[Measurement]) -> list[str]:
    """Declared reasons that no difference of their protocol matches any more."""
    out = []
    for m in measurements:
        keys = [d.key for d in differences(m.real, m.ours)]
        reasons = reference_of(registry.get(m.protocol)).differences
        out += [f"{m.protocol}: {p}" for p in reasons if not any(fnmatchcase(k, p) for k in keys)]
    return out
