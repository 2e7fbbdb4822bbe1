"""Every codec's `losses` table is machine-exact: each key parses in the diff's grammar, names a literal value the
field can have, is not one of the over-broad keys that blind the diff, and is not implied by another key of the
table. And with the tables applied, a translation that drops or changes content is still a divergence."""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal

import pytest

from harness import ir
from harness.diff import LossKeyError, parse_loss, request_divergences
from harness.diff.losses import Loss
from harness.protocols import registry
from harness.protocols.anthropic import losses as anthropic_losses
from harness.protocols.bedrock import losses as bedrock_losses
from harness.protocols.gemini import losses as gemini_losses
from harness.protocols.ollama import losses as ollama_losses
from harness.protocols.qwen_xml import OWN_LOSSES, PROMPT_LOSSES
from harness.protocols.qwen_xml import RESHAPES as QWEN_RESHAPES
from harness.protocols.responses import RESHAPES as RESPONSES_RESHAPES

# Keys that remove whole content or a whole classification from both sides of a diff, whatever their scope: with
# one of them a proxy that drops an image, corrupts arguments or maps an error wrongly would pass.
OVER_BROAD = frozenset(
    {
        "Request",
        "Request.messages",
        "Request.tools",
        "Request.response_format",
        "Request.thinking",
        "Message",
        "Message.content",
        "Message.role",
        "Tool",
        "TextPart",
        "TextPart.text",
        "ImagePart",
        "ImagePart.source",
        "FilePart",
        "FilePart.data",
        "ToolCallPart",
        "ToolCallPart.name",
        "ToolCallPart.arguments",
        "ToolResultPart",
        "ToolResultPart.content",
        "ThinkingPart.text",
        "Response",
        "Response.content",
        "Response.stop_reason",
        "StopReason",
        "StopReason.kind",
        "Usage",
        "IRError",
        "IRError.kind",
        "IRError.message",
    }
)

# Each table's own keys: every registered table, and the Qwen transform's own parts (its registered codec is of
# the openai family).
TABLES: dict[str, Mapping[str, str]] = {name: registry.get(name).losses for name in registry.names()}
TABLES |= {"qwen (own)": OWN_LOSSES, "qwen (tools in prompt)": {**OWN_LOSSES, **PROMPT_LOSSES}}
RESHAPES: dict[str, Mapping[str, str]] = {
    "anthropic": anthropic_losses.RESHAPES,
    "bedrock": bedrock_losses.RESHAPES,
    "gemini": gemini_losses.RESHAPES,
    "ollama": ollama_losses.RESHAPES,
    "qwen": QWEN_RESHAPES,
    "responses": RESPONSES_RESHAPES,
}


TABLE_PARAMS = sorted(TABLES)

# Broad keys a codec may declare because it lacks the whole capability (so no case that needs it runs there):
# (codec, key) -> the capability it must not declare. Gemma has no thinking mode; swink's request has no tools;
# Ollama, swink and Workers AI's native route have no file part.
JUSTIFIED_BROAD = {
    ("gemma", "Request.thinking"): "thinking",
    ("swink", "Request.tools"): "tools",
    ("ollama", "FilePart"): "files",
    ("swink", "FilePart"): "files",
    ("cloudflare", "FilePart"): "files",
}


def _value_ok(annotation: Any, value: str) -> bool:
    """Whether `value` is the text of a value a field of this type can hold (how the diff matches it: str())."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_value_ok(arg, value) for arg in typing.get_args(annotation))
    if origin is Literal:
        return value in {str(arg) for arg in typing.get_args(annotation)}
    if annotation is type(None):
        return value == "None"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return value in {str(member.value) for member in annotation}
    if annotation is bool:
        return value in ("True", "False")
    if annotation is int:
        return value.lstrip("-").isdigit()
    if annotation is float:
        try:
            float(value)
        except ValueError:
            return False
        return True
    return annotation is str  # lists, objects and models have no literal value


def _field_type(loss: Loss) -> Any:
    model = getattr(ir, loss.model)
    assert loss.field is not None
    return model.model_fields[loss.field].annotation


def _implied_by(loss: Loss, other: Loss) -> bool:
    """Whether `other` already strips everything `loss` strips."""
    if other == loss or other.model != loss.model or other.scope not in (None, loss.scope):
        return False
    if other.field is None:
        return True
    return other.field == loss.field and other.value is None


@pytest.mark.parametrize("name", registry.names())
def test_every_registered_key_parses(name: str) -> None:
    for key in registry.get(name).losses:
        parse_loss(key)


@pytest.mark.parametrize("name", TABLE_PARAMS)
def test_keys_name_literal_values_of_their_field(name: str) -> None:
    for key in TABLES[name]:
        loss = parse_loss(key)
        if loss.value is not None:
            assert _value_ok(_field_type(loss), loss.value), (
                f"{name}: {key!r} names no value of {loss.model}.{loss.field}"
            )


@pytest.mark.parametrize("name", TABLE_PARAMS)
def test_no_key_is_over_broad(name: str) -> None:
    broad = []
    for key in TABLES[name]:
        loss = parse_loss(key)
        if loss.value is None and (f"{loss.model}.{loss.field}" if loss.field else loss.model) in OVER_BROAD:
            if (name, key) in JUSTIFIED_BROAD:
                assert JUSTIFIED_BROAD[(name, key)] not in registry.get(name).capabilities
                continue
            broad.append(key)
    assert broad == []


@pytest.mark.parametrize("name", TABLE_PARAMS)
def test_no_key_is_implied_by_another(name: str) -> None:
    losses = {key: parse_loss(key) for key in TABLES[name]}
    implied = [(k, o) for k, loss in losses.items() for o, other in losses.items() if _implied_by(loss, other)]
    assert implied == []


@pytest.mark.parametrize("name", sorted(RESHAPES))
def test_reshapes_are_words_not_loss_keys(name: str) -> None:
    # A reshape entry is prose for what no key can say: one that parsed would read as a (silently unapplied) loss.
    for key in RESHAPES[name]:
        with pytest.raises(LossKeyError):
            parse_loss(key)


def test_the_over_broad_list_itself_parses() -> None:
    for key in OVER_BROAD:
        parse_loss(key)


def test_value_check_accepts_literals_and_rejects_free_text() -> None:
    assert _value_ok(_field_type(parse_loss("StopReason.kind:stop_sequence")), "stop_sequence")
    assert _value_ok(_field_type(parse_loss("IRError.kind:network")), "network")
    assert _value_ok(_field_type(parse_loss("Request.max_tokens:None")), "None")
    assert _value_ok(_field_type(parse_loss("ThinkingConfig.enabled:False")), "False")
    assert not _value_ok(_field_type(parse_loss("ToolResultPart.content:text_joined")), "text_joined")
    assert not _value_ok(_field_type(parse_loss("ThinkingConfig.budget_tokens:when_disabled")), "when_disabled")


# --- the tables keep the request-side diff sighted --------------------------------------------------------

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYPgPAAEDAQAIicLsAAAAAElFTkSuQmCC"
RED = ir.ImagePart(source=ir.Base64Image(media_type="image/png", data=PNG))
BLUE = ir.ImagePart(source=ir.Base64Image(media_type="image/png", data=PNG.replace("AAAA", "AAAB", 1)))
WEATHER = ir.Tool(name="get_weather", description="Weather", parameters={"type": "object", "properties": {}})
CALL = ir.ToolCallPart(id="call_1", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city": "Paris"}')
RESULT = ir.ToolResultPart(tool_call_id="call_1", name="get_weather", content=[ir.TextPart(text="sunny")])


def client_request() -> ir.Request:
    """A request with interleaved images, a tool turn and settings every native protocol carries."""
    return ir.Request(
        model="m",
        system="Be brief.",
        messages=[
            ir.Message(
                role="user",
                content=[ir.TextPart(text="First:"), RED, ir.TextPart(text="Second:"), BLUE, ir.TextPart(text="Both?")],
            ),
            ir.Message(role="assistant", content=[ir.TextPart(text="Checking."), CALL]),
            ir.Message(role="tool", content=[RESULT]),
        ],
        tools=[WEATHER],
        temperature=0.5,
        max_tokens=300,
        stop=["END"],
    )


def _messages(request: ir.Request, i: int, content: list[Any]) -> ir.Request:
    messages = list(request.messages)
    messages[i] = messages[i].model_copy(update={"content": content})
    return request.model_copy(update={"messages": messages})


def _swap(part: ir.ContentPart) -> ir.ContentPart:
    return BLUE if part == RED else RED if part == BLUE else part


BUGS: dict[str, Callable[[ir.Request], ir.Request]] = {
    "an image dropped": lambda r: _messages(r, 0, [p for p in r.messages[0].content if p != BLUE]),
    "images swapped": lambda r: _messages(r, 0, [_swap(p) for p in r.messages[0].content]),
    "text changed": lambda r: _messages(
        r, 0, [ir.TextPart(text="Both!") if p.kind == "text" else p for p in r.messages[0].content]
    ),
    "arguments changed": lambda r: _messages(
        r,
        1,
        [
            ir.TextPart(text="Checking."),
            CALL.model_copy(update={"arguments": {"city": "Lyon"}, "arguments_raw": '{"city":"Lyon"}'}),
        ],
    ),
    "tool result changed": lambda r: _messages(
        r, 2, [RESULT.model_copy(update={"content": [ir.TextPart(text="rain")]})]
    ),
    "tools dropped": lambda r: r.model_copy(update={"tools": []}),
    "max_tokens changed": lambda r: r.model_copy(update={"max_tokens": 100}),
    "stop dropped": lambda r: r.model_copy(update={"stop": []}),
    "system dropped": lambda r: r.model_copy(update={"system": None}),
}
NATIVE = ("anthropic", "bedrock", "gemini", "ollama")


def _upstream(name: str, request: ir.Request) -> dict[str, Any]:
    codec = registry.get(name)
    return ir.to_json(codec.decode_request(codec.encode_request(request)))


@pytest.mark.parametrize("name", NATIVE)
def test_a_faithful_translation_has_no_request_divergence(name: str) -> None:
    client = client_request()
    losses = list(registry.get(name).losses)
    assert request_divergences(ir.to_json(client), _upstream(name, client), losses=losses) == []


@pytest.mark.parametrize("bug", sorted(BUGS))
@pytest.mark.parametrize("name", NATIVE)
def test_a_translation_bug_is_a_request_divergence(name: str, bug: str) -> None:
    client = client_request()
    losses = list(registry.get(name).losses)
    assert request_divergences(ir.to_json(client), _upstream(name, BUGS[bug](client)), losses=losses) != []


@pytest.mark.parametrize("name", ["ollama", "swink", "cloudflare"])
def test_a_protocol_without_a_file_part_leaves_it_out_and_lacks_files(name: str) -> None:
    codec = registry.get(name)
    file = ir.FilePart(media_type="application/pdf", data="JVBERi0xLjQK", filename="a.pdf")
    content = [ir.TextPart(text="Sum it up"), file]
    request = ir.Request(model="m", max_tokens=8, messages=[ir.Message(role="user", content=content)])
    body = codec.encode_request(request).body
    assert b"Sum it up" in body and b"JVBERi0" not in body and b"a.pdf" not in body
    assert "FilePart" in codec.losses and ir.Capability.FILES not in codec.capabilities
