"""`Profile`: what one OpenAI-compatible provider does differently from OpenAI Chat Completions.

The codec (`OpenAICodec`) is written once; a provider is a frozen `Profile` value: a few settings plus hook
functions that normalize the provider's JSON into OpenAI's shape before the common decoder reads it (and the
reverse on encode). Every hook defaults to "no change", so OpenAI itself is `Profile(name="openai")`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal
from urllib.parse import quote

from harness import ir
from harness.ir import Capability
from harness.protocols.reference import token

JSONDict = dict[str, Any]
JSONHook = Callable[[JSONDict], JSONDict]
"""Takes a parsed JSON object from the provider and returns it in OpenAI's shape (may return the same dict).
A stream-chunk hook may return `{}` to say the chunk carries nothing for the IR (Azure's filter-only chunk)."""
RequestHook = Callable[[JSONDict, ir.Request], JSONDict]
"""Adjusts an encoded request body for the provider, given the IR it came from."""
UsageEncodeHook = Callable[[JSONDict, ir.Usage], JSONDict]
"""Adds the provider's own usage fields to an encoded OpenAI `usage` object."""
ToolIdHook = Callable[[str], str]
"""Rewrites a tool-call id into the form the provider accepts (applied to calls and results alike)."""
PreambleHook = Callable[[], list[JSONDict]]
"""Stream chunks the provider sends before the first chunk of the answer (Azure's prompt-filter chunk)."""

IdHook = Callable[[str], str]
"""A provider id in the provider's own format, derived from a seed (so a scenario always records the same)."""
ExtrasHook = Callable[[ir.Request, str], JSONDict]
"""Top-level fields the provider puts on every chunk and body (`system_fingerprint`, ...), given the request
and a seed."""
HeadersHook = Callable[[bool, int, str], dict[str, str]]
"""Response headers the provider sends, given (stream, status, seed)."""
ErrorBodyHook = Callable[[JSONDict, ir.IRError], JSONDict]
"""An error body as the provider sends it, given the encoded body and the IR error."""

AuthStyle = Literal["bearer", "api-key"]

DEFAULT_CAPABILITIES = frozenset(
    {
        Capability.TOOLS,
        Capability.PARALLEL_TOOLS,
        Capability.NESTED_TOOL_SCHEMA,
        Capability.TOOL_CHOICE,
        Capability.VISION,
        Capability.THINKING,
        Capability.JSON_OBJECT,
        Capability.JSON_SCHEMA,
        Capability.STOP_SEQUENCES,
        Capability.PROMPT_CACHE,
        Capability.MODELS_LIST,
        Capability.RETRY_AFTER,
        Capability.TOP_P,
        Capability.STOP_MAX_TOKENS,
        Capability.STREAM_ERROR_FIRST,
        Capability.NOT_FOUND_ERROR,
        Capability.OVERLOADED_ERROR,
    }
)
"""What Chat Completions and most compatible servers carry; profiles subtract what their provider lacks."""


def same(obj: JSONDict) -> JSONDict:
    """The default JSON hook: no change."""
    return obj


def same_request(body: JSONDict, request: ir.Request) -> JSONDict:
    """The default request hook: no change."""
    return body


def same_usage(usage: JSONDict, value: ir.Usage) -> JSONDict:
    """The default usage-encoding hook: no change."""
    return usage


def same_id(tool_id: str) -> str:
    """The default tool-id hook: ids are kept as given."""
    return tool_id


def no_preamble() -> list[JSONDict]:
    """The default preamble hook: a stream starts with the answer's first chunk."""
    return []


def chatcmpl_id(seed: str) -> str:
    """OpenAI's response id: `chatcmpl-` + 29 base-62 characters."""
    return f"chatcmpl-{token(seed, 29)}"


def call_id(seed: str) -> str:
    """OpenAI's tool-call id: `call_` + 24 base-62 characters."""
    return f"call_{token(seed, 24)}"


def no_extras(request: ir.Request, seed: str) -> JSONDict:
    """The default extras hook: the provider adds no fields."""
    return {}


def no_headers(stream: bool, status: int, seed: str) -> dict[str, str]:
    """The default headers hook: the provider adds no headers."""
    return {}


def same_error_body(body: JSONDict, error: ir.IRError) -> JSONDict:
    """The default error hook: the body as encoded."""
    return body


@dataclass(frozen=True)
class ReferenceFacts:
    """What a provider says that no translation can know, for its reference backend
    (`harness.protocols.reference`): its ids, the fields it adds to every chunk and body, its headers, and the
    shape differences from its real wire that remain (with reasons, measured in docs/shape.md)."""

    response_id: IdHook = chatcmpl_id
    """The response (and chunk) id."""
    tool_id: IdHook = call_id
    """A tool-call id."""
    extras: ExtrasHook = no_extras
    """Top-level fields of every chunk and body (written through `MessageStart.extras` / `Response.extras`)."""
    headers: HeadersHook = no_headers
    """Response headers."""
    error_body: ErrorBodyHook = same_error_body
    """An error body as the provider sends it."""
    differences: Mapping[str, str] = field(default_factory=dict)
    """Shape differences from the real wire that remain: fnmatch pattern over `Difference.key` -> reason."""


@dataclass(frozen=True)
class WireStyle:
    """How the provider lays out a stream and a body beyond what the IR says: which optional keys are present,
    where the role, the usage and an error go. Measured against each provider's real wire (docs/shape.md)."""

    role_chunk: Literal["separate", "merged", "every"] = "separate"
    """`separate`: a first chunk with only the role (`content: ""`, or null when the answer starts with a tool
    call); `merged`: the role rides on the first chunk with content (xAI); `every`: a role chunk, then the role
    (and `content: ""`) on every chunk (OpenRouter)."""
    finish_reason_null: bool = True
    """Every choice carries `finish_reason`, null until the end (xAI omits it)."""
    logprobs: bool = False
    """Every choice carries `logprobs: null`."""
    refusal: bool = False
    """The role delta and a message carry `refusal: null` (OpenAI)."""
    annotations: bool = False
    """A message carries `annotations: []` (OpenAI)."""
    usage_null: Literal["never", "with_usage", "always"] = "never"
    """Chunks without usage carry `usage: null`: never, when the client asked include_usage (OpenAI), always
    (DeepSeek)."""
    usage_chunk: Literal["separate", "finish", "both"] = "separate"
    """Where the usage goes: a chunk of its own with `choices: []` (OpenAI), the finish_reason chunk (Mistral,
    DeepSeek), or both (Groq)."""
    obfuscation: bool = False
    """Every chunk carries an `obfuscation` padding string (OpenAI, unless the client turned it off)."""
    whole_tool_calls: bool = False
    """A tool call's name and its first argument fragment go in one chunk (Groq, xAI send calls whole)."""
    error_chunk: Literal["bare", "event", "in_chunk"] = "bare"
    """A mid-stream error: `data: {"error": ...}` and no `[DONE]` (OpenAI); the same as `event: error` (Groq);
    or an `error` inside a normal chunk with the usage, then `[DONE]` (OpenRouter)."""
    error_object: Literal["openai", "groq", "openrouter"] = "openai"
    """The inner error object: OpenAI's `{message, type, param, code}`, Groq's (`status_code`, no `param`), or
    OpenRouter's `{code: <status>, message}`."""
    first_chunk_extras: frozenset[str] = frozenset()
    """Extras written on the first chunk only (Groq's `x_groq`); the others go on every chunk."""


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Profile:
    """One OpenAI-compatible provider: registry name, endpoint, auth, reasoning field and quirk hooks."""

    name: str
    """Registry name of the codec (`openai`, `deepseek`, `groq`, ...); also the `provider_fields` key."""
    capabilities: frozenset[Capability] = DEFAULT_CAPABILITIES
    """Scenario capabilities the provider's wire carries (thinking as `reasoning_content`/`reasoning`)."""
    family: str = "openai"
    """The base protocol whose SDK speaks to this provider (the driver of its baseline run)."""
    base_path: str = "/v1"
    """Path prefix of the provider's API (`/v1`; Groq `/openai/v1`; DeepSeek serves without a prefix)."""
    model_in_path: bool = False
    """Whether the model is a path segment after `base_path` (Azure: `/openai/deployments/{deployment}`)."""
    query: Mapping[str, str] = field(default_factory=dict)
    """Query parameters every request carries (Azure's `api-version`)."""
    auth: AuthStyle = "bearer"
    """`bearer`: `Authorization: Bearer KEY`; `api-key`: an `api-key: KEY` header (Azure)."""
    reasoning_field: str = "reasoning_content"
    """Delta/message field the encoder writes thinking text to (OpenAI has none; `reasoning_content` is the
    de-facto field of DeepSeek, llama.cpp and LM Studio; Groq, OpenRouter, Together and vLLM use `reasoning`)."""
    reasoning_fields_read: tuple[str, ...] = ("reasoning_content", "reasoning")
    """Fields the decoder reads thinking text from, first non-empty wins."""
    request_reasoning_field: str | None = None
    """Assistant-message field that sends earlier thinking back to the provider; None drops it (OpenAI rejects
    unknown message fields; DeepSeek answers 400 when `reasoning_content` is sent back)."""
    reasoning_effort: bool = True
    """Whether `Request.thinking` travels as `reasoning_effort` (False: the provider has no thinking switch, and
    the field is kept raw like any unmapped one)."""
    sends_stream_options: bool = True
    """Whether a streamed request asks for `stream_options.include_usage` by default."""
    wire: WireStyle = field(default_factory=WireStyle)
    """How the provider lays out its streams and bodies (optional keys, where role, usage and errors go)."""
    max_tokens_field: str = "max_completion_tokens"
    """Field `Request.max_tokens` is sent in when the client's own choice is unknown."""
    tool_id_prefix: str = "call_"
    """Prefix of the ids synthesized for tool calls that arrive without one."""
    encode_tool_id: ToolIdHook = same_id
    """Tool-id form the provider accepts (e.g. Mistral's 9 alphanumerics)."""
    finish_reasons: Mapping[str, ir.StopKind] = field(default_factory=dict)
    """Provider finish_reason values beyond OpenAI's, -> IR stop kind."""
    error_codes: Mapping[str, ir.ErrorKind] = field(default_factory=dict)
    """Provider error `code`/`type` strings beyond OpenAI's, -> IR error kind."""
    stream_error_events: frozenset[str] = frozenset({"error"})
    """SSE `event:` names whose data is an error payload (Groq sends `event: error` inside a 200 stream)."""
    decode_chunk: JSONHook = same
    """Normalizes one stream chunk (a parsed `data:` payload) before the common decoder reads it."""
    decode_body: JSONHook = same
    """Normalizes a non-streamed response body before the common decoder reads it."""
    decode_usage: JSONHook = same
    """Normalizes a `usage` object (stream or not) into OpenAI's shape."""
    encode_request: RequestHook = same_request
    """Adjusts an encoded request body for the provider."""
    encode_usage: UsageEncodeHook = same_usage
    """Adds provider-specific usage fields when encoding."""
    encode_chunk: JSONHook = same
    """Adjusts an encoded stream chunk for the provider."""
    encode_body: JSONHook = same
    """Adjusts an encoded non-streamed response body for the provider."""
    encode_preamble: PreambleHook = no_preamble
    """Chunks a stream starts with before the answer's own first chunk."""
    losses: Mapping[str, str] = field(default_factory=dict)
    """What this provider loses beyond Chat Completions' own table (keys in `harness.diff.losses` grammar)."""
    reshapes: Mapping[str, str] = field(default_factory=dict)
    """How this provider reshapes IR it carries beyond Chat Completions' own `RESHAPES` (free text; the diff
    handles each with a named rule, e.g. `harness.diff.request_rules.system_folded`)."""
    notes: tuple[str, ...] = ()
    """Provider quirks the common decoder handles without a hook (listed in the generated profile table)."""
    own_fields: frozenset[str] = frozenset()
    """Top-level fields the profile's own hooks read and write (llama.cpp `timings`, Azure
    `prompt_filter_results`): not kept as extras, since the encoder writes them anyway."""
    reference: ReferenceFacts = field(default_factory=ReferenceFacts)
    """The provider as a reference backend: its ids, added fields, headers, remaining shape differences."""

    def __post_init__(self) -> None:
        # Freeze the tables so one profile value can never be changed by a codec that uses it.
        for name in ("finish_reasons", "error_codes", "query", "losses", "reshapes"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    def path(self, model: str | None = None) -> str:
        """Path of the chat completions endpoint (for `model`, when the model is a path segment)."""
        if self.model_in_path:
            return f"{self.base_path}/{quote(model or '', safe='')}/chat/completions"
        return f"{self.base_path}/chat/completions"


REASONING_SIGNATURE = "reasoning_signature"
"""The delta / message key a profile's decode hook puts a thinking signature under, for the common decoder: it
ends the thinking block with it (Chat Completions has no such field; OpenRouter carries Anthropic's signature
in `reasoning_details`). Never written by an encoder."""


@dataclass(frozen=True)
class Chain:
    """Several JSON hooks applied in order, for a profile with more than one quirk in one place; the generated
    profile table lists each hook of the chain."""

    hooks: tuple[JSONHook, ...]

    def __call__(self, obj: JSONDict) -> JSONDict:
        for hook in self.hooks:
            obj = hook(obj)
            if not obj:
                break  # a hook dropped the chunk: nothing is left for the others
        return obj


def chain(*hooks: JSONHook) -> Chain:
    """One JSON hook that applies `hooks` in order."""
    return Chain(tuple(hooks))
