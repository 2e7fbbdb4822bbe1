"""The trace of one run, and the result of one case (three runs and their triage)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ModelWrapValidatorHandler, model_validator

from harness import ir
from harness.trace.identity import Case, Mode, Run, RunRole, Transport

TRACE_SCHEMA_VERSION = 1

RunStatus = Literal["ok", "failed", "error", "skipped"]

__all__ = [
    "CaseResult",
    "Check",
    "Deviation",
    "DivergenceJSON",
    "Mode",
    "RunRole",
    "RunTrace",
    "SdkView",
    "Timings",
    "Verdict",
]


class Verdict(StrEnum):
    """The outcome of one case (the triage table in `harness.diff.triage` decides it)."""

    PASS = "pass"
    PROXY_BUG_REQUEST = "proxy_bug_request"
    PROXY_BUG_RESPONSE = "proxy_bug_response"
    BACKEND_ISSUE = "backend_issue"
    BASELINE_ISSUE = "baseline_issue"
    UNSUPPORTED = "unsupported"
    HARNESS_ERROR = "harness_error"

    @property
    def is_proxy_bug(self) -> bool:
        """Whether this verdict blames the proxy (it fails the gate unless listed as a known failure)."""
        return self in (Verdict.PROXY_BUG_REQUEST, Verdict.PROXY_BUG_RESPONSE)

    @property
    def is_harness_error(self) -> bool:
        """Whether the harness or its setup failed, so nothing was judged: it fails the gate with exit 2 always
        (no known-failures entry can hold it)."""
        return self is Verdict.HARNESS_ERROR


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class Check(_Model):
    """One expectation of the scenario, evaluated on what the SDK saw."""

    name: str
    """Stable check name (e.g. `stop_reason`, `text_equals`, `tool_calls`)."""
    passed: bool
    """Whether the expectation held."""
    expected: Any = None
    """What the scenario expects."""
    actual: Any = None
    """What the SDK saw."""


class Deviation(_Model):
    """Something on the wire that official SDKs tolerate but the real provider never sends: a warning with the
    rule it breaks (fails the gate only under `--strict`)."""

    rule: str
    """Name of the broken rule (`<protocol>.<rule>`, declared in the protocol's facts)."""
    message: str
    """What was seen, and where (event or field)."""
    source: str = ""
    """The provider documentation or real recording the rule rests on."""


class SdkView(_Model):
    """What the client SDK finally saw, normalized to IR."""

    response: ir.Response | None = None
    """The final response (accumulated from the stream for streamed runs)."""
    events: list[ir.StreamEvent] | None = None
    """The stream as the SDK delivered it, normalized to IR events (streamed runs only)."""
    error: ir.IRError | None = None
    """The error the SDK raised, if any."""
    exception: str | None = None
    """Qualified class name of the SDK exception, if one was raised."""
    crash: str | None = None
    """The SDK raised something that is not its API error class on the bytes it received (`TypeError: ...`): the
    client crashed on the answer; `checks` name the event it choked on."""

    @model_validator(mode="wrap")
    @classmethod
    def _events_kept(cls, data: Any, handler: ModelWrapValidatorHandler[SdkView]) -> SdkView:
        # The SDK's events, already validated in its `SdkResult`, are kept, not revalidated (`ir.events_kept`).
        return ir.events_kept(data, handler)


class Wire(_Model):
    """Where the raw bytes of a run are, and a readable excerpt of them."""

    cassette: str | None = None
    """Cassette the backend answer was replayed from (path relative to the cassette root)."""
    interaction: int | None = None
    """Interaction index inside the cassette."""
    upstream: str = ""
    """Raw upstream response bytes as text (UTF-8 with replacement), truncated to `limit`."""
    frontend: str = ""
    """Raw bytes the proxy sent to the client as text, truncated to `limit`."""
    upstream_chunks: int = Field(0, ge=0)
    """Number of chunks the upstream body arrived in."""
    frontend_chunks: int = Field(0, ge=0)
    """Number of chunks the client received."""
    truncated: bool = False
    """Whether either excerpt was cut."""
    upstream_offsets: list[int] = Field(default_factory=list)
    """Where each upstream chunk begins in `upstream` (character offsets, ascending; chunks that begin past the
    excerpt are left out). Empty in traces written before chunk boundaries were kept."""
    frontend_offsets: list[int] = Field(default_factory=list)
    """Where each client chunk begins in `frontend`, as `upstream_offsets`."""
    upstream_times_ms: list[float] = Field(default_factory=list)
    """When each upstream chunk was read, in ms after the proxy received the request (every chunk the tap kept;
    empty when unknown)."""
    frontend_times_ms: list[float] = Field(default_factory=list)
    """When each client chunk was sent, in ms after the proxy received the request (as `upstream_times_ms`)."""
    event_chunks: list[int] = Field(default_factory=list)
    """For each of the run's `upstream_events`, the upstream chunk (0-based) it arrived in: the stream timeline."""
    frontend_events: list[int] = Field(default_factory=list)
    """For each client chunk, how many upstream events had arrived when it was sent (parallel to
    `frontend_times_ms`): event i reached the client with the first chunk whose count exceeds i."""
    answer_headers: dict[str, str] = Field(default_factory=dict)
    """Headers of the answer the client received (lower-case names, credentials left out)."""
    upstream_headers: dict[str, str] = Field(default_factory=dict)
    """Headers of the request sent upstream (lower-case names, credentials left out)."""

    @model_validator(mode="after")
    def _consistent(self) -> Wire:
        for side in ("upstream", "frontend"):
            offsets, times = getattr(self, f"{side}_offsets"), getattr(self, f"{side}_times_ms")
            text, chunks = getattr(self, side), getattr(self, f"{side}_chunks")
            # Ascending (as sorted: each list is checked at C speed), so within the excerpt when its ends are.
            if offsets != sorted(offsets) or (offsets and not 0 <= offsets[0] <= offsets[-1] <= len(text)):
                raise ValueError(f"wire.{side}_offsets must ascend within the {side} excerpt")
            if len(offsets) > chunks or len(times) > chunks or (times and len(offsets) > len(times)):
                raise ValueError(f"wire.{side}: more chunk offsets or times than {side}_chunks")
        if len(self.frontend_events) != len(self.frontend_times_ms) and self.frontend_events:
            raise ValueError("wire.frontend_events must have one entry per client chunk time")
        if self.frontend_events != sorted(self.frontend_events):
            raise ValueError("wire.frontend_events must not decrease")
        chunks = self.event_chunks
        if chunks and not -1 <= min(chunks) <= max(chunks) < max(len(self.upstream_times_ms), 1):
            raise ValueError("wire.event_chunks must name upstream chunks the trace has times for (-1: none)")
        return self


class Timings(_Model):
    """Wall-clock timings in milliseconds."""

    total_ms: float = 0.0
    """From sending the request to the SDK returning."""
    first_byte_ms: float | None = None
    """From the proxy receiving the request to its first response byte."""
    first_token_ms: float | None = None
    """Time to first token, kept by a slim trace (`harness.trace.slim`), whose wire it was measured from is gone,
    and by an external proxy's run, where it is measured at the client (from the request sent to the first chunk
    with answer content); None otherwise (the report measures it from the wire)."""


VARYING_HEADERS = frozenset({"date"})
"""Headers whose value differs between two runs on the same bytes (left out of steady traces)."""


class RunTrace(_Model):
    """Everything one run did, as JSON: the unit the diff engine and the reports read."""

    schema_version: int = TRACE_SCHEMA_VERSION
    """Version of this trace format."""
    case_id: str
    """Id of the case this run belongs to (the baseline runs are shared between cases)."""
    role: RunRole
    """Which of the three runs this is."""
    scenario: str
    """Scenario id."""
    client: str
    """Protocol the SDK client spoke (its driver)."""
    upstream: str
    """Backend protocol or profile the proxy talked to."""
    mode: Mode
    """Proxy mode."""
    stream: bool
    """Whether the run streamed."""
    transport: Transport = Field("http", exclude_if=lambda v: v == "http")
    """How the SDK reached the proxy (`ws`: WebSocket mode; absent: HTTP)."""
    trace_id: str | None = None
    """The proxy's trace id of the exchange."""
    frontend_request: ir.Request | None = None
    """The client's request decoded by the proxy's frontend codec."""
    upstream_request: ir.Request | None = None
    """The request the proxy sent upstream, decoded back to IR."""
    upstream_status: int | None = None
    """HTTP status of the upstream answer."""
    upstream_events: list[ir.StreamEvent] | None = None
    """The upstream stream decoded to IR."""
    upstream_response: ir.Response | None = None
    """The upstream non-streamed body decoded to IR."""
    sdk: SdkView = Field(default_factory=SdkView)
    """What the client SDK saw."""
    checks: list[Check] = Field(default_factory=list)
    """The scenario's expectations, evaluated."""
    grammar: list[str] = Field(default_factory=list)
    """Event-grammar violations seen by the proxy on the upstream stream (`rule at event N: detail`)."""
    status: RunStatus = "ok"
    """ok: every check passed; failed: a check failed; error: the harness could not complete the run."""
    error: str | None = None
    """Why the run could not complete (status error), in words."""
    timings: Timings = Field(default_factory=Timings)
    """How long it took."""
    wire: Wire = Field(default_factory=Wire)
    """Raw-wire references and excerpts."""
    deviations: list[Deviation] = Field(default_factory=list)
    """Wire deviations in what the client received (translated runs; rules from the frontend protocol's facts)."""
    unreached: str | None = None
    """A translated run through an external proxy that should have reached the backend but left nothing at the
    replay server, while the proxy answered with an error of its own: that answer, in words."""

    # Defined before `_events_placed`, so that it wraps the validation that after-validator follows, which then
    # reads the events kept.
    @model_validator(mode="wrap")
    @classmethod
    def _events_kept(cls, data: Any, handler: ModelWrapValidatorHandler[RunTrace]) -> RunTrace:
        # The proxy's decoded upstream events are kept, not revalidated one by one (`ir.events_kept`).
        return ir.events_kept(data, handler, "upstream_events")

    @model_validator(mode="after")
    def _events_placed(self) -> RunTrace:
        if self.wire.event_chunks and len(self.wire.event_chunks) != len(self.upstream_events or ()):
            raise ValueError("wire.event_chunks must have one entry per upstream event")
        return self

    @classmethod
    def of(cls, run: Run, case_id: str, **fields: Any) -> RunTrace:
        """The trace of `run` (first needed by case `case_id`), its identity fields filled from the run."""
        return cls(
            case_id=case_id,
            role=run.role,
            scenario=run.scenario,
            client=run.client,
            upstream=run.backend,
            mode=run.mode,
            stream=run.stream,
            transport=run.transport,
            **fields,
        )

    @property
    def run(self) -> Run:
        """The run this trace is of."""
        return Run(self.role, self.client, self.upstream, self.scenario, self.stream, self.transport)

    def steady(self) -> RunTrace:
        """The trace without what differs between two runs of the same matrix on the same bytes: its timings (also
        each wire chunk's) and the proxy's trace id (random per exchange). Reports of steady traces compare byte
        for byte."""
        trace_id = self.trace_id

        def steady_headers(headers: dict[str, str]) -> dict[str, str]:
            # The answer's date and the ids the proxy makes from its trace id (`x-conformance-trace-id`, the request
            # id it sends) differ between runs; their presence is what is judged.
            return {
                k: "<varies>" if k in VARYING_HEADERS or (trace_id and trace_id in v) else v for k, v in headers.items()
            }

        wire = self.wire.model_copy(
            update={
                "upstream_times_ms": [0.0] * len(self.wire.upstream_times_ms),
                "frontend_times_ms": [0.0] * len(self.wire.frontend_times_ms),
                "answer_headers": steady_headers(self.wire.answer_headers),
                "upstream_headers": steady_headers(self.wire.upstream_headers),
            }
        )
        return self.model_copy(update={"trace_id": None, "timings": Timings(), "wire": wire})


class DivergenceJSON(_Model):
    """A divergence as stored in a case result."""

    path: str
    """JSON path of the difference."""
    left: Any = None
    """Reference value (`<missing>` when absent)."""
    right: Any = None
    """Compared value (`<missing>` when absent)."""
    event_index: int | None = None
    """Stream event index, when the path is in an event."""
    change: str = ""
    """Kind of change."""


class CaseResult(_Model):
    """One case: its three runs and the verdict."""

    case_id: str
    """`<scenario>[<frontend>-><backend>,<stream|nonstream>]`."""
    scenario: str
    """Scenario id."""
    frontend: str
    """Frontend protocol (the client SDK's)."""
    backend: str
    """Backend protocol or profile."""
    stream: bool
    """Whether the case streams."""
    transport: Transport = Field("http", exclude_if=lambda v: v == "http")
    """How the frontend's SDK reached the proxy (`ws`: WebSocket mode; absent: HTTP)."""
    verdict: Verdict
    """Triage verdict."""
    reason: str
    """Why, in one sentence."""
    first_divergence: DivergenceJSON | None = None
    """The divergence that decided the verdict, if any."""
    request_divergences: list[DivergenceJSON] = Field(default_factory=list)
    """Upstream request IR vs the client's request IR."""
    response_divergences: list[DivergenceJSON] = Field(default_factory=list)
    """Translated run vs frontend baseline, after normalization."""
    deviations: list[Deviation] = Field(default_factory=list)
    """Wire deviations of the translated run: warnings, failing the gate only under `--strict`."""
    runs: dict[str, RunTrace] = Field(default_factory=dict)
    """The three runs by role (absent for unsupported cases)."""
    known: str | None = None
    """Reason from the known-failures file when this case is listed there."""
    duration_ms: float = 0.0
    """Time spent on the case (baselines shared with other cases are not counted again)."""
    cut: list[str] = Field(default_factory=list)
    """What this trace file leaves out of a huge answer (`harness.trace.bound`): one line per cut string or event
    list, with its path and size. Empty for every trace within the bound."""

    @property
    def case(self) -> Case:
        """The case this is the result of."""
        return Case(self.scenario, self.frontend, self.backend, self.stream, self.transport)
