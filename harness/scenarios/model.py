"""The scenario model: a protocol-neutral request, a scripted reply, and what the SDK client must have seen.

One source of truth: the JSON Schema that scenario files are validated against is generated from these models
(`harness.scenarios.loader.scenario_json_schema`).
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness import ir
from harness.ir import Capability as Capability  # re-exported: drivers and scenario files name it here

DEFAULT_MODEL = "conformance-model"
"""Model name a scenario request gets when the file omits it; the runner maps it per backend."""

StreamMode = Literal["stream", "nonstream"]
_BOTH_MODES: tuple[StreamMode, ...] = ("stream", "nonstream")


class SdkException(StrEnum):
    """Provider-neutral name of the exception an SDK raised; each driver maps its SDK's classes onto these."""

    BAD_REQUEST = "bad_request"
    AUTHENTICATION = "authentication"
    PERMISSION_DENIED = "permission_denied"
    NOT_FOUND = "not_found"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER_ERROR = "server_error"
    STREAM_ERROR = "stream_error"
    """An error the SDK raised after an HTTP 200 stream had begun (an error event or chunk in the stream)."""
    DECODE_ERROR = "decode_error"
    """The SDK could not parse what it received (broken JSON in a body or stream)."""
    CONNECTION = "connection"
    TIMEOUT = "timeout"
    OTHER = "other"


class ScenarioModel(BaseModel):
    """Base of the scenario models: immutable, no unknown keys, attribute docstrings become descriptions."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True, populate_by_name=True)


class ScenarioRequest(ir.Request):
    """An IR request whose `model` may be omitted in the file; use `Scenario.request_for` to get a plain one."""

    model: str = DEFAULT_MODEL
    """Model name; usually omitted so the runner can map one per backend."""


class Chunking(ScenarioModel):
    """How the scripted reply is cut into stream pieces (reference backends and replay read these hints)."""

    text_chunk_size: int | None = Field(default=None, ge=1)
    """Characters (code points) per text/thinking delta; None sends each part as one delta."""
    arguments_chunk_size: int | None = Field(default=None, ge=1)
    """Characters per tool-argument fragment on protocols that stream arguments; None sends one fragment."""
    transport_chunk_bytes: int | None = Field(default=None, ge=1)
    """Bytes per HTTP body chunk when the stream is served; odd sizes split multi-byte UTF-8 characters."""


def _retryable_by_kind(data: Any) -> Any:
    """An error written without `retryable` gets the kind's default, as `IRError.of` gives it."""
    if isinstance(data, dict) and "retryable" not in data and data.get("kind") in set(ir.ErrorKind):
        return {**data, "retryable": ir.ErrorKind(data["kind"]).retryable}
    return data


class MidstreamError(ScenarioModel):
    """An error that replaces the rest of a stream after some events were sent."""

    after_events: int = Field(ge=1)
    """How many scripted IR events (counting `message_start`) are sent before the error."""
    error: ir.IRError
    """The error the backend sends inside the 200 stream."""

    _defaults = field_validator("error", mode="before")(_retryable_by_kind)


class ReplyOk(ScenarioModel):
    """A successful scripted reply."""

    kind: Literal["ok"] = "ok"
    """Tag."""
    id: str | None = None
    """Response id the backend reports."""
    content: list[ir.OutputPart] = Field(default_factory=list)
    """Output parts in order."""
    stop_reason: ir.StopReason = Field(default_factory=lambda: ir.StopReason(kind="end_turn"))
    """Why generation stopped."""
    usage: ir.Usage = Field(default_factory=ir.Usage)
    """Token accounting the backend reports (the final figures)."""
    usage_at_start: ir.Usage | None = None
    """Stream only: what the backend knows when the stream starts (Anthropic's message_start, Gemini's first
    chunk). None means what real providers know then: the input figures of `usage` (input tokens and cache
    counts); `{}` says the provider reports nothing at start."""
    usage_updates: list[ir.Usage] = Field(default_factory=list)
    """Stream only: usage reported while the answer streams, each the cumulative figures so far (Workers AI's
    newer models send them on every chunk), spread evenly over the content deltas; `usage` stays the final
    figures. A protocol with no mid-stream usage folds them into its final usage."""
    midstream_error: MidstreamError | None = None
    """Stream only: an error that cuts the stream after some events."""
    truncate_after: int | None = Field(default=None, ge=1)
    """Stream only: the body ends (cleanly, without the protocol's terminal marker) after this many events."""

    @model_validator(mode="before")
    @classmethod
    def _fill_arguments_raw(cls, data: Any) -> Any:
        # Scenario authors write tool arguments as objects; the raw JSON text is derived so the two agree.
        # Empty arguments keep whatever raw text was written ("" is itself a quirk worth scripting).
        if not isinstance(data, dict) or not isinstance(data.get("content"), list):
            return data
        parts = []
        for part in data["content"]:
            if isinstance(part, dict) and part.get("kind") == "tool_call" and not part.get("arguments_raw"):
                args = part.get("arguments")
                if args not in (None, {}):
                    part = {**part, "arguments_raw": json.dumps(args, ensure_ascii=False, separators=(",", ":"))}
            parts.append(part)
        return {**data, "content": parts}

    @model_validator(mode="after")
    def _one_way_to_fail(self) -> ReplyOk:
        if self.midstream_error is not None and self.truncate_after is not None:
            raise ValueError("a reply has either midstream_error or truncate_after, not both")
        return self


class ReplyError(ScenarioModel):
    """A scripted error response (non-200 status) instead of a reply."""

    kind: Literal["error"] = "error"
    """Tag."""
    error: ir.IRError
    """The error; its `retry_after` becomes the Retry-After header."""

    _defaults = field_validator("error", mode="before")(_retryable_by_kind)
    status: int | None = Field(default=None, ge=400, le=599)
    """HTTP status; None lets each protocol pick its own for the kind (Anthropic overloaded -> 529, else 503)."""


class ReplyModels(ScenarioModel):
    """A scripted model listing."""

    kind: Literal["models"] = "models"
    """Tag."""
    models: list[str] = Field(min_length=1)
    """Model ids the backend lists."""


Reply = Annotated[ReplyOk | ReplyError | ReplyModels, Field(discriminator="kind")]


class ToolCallExpectation(ScenarioModel):
    """A tool call the SDK must have received."""

    name: str
    """Tool name."""
    arguments: ir.JSONValue = None
    """Parsed argument object that must match exactly; omit to check the name only."""


class ErrorExpectation(ScenarioModel):
    """The error the SDK client must have seen."""

    kind: ir.ErrorKind | list[ir.ErrorKind]
    """Provider-neutral error kind, or the kinds accepted (a cut-off stream may reach a client as a stream with
    no ending, `malformed_stream`, or as the proxy's explicit mid-stream error, `server`)."""
    status: int | list[int] | None = None
    """HTTP status, or the statuses accepted (e.g. [529, 503] for overloaded); omit to not check."""
    retry_after: float | None = Field(default=None, ge=0)
    """Seconds of Retry-After the SDK must expose (checked on SDKs that surface it)."""
    exception: SdkException | list[SdkException] | None = None
    """Neutral name of the SDK exception class, or the classes accepted (an error-first stream raises a stream
    error, or the status error of its kind when a proxy answers it with its HTTP status); omit to not check."""


class Expectations(ScenarioModel):
    """Checks evaluated on what the SDK client saw. Omitted fields are not checked."""

    stop_reason: ir.StopKind | list[ir.StopKind] | None = None
    """Stop reason kind, or the kinds accepted (protocols differ, e.g. OpenAI has no `stop_sequence`)."""
    text_equals: str | None = None
    """The joined text of the answer, exactly."""
    text_contains: list[str] = Field(default_factory=list)
    """Substrings the joined text must contain."""
    tool_calls: list[ToolCallExpectation] | None = None
    """Tool calls in order (names, and argument objects where given); [] means none at all."""
    usage_present: bool = False
    """Input and output token counts are reported and above zero."""
    cache_read_present: bool = False
    """Cached prompt tokens are reported and above zero."""
    thinking_present: bool = False
    """A thinking block with text was received."""
    thinking_signature: bool = False
    """A thinking block carries a signature (checked on SDKs that surface signatures)."""
    text_is_json: bool = False
    """The joined text parses as JSON."""
    text_matches_schema: bool = False
    """The joined text is JSON valid against the request's `response_format` schema."""
    error: ErrorExpectation | None = None
    """The error the SDK saw; None means the call must succeed."""
    models_contain: list[str] = Field(default_factory=list)
    """Model ids the listing must contain."""
    request_fields: list[str] = Field(default_factory=list)
    """Request fields (IR names) that must reach the backend with the scenario's values (request-side check)."""


class ChainStep(ScenarioModel):
    """An earlier call of a stored-response chain: made (and stored by the server) before the scenario's own
    `request`, which continues it by id and carries only its new input."""

    request: ScenarioRequest
    """The step's new input (the first step: its whole request); model and settings come from the scenario's."""
    reply: ReplyOk
    """What the backend answers this step."""


class Scenario(ScenarioModel):
    """One conformance scenario, as written in `scenarios/<id>.yaml`."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    """Unique id across the scenario folder (by convention also the file's stem)."""
    description: str
    """What the scenario exercises and why."""
    kind: Literal["generate", "models_list"] = "generate"
    """A generation call, or a model listing."""
    request: ScenarioRequest = Field(default_factory=ScenarioRequest)
    """The request in IR terms (model optional; `stream` is set by the runner per streaming mode)."""
    reply: Reply
    """What the backend answers."""
    expect: Expectations = Field(default_factory=Expectations)
    """What the SDK must have seen."""
    requires: list[Capability] = Field(default_factory=list)
    """Capabilities the SDK, proxy frontend and backend must all have; otherwise the case is unsupported."""
    streaming: list[StreamMode] = Field(default_factory=lambda: list(_BOTH_MODES), min_length=1)
    """Streaming modes the scenario runs in."""
    chunking: Chunking = Field(default_factory=Chunking)
    """Hints for cutting the scripted stream."""
    steps: list[ChainStep] = Field(default_factory=list)
    """A stored-response chain: earlier calls, each stored by the server and continued by the next with only its
    new input; `request` is the last, continuing the one before it. A client that keeps no server state sends the
    whole conversation instead (`request_for`). Empty: one call."""
    compact: bool = False
    """With `steps`: instead of continuing a stored response, the client compacts the conversation so far
    (`POST /v1/responses/compact`) and sends the compaction's output before the last call's new input."""

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        self._chain_consistent()
        if len(set(self.streaming)) != len(self.streaming):
            raise ValueError("streaming lists a mode twice")
        cut = isinstance(self.reply, ReplyOk) and (self.reply.midstream_error or self.reply.truncate_after)
        if cut and self.streaming != ["stream"]:
            raise ValueError("a reply with midstream_error or truncate_after is stream-only: streaming: [stream]")
        if (self.kind == "models_list") != isinstance(self.reply, ReplyModels):
            raise ValueError("kind models_list goes with reply kind models, and only with it")
        if self.expect.text_matches_schema and not isinstance(
            self.request.response_format, ir.ResponseFormatJsonSchema
        ):
            raise ValueError("expect.text_matches_schema needs a json_schema response_format in the request")
        unknown = [f for f in self.expect.request_fields if f not in ir.Request.model_fields]
        if unknown:
            raise ValueError(f"expect.request_fields names no request field: {', '.join(unknown)}")
        if self.request.stream:
            raise ValueError("request.stream is set by the runner from `streaming`; leave it out")
        return self

    def _chain_consistent(self) -> None:
        if self.compact and not self.steps:
            raise ValueError("compact: compaction needs earlier calls (steps) to compact")
        if not self.steps:
            return
        if self.kind != "generate" or not isinstance(self.reply, ReplyOk):
            raise ValueError("a chain (steps) is a generate scenario whose reply is ok")
        if self.expect.error is not None:
            raise ValueError("expect.error: the last call of a chain is answered (reply ok); no error to expect")
        for n, step in enumerate(self.steps, 1):
            if not step.request.messages or step.request.messages[-1].role != "user":
                raise ValueError(f"steps[{n - 1}]: a step's request ends with a user message")
            if step.reply.midstream_error or step.reply.truncate_after:
                raise ValueError(f"steps[{n - 1}]: an earlier step's reply completes")
        if not self.request.messages or self.request.messages[-1].role != "user":
            raise ValueError("request: the last step of a chain ends with a user message")
        lasts = [ir.to_json(r.messages[-1]) for r in self.step_requests()]
        if len({json.dumps(m, sort_keys=True) for m in lasts}) != len(lasts):
            raise ValueError("steps: each step's last user message must differ (the backend tells the steps by it)")

    def step_requests(self) -> list[ScenarioRequest]:
        """Each call of the chain with only its new input, in order, the scenario's own `request` last."""
        return [*(step.request for step in self.steps), self.request]

    def step_replies(self) -> list[ReplyOk]:
        """What the backend answers each call of the chain (`step_requests`), in order."""
        assert isinstance(self.reply, ReplyOk) or not self.steps
        return [*(step.reply for step in self.steps), *([self.reply] if isinstance(self.reply, ReplyOk) else [])]

    def step_of(self, request: ir.Request) -> int:
        """Which call of the chain (0-based; the last when none matches) a request is, by its last message."""
        if not self.steps or not request.messages:
            return len(self.steps)
        last = ir.to_json(request.messages[-1])
        for n, step in enumerate(self.step_requests()):
            if ir.to_json(step.messages[-1]) == last:
                return n
        return len(self.steps)

    def conversation(self, step: int | None = None) -> list[ir.Message]:
        """The whole conversation up to call `step` (default: the last) as a client that keeps no server state
        sends it: every earlier call's new input and scripted answer, then the step's own new input."""
        requests, replies = self.step_requests(), self.step_replies()
        last = len(self.steps) if step is None else step
        out: list[ir.Message] = []
        for n in range(last):
            out += requests[n].messages
            out.append(ir.Message(role="assistant", content=list(replies[n].content)))
        return out + list(requests[last].messages)

    def request_for(self, model: str | None = None, *, stream: bool = False, step: int | None = None) -> ir.Request:
        """The plain IR request for one run: the given model (or the file's) and the streaming flag. In a chain,
        the whole conversation up to `step` (default: the last), as a client without server state sends it."""
        data = self.request.model_dump(by_alias=True, exclude={"model", "stream"})
        if self.steps:
            data["messages"] = [ir.to_json(m) for m in self.conversation(step)]
        return ir.Request.model_validate({**data, "model": model or self.request.model, "stream": stream})
