"""`XmlToolCallCodec`: a base protocol's codec whose model writes tool calls as Qwen `<tool_call>` text.

Every direction delegates to the base codec, looked up in the registry by name at call time (so the wrapper
can be registered before its base), and wraps it with the transforms of `transform`:
decoders turn `<tool_call>` text into structured tool calls, encoders write structured calls as text.

Requests: with `tools_in_prompt=False` (an OpenAI-compatible base such as vLLM, whose chat template renders
the `tools` field itself) requests pass through unchanged. With `tools_in_prompt=True` (a base that cannot
carry tools, or a raw completion endpoint) the encoder renders tools and tool history into the prompt in the
Qwen/Hermes template form, and the decoder reads them back (see `prompt`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType

from harness import ir
from harness.ir import Capability
from harness.protocols import registry
from harness.protocols.base import Codec, StreamDecoder, StreamEncoder
from harness.protocols.kit import CheckedStreamEncoder, checked_response
from harness.protocols.qwen_xml import prompt, transform
from harness.wire.http import HttpRequest, HttpResponse

OWN_LOSSES: Mapping[str, str] = MappingProxyType(
    {
        "response.ToolCallPart.id": (
            "text tool calls have no ids: decoders synthesize call_<hash of message id, position, name, arguments>"
        ),
        "response.ToolCallPart.arguments_raw": "arguments come back as the compact JSON of the parsed object",
    }
)
"""What the text form of tool calls in the model's output loses, on top of the base protocol's losses."""

PROMPT_LOSSES: Mapping[str, str] = MappingProxyType(
    {
        "request.ToolCallPart.id": "earlier calls are rendered as text: their ids come back synthesized",
        "request.ToolCallPart.arguments_raw": "earlier calls come back as the compact JSON of their arguments",
        "Request.tool_choice": "the template has no tool_choice: not sent",
        "ToolResultPart.is_error": "a <tool_response> has no error flag",
        "ToolResultPart.name": "a <tool_response> has no name: recovered from the call it answers, by position",
    }
)
"""What requests lose on top of `OWN_LOSSES` when tools travel in the prompt (`tools_in_prompt=True`)."""

RESHAPES: Mapping[str, str] = MappingProxyType(
    {
        "Response.content text around calls": (
            "text and tool calls share one text block on the wire: the newline the template puts before and after "
            "each call is not text, and adjacent text parts merge"
        ),
        "StopReason.kind with calls": (
            "tool_use travels as the base's end_turn: it comes back tool_use exactly when the text holds calls "
            "(an end_turn beside calls comes back tool_use)"
        ),
        "ToolCallPart.arguments in coder style": (
            "Qwen3-Coder <parameter=...> values have no types: without the tool's schema, text that parses as "
            "JSON (42, true, [..]) comes back typed, and a value containing '</parameter>' cannot be carried"
        ),
        "Request.tools in the prompt": (
            "tools_in_prompt: the tools travel as the template's system-prompt block and are read back from it"
        ),
        "ToolResultPart.content in the prompt": (
            "tools_in_prompt: a <tool_response> holds text only: text parts are joined with '\\n', images are not sent"
        ),
    }
)
"""How the text form reshapes IR values in ways no loss key can say (not applied by the diffs)."""


def own_losses(*, tools_in_prompt: bool) -> Mapping[str, str]:
    """The XML transform's own losses for a codec with or without tools in the prompt."""
    return MappingProxyType({**OWN_LOSSES, **(PROMPT_LOSSES if tools_in_prompt else {})})


class _Losses(Mapping[str, str]):
    """The base codec's losses (looked up when first read) merged with the XML transform's own."""

    def __init__(self, base_name: str, own: Mapping[str, str]) -> None:
        self._base_name = base_name
        self._own = own

    def _merged(self) -> dict[str, str]:
        return {**registry.get(self._base_name).losses, **self._own}

    def __getitem__(self, key: str) -> str:
        return self._merged()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._merged())

    def __len__(self) -> int:
        return len(self._merged())


class XmlToolCallCodec:
    """A base protocol whose tool calls travel as `<tool_call>` text in the model's output."""

    def __init__(
        self,
        base_name: str,
        name: str,
        *,
        tools_in_prompt: bool = False,
        style: str = "hermes",
        stream_media_type: str = "text/event-stream",
    ) -> None:
        self.base_name = base_name
        """Registry name of the protocol the model's text travels in."""
        self.losses: Mapping[str, str] = _Losses(base_name, own_losses(tools_in_prompt=tools_in_prompt))
        """The base's losses (read lazily: the base may register later) merged with the XML transform's own."""
        self.name = name
        self.tools_in_prompt = tools_in_prompt
        """Whether requests carry tools in the system prompt (see the module docstring)."""
        self.style = style
        """Body format encoders write: `hermes` (JSON) or `coder` (Qwen3-Coder XML)."""
        self.stream_media_type = stream_media_type

    def __repr__(self) -> str:
        return f"XmlToolCallCodec({self.base_name!r}, {self.name!r})"

    @property
    def family(self) -> str:
        """The base protocol's family: its SDK drives this backend's baseline."""
        return self.base.family

    @property
    def capabilities(self) -> frozenset[Capability]:
        """The base protocol's capabilities (tool calls travel as text but arrive as structured calls), but for
        stored files: a self-hosted server holds none of the base provider's Files (`file_id`)."""
        return self.base.capabilities - {Capability.FILE_ID}

    @property
    def base(self) -> Codec:
        """The base codec, from the registry."""
        return registry.get(self.base_name)

    def decode_request(self, request: HttpRequest) -> ir.Request:
        """The base's request decoding (tools read back from the prompt with tools_in_prompt)."""
        decoded = self.base.decode_request(request)
        return prompt.parse_request(decoded) if self.tools_in_prompt else decoded

    def encode_request(self, request: ir.Request) -> HttpRequest:
        """The base's request encoding (tools rendered into the prompt with tools_in_prompt)."""
        return self.base.encode_request(
            prompt.render_request(request, style=self.style) if self.tools_in_prompt else request
        )

    def with_auth(self, request: HttpRequest, api_key: str) -> HttpRequest:
        """As the base does it."""
        return self.base.with_auth(request, api_key)

    def is_stream_request(self, request: HttpRequest) -> bool:
        """As the base says."""
        return self.base.is_stream_request(request)

    def decode_response(self, body: bytes) -> ir.Response:
        """The base's response with `<tool_call>` text made structured."""
        response, _warnings = transform.decode_response(self.base.decode_response(body))
        return response

    def encode_response(self, response: ir.Response, *, request: ir.Request | None = None) -> HttpResponse:
        """The base's response with structured calls written as `<tool_call>` text."""
        checked = checked_response(self.name, self.capabilities, response)
        return self.base.encode_response(transform.encode_response(checked, style=self.style), request=request)

    def stream_decoder(self) -> StreamDecoder:
        """The base's stream decoder followed by the XML tool-call decoder."""
        return XmlStreamDecoder(self.base.stream_decoder())

    def stream_encoder(self, *, request: ir.Request | None = None) -> StreamEncoder:
        """The XML tool-call encoder followed by the base's stream encoder."""
        encoder = XmlStreamEncoder(self.base.stream_encoder(request=request), style=self.style)
        return CheckedStreamEncoder(self.name, self.capabilities, encoder)

    def decode_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ir.IRError:
        """As the base does it."""
        return self.base.decode_error(status, headers, body)

    def encode_error(self, error: ir.IRError) -> HttpResponse:
        """As the base does it."""
        return self.base.encode_error(error)


class XmlStreamDecoder:
    """Base stream decoder + `XmlToolCallDecoder`; `warnings` lists malformed calls passed on as text."""

    def __init__(self, base: StreamDecoder) -> None:
        self._base = base
        self._xml = transform.XmlToolCallDecoder()

    @property
    def warnings(self) -> list[str]:
        """Malformed or unterminated tool calls seen so far."""
        return self._xml.warnings

    def feed(self, chunk: bytes) -> list[ir.StreamEvent]:
        """Decode with the base, then transform."""
        return [out for event in self._base.feed(chunk) for out in self._xml.feed(event)]

    def close(self) -> list[ir.StreamEvent]:
        """Close the base, then transform what it returns."""
        return [out for event in self._base.close() for out in self._xml.feed(event)]


class XmlStreamEncoder:
    """`XmlToolCallEncoder` + base stream encoder."""

    def __init__(self, base: StreamEncoder, *, style: str) -> None:
        self._base = base
        self._xml = transform.XmlToolCallEncoder(style=style)

    def encode(self, event: ir.StreamEvent) -> bytes:
        """Transform, then encode with the base."""
        return b"".join(self._base.encode(out) for out in self._xml.feed(event))

    def close(self) -> bytes:
        """The base's trailing bytes."""
        return self._base.close()
