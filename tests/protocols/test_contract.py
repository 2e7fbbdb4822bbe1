"""The codec contract (`harness.protocols.base.Codec`, docs/protocols.md "The codec contract"), run against every
registered protocol and profile: what each protocol's tests once copied under the same names.

Garbage in (random bytes, well-formed JSON of the wrong shape, invalid UTF-8, any truncation) raises only the
typed errors; `decode_error` never raises; a stream decodes the same in any chunking and ends in one terminal
event; plain text, a stream of it and an error survive their own wire. A new protocol gets all of this by being
registered. The round trips of any request, response, stream, stream ending in an error and error run on every
protocol's `ROUND_TRIPS` (`tests/protocols/roundtrip.py`): what it carries of them (its losses), what its wire must
look like (schemas, paths, headers) and how it differs (a second stream mode, the errors it cannot tell apart) are
data there, declared in its own `test_roundtrip.py`; its quirks keep tests named after them.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from harness import ir
from harness.ir import Capability
from harness.protocols import Codec, DecodeError, decode_events, encode_events, registry
from harness.stream import accumulate, validate
from harness.wire.errors import WireError
from harness.wire.eventstream import encode_message
from harness.wire.http import HttpRequest
from tests import strategies
from tests.protocols import roundtrip
from tests.protocols.mutate import every_decoder, mutated_bytes

NAMES = registry.names()

REFUSED_SHAPES: dict[str, tuple[str, ...]] = {
    "anthropic": ("{}", "[]", '"x"', "1", "null", '{"type": "message"}', '{"type": "message", "usage": []}'),
    "bedrock": ("{}", "[]", '"x"', "null", '{"output": {}}', '{"output": {"message": {"content": 1}}}'),
    "responses": (
        "{}", "[]", '"x"', "1", "null", '{"object": "list"}', '{"output": {}}', '{"output": [{"type": 1}]}',
        '{"output": [{"type": "message", "content": [{"type": "output_text"}]}]}', '{"usage": []}',
    ),
}  # fmt: skip
"""Per protocol: non-streamed bodies its `decode_response` must refuse (a protocol whose decoder reads an empty
object as an empty answer, as Gemini's does, has none)."""

FIELDS: dict[str, list[str]] = {
    "cloudflare": [
        "response", "tool_calls", "p", "usage", "prompt_tokens", "completion_tokens", "choices", "delta", "message",
        "content", "reasoning_content", "reasoning", "finish_reason", "id", "index", "function", "name", "arguments",
        "result", "success", "errors", "code", "messages", "role", "stream", "tools", "response_format", "type",
        "json_schema", "image_url", "url", "tool_call_id", "prompt", "max_tokens", "error",
    ],
    "ollama": [
        "model", "messages", "role", "content", "images", "tool_calls", "function", "name", "arguments", "message",
        "done", "done_reason", "error", "thinking", "options", "format", "think", "tools", "stream", "eval_count",
        "prompt_eval_count", "id", "tool_name", "tool_call_id", "stop", "temperature", "num_predict", "models",
    ],
    "openai": [
        "model", "messages", "role", "content", "tool_calls", "function", "name", "arguments", "id", "index", "type",
        "tool_call_id", "tools", "tool_choice", "stream", "stream_options", "include_usage", "stop", "max_tokens",
        "max_completion_tokens", "response_format", "json_schema", "schema", "strict", "choices", "delta", "message",
        "finish_reason", "usage", "prompt_tokens", "completion_tokens", "prompt_tokens_details", "cached_tokens",
        "completion_tokens_details", "reasoning_tokens", "reasoning_content", "reasoning", "refusal", "error", "code",
        "image_url", "url", "text", "x_groq", "prompt_cache_hit_tokens", "temperature", "parallel_tool_calls",
        "timings", "cache_n", "thinking", "prompt_filter_results",
    ],
    "swink": [
        "type", "content_index", "delta", "id", "name", "signature", "stop_reason", "usage", "cost", "input", "output",
        "error_message", "error_kind", "model", "system", "messages", "options", "role", "content", "text", "thinking",
        "arguments", "partial_json", "source", "media_type", "data", "url", "tool_call_id", "is_error", "max_tokens",
    ],
    "anthropic": [
        "type", "id", "model", "role", "content", "text", "thinking", "signature", "stop_reason", "stop_sequence",
        "usage", "input_tokens", "output_tokens", "message", "index", "content_block", "delta", "partial_json",
        "name", "input", "tool_use_id", "error", "messages", "system", "tools", "max_tokens", "stream",
    ],
    "bedrock": [
        "output", "message", "role", "content", "text", "toolUse", "toolUseId", "name", "input", "stopReason",
        "usage", "inputTokens", "outputTokens", "metrics", "messages", "system", "inferenceConfig", "toolConfig",
        "reasoningContent", "reasoningText", "signature", "contentBlockIndex", "delta", "start", "Message",
    ],
    "gemini": [
        "candidates", "content", "parts", "text", "thought", "thoughtSignature", "functionCall", "name", "args",
        "finishReason", "usageMetadata", "promptTokenCount", "candidatesTokenCount", "contents", "role",
        "systemInstruction", "tools", "generationConfig", "error", "code", "message", "status", "responseId",
    ],
    "responses": [
        "id", "object", "model", "output", "type", "role", "content", "text", "status", "usage", "input_tokens",
        "output_tokens", "response", "item", "item_id", "output_index", "content_index", "delta", "call_id",
        "name", "arguments", "summary", "encrypted_content", "error", "code", "message", "input", "instructions",
    ],
}  # fmt: skip
"""Per family: the field names its wrong-shape JSON is built from (its own wire's, so decoders get past the
first lookup); a family without an entry gets all of them."""
VALUES = st.sampled_from(
    ["[DONE]", "user", "assistant", "system", "developer", "tool", "function", "text", "image_url", "json_schema",
     "stop", "tool_calls", "start", "text_start", "text_delta", "done", "error", "tool_call_start", "message"]
)  # fmt: skip

TEXT = ir.Response(
    id="msg_1", model="m", content=[ir.TextPart(text="Hello, world")], stop_reason=ir.StopReason(kind="end_turn")
)


def _request(codec: Codec, body: bytes) -> HttpRequest:
    """`body` sent where this protocol's requests go (its own encoder says where)."""
    plain = codec.encode_request(
        ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])], stream=True)
    )
    return dataclasses.replace(plain, body=body)


def _every_decoder(codec: Codec, body: bytes) -> None:
    every_decoder(codec, body, _request(codec, body))


@pytest.mark.parametrize("name", NAMES)
def test_the_codec_is_registered_whole(name: str) -> None:
    codec = registry.get(name)
    assert isinstance(codec, Codec) and codec.name == name
    assert codec.family in registry.names() and registry.get(codec.family).family == codec.family
    assert codec.capabilities <= frozenset(Capability) and codec.stream_media_type
    assert all(isinstance(k, str) and isinstance(v, str) and v for k, v in codec.losses.items())
    assert codec.stream_decoder() is not codec.stream_decoder()


@pytest.mark.parametrize("name", NAMES)
@given(body=st.binary(max_size=300), prefix=st.sampled_from([b"", b"data: ", b"[", b"{"]))
def test_random_bytes_raise_only_wire_errors(name: str, body: bytes, prefix: bytes) -> None:
    _every_decoder(registry.get(name), prefix + body)
    _every_decoder(registry.get(name), b"data: " + body + b"\n\n")


def _shapes(name: str) -> st.SearchStrategy[Any]:
    keys = FIELDS.get(registry.get(name).family) or sorted({k for known in FIELDS.values() for k in known})
    return st.recursive(
        st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | VALUES | st.text(max_size=4),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(keys), inner, max_size=5),
        max_leaves=20,
    )


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_well_formed_json_of_the_wrong_shape_raises_only_wire_errors(name: str, data: st.DataObject) -> None:
    codec = registry.get(name)
    values = data.draw(st.lists(_shapes(name), max_size=4))
    _every_decoder(codec, json.dumps(values[0] if values else {}).encode())
    _every_decoder(codec, b"".join(b"data: " + json.dumps(v).encode() + b"\n\n" for v in values))
    _every_decoder(codec, b"".join(json.dumps(v).encode() + b"\n" for v in values))
    body = json.dumps(values[0] if values else {}).encode()
    _every_decoder(codec, b"data: " + body + b"\n\ndata: [DONE]\n\n")
    _every_decoder(codec, b"event: error\ndata: " + body + b"\n\n")


@pytest.mark.parametrize("name", sorted(REFUSED_SHAPES))
def test_wrong_json_shapes_raise_decode_error(name: str) -> None:
    for text in REFUSED_SHAPES[name]:
        with pytest.raises(WireError):
            registry.get(name).decode_response(text.encode())


@pytest.mark.parametrize("name", NAMES)
@given(
    data=st.data(),
    status=st.integers(100, 599),
    headers=st.dictionaries(
        st.sampled_from(["retry-after", "retry-after-ms", "x-amzn-errortype"]), st.text(max_size=30)
    ),
)
def test_decode_error_never_raises(name: str, data: st.DataObject, status: int, headers: dict[str, str]) -> None:
    codec = registry.get(name)
    own = codec.encode_error(data.draw(strategies.errors)).body
    body = data.draw(st.binary(max_size=300) | _shapes(name).map(lambda v: json.dumps(v).encode()) | mutated_bytes(own))
    error = codec.decode_error(status, headers, body)
    assert error.status == status
    assert error.retry_after is None or error.retry_after >= 0


INVALID_UTF8 = b'data: {"a": "\xff\xfe"}\n\n'


@pytest.mark.parametrize("name", NAMES)
def test_invalid_utf8_in_a_stream_raises_decode_error_naming_the_protocol(name: str) -> None:
    decoder = registry.get(name).stream_decoder()
    with pytest.raises(DecodeError) as caught:
        decoder.feed(INVALID_UTF8 * 2)
        decoder.close()
    assert caught.value.offset is not None or caught.value.protocol


@pytest.mark.parametrize("name", NAMES)
def test_plain_text_survives_the_wire(name: str) -> None:
    codec = registry.get(name)
    wire = codec.encode_response(TEXT)
    assert wire.status == 200
    assert codec.decode_response(wire.body).content == TEXT.content
    folds_system = any(k.startswith("Request.system") for k in [*codec.losses, *getattr(codec, "reshapes", {})])
    system = None if folds_system else "Be brief."  # Gemma folds it into the first user turn (a reshape)
    request = ir.Request(model="m", system=system, messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])])
    encoded = codec.encode_request(request)
    decoded = codec.decode_request(encoded)
    assert (decoded.model, decoded.system, decoded.messages) == (request.model, request.system, request.messages)
    stream = codec.encode_request(request.model_copy(update={"stream": True}))
    assert codec.is_stream_request(stream) and (codec.is_stream_request(encoded) in (False, name == "swink"))


@pytest.mark.parametrize("name", NAMES)
@given(response=strategies.responses(), chunk=st.integers(1, 5))
def test_streams_decode_the_same_in_any_chunking(name: str, response: ir.Response, chunk: int) -> None:
    codec = registry.get(name)
    body = encode_events(codec, strategies.events_for(response, chunk=chunk))
    whole = decode_events(codec, [body])
    assert validate(whole) == []
    assert decode_events(codec, [body[i : i + 1] for i in range(len(body))]) == whole
    assert decode_events(codec, [body[i : i + 13] for i in range(0, len(body), 13)]) == whole


@pytest.mark.parametrize("name", NAMES)
def test_a_streamed_text_answer_survives_the_wire(name: str) -> None:
    codec = registry.get(name)
    folded = accumulate(decode_events(codec, [encode_events(codec, strategies.events_for(TEXT))]))
    assert folded.error is None and folded.response.content == TEXT.content


@pytest.mark.parametrize("name", NAMES)
def test_every_truncation_of_a_stream_ends_with_one_terminal_event(name: str) -> None:
    codec = registry.get(name)
    body = encode_events(codec, strategies.events_for(TEXT, chunk=2))
    for cut in range(0, len(body), 7):
        events = decode_events(codec, [body[:cut]])
        assert validate(events) == [], cut
        assert [e.kind for e in events].count("done") + [e.kind for e in events].count("error") == 1, cut
        assert events[-1].kind in ("error", "done"), cut


@pytest.mark.parametrize("name", NAMES)
@given(kind=st.sampled_from([ir.ErrorKind.THROTTLED, ir.ErrorKind.AUTH, ir.ErrorKind.INVALID_REQUEST]))
def test_an_error_keeps_its_kind_and_message_on_the_wire(name: str, kind: ir.ErrorKind) -> None:
    codec = registry.get(name)
    wire = codec.encode_error(ir.IRError.of(kind, "it went wrong"))
    assert wire.status >= 400
    back = codec.decode_error(wire.status, wire.headers, wire.body)
    assert (back.kind, back.message, back.status) == (kind, "it went wrong", wire.status)


@pytest.mark.parametrize("name", NAMES)
def test_an_empty_body_is_a_malformed_stream(name: str) -> None:
    events = decode_events(registry.get(name), [b""])
    assert validate(events) == [] and [e.kind for e in events] == ["message_start", "error"]
    assert isinstance(events[-1], ir.ErrorEvent) and events[-1].error.kind is ir.ErrorKind.MALFORMED_STREAM


@pytest.mark.parametrize("name", NAMES)
def test_a_stream_ending_in_an_error_keeps_its_message(name: str) -> None:
    codec = registry.get(name)
    error = ir.IRError.of(ir.ErrorKind.SERVER, "it went wrong")
    body = encode_events(codec, [*strategies.events_for(TEXT)[:-1], ir.ErrorEvent(error=error)])
    events = decode_events(codec, [body])
    assert validate(events) == []
    assert isinstance(events[-1], ir.ErrorEvent) and events[-1].error.message == "it went wrong"


ROUND_TRIPS = roundtrip.gather()


def test_every_base_protocol_has_its_round_trips() -> None:
    assert {n for n in NAMES if registry.get(n).family == n} <= set(ROUND_TRIPS)


@pytest.mark.parametrize("name", sorted(n for n, spec in ROUND_TRIPS.items() if spec.rules is not None))
def test_the_projection_covers_exactly_the_losses_and_reshapes_tables(name: str) -> None:
    codec, rules = registry.get(name), ROUND_TRIPS[name].rules
    reshapes = set(getattr(codec, "reshapes", {}))
    assert rules == set(codec.losses) | reshapes and not set(codec.losses) & reshapes


@pytest.mark.parametrize("name", sorted(ROUND_TRIPS))
@given(request=strategies.requests)
def test_request_round_trip(name: str, request: ir.Request) -> None:
    spec, codec = ROUND_TRIPS[name], registry.get(name)
    wire = codec.encode_request(request)
    spec.check_request(wire, request)
    assert codec.is_stream_request(wire) is (spec.stream_only or request.stream)
    assert spec.seen_request(codec.decode_request(wire)) == spec.expect_request(request)


@pytest.mark.parametrize("name", sorted(ROUND_TRIPS))
@given(response=strategies.responses())
def test_response_round_trip(name: str, response: ir.Response) -> None:
    spec, codec = ROUND_TRIPS[name], registry.get(name)
    response = spec.prepare_response(response)
    wire = codec.encode_response(response)
    assert wire.status == 200
    spec.check_response(wire)
    assert spec.seen_response(codec.decode_response(wire.body)) == spec.expect_response(response)


@pytest.mark.parametrize("name", sorted(n for n, spec in ROUND_TRIPS.items() if spec.reencodes_byte_for_byte))
@given(request=strategies.requests)
def test_decoded_request_reencodes_to_the_same_body(name: str, request: ir.Request) -> None:
    # Pass-through fidelity: decode(encode(x)) re-encodes byte for byte, provider fields and shape included.
    codec = registry.get(name)
    wire = codec.encode_request(request)
    assert codec.encode_request(codec.decode_request(wire)).body == wire.body


@pytest.mark.parametrize("name", sorted(n for n, spec in ROUND_TRIPS.items() if spec.expect_stream))
@given(data=st.data(), response=strategies.responses(), chunk=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_stream_round_trip(name: str, data: st.DataObject, response: ir.Response, chunk: int, seed: int) -> None:
    spec, codec = ROUND_TRIPS[name], registry.get(name)
    assert spec.expect_stream is not None
    response = spec.prepare_response(response)
    events = strategies.events_for(response, chunk=chunk)
    bodies = spec.stream_bodies(codec, events)
    body = bodies[data.draw(st.sampled_from(sorted(bodies)), label="mode")]
    spec.check_stream(body, events)
    decoded = decode_events(codec, roundtrip.random_chunks(body, seed))
    assert validate(decoded) == []
    assert spec.seen_stream(decoded) == spec.expect_stream(response, chunk)


@pytest.mark.parametrize("name", sorted(n for n, spec in ROUND_TRIPS.items() if spec.expect_stream_error))
@given(response=strategies.responses(), error=strategies.errors)
def test_stream_ending_in_error_round_trip(name: str, response: ir.Response, error: ir.IRError) -> None:
    spec, codec = ROUND_TRIPS[name], registry.get(name)
    assert spec.expect_stream_error is not None
    before = strategies.events_for(response)[:-1] if spec.error_after_content else [ir.MessageStart(id="r1", model="m")]
    events = [*before, ir.ErrorEvent(error=error)]
    body = encode_events(codec, events)
    spec.check_stream(body, events)
    decoded = decode_events(codec, [body])
    assert validate(decoded) == [] and isinstance(decoded[-1], ir.ErrorEvent)
    assert spec.seen_stream_error(decoded) == spec.expect_stream_error(events)


@pytest.mark.parametrize("name", sorted(n for n, spec in ROUND_TRIPS.items() if spec.expect_error))
@given(error=strategies.errors)
def test_error_round_trip(name: str, error: ir.IRError) -> None:
    spec, codec = ROUND_TRIPS[name], registry.get(name)
    assert spec.expect_error is not None
    assume(spec.error_cases(error))
    wire = codec.encode_error(error)
    assert wire.status >= 400
    spec.check_error(wire, error)
    back = codec.decode_error(wire.status, wire.headers, wire.body)
    assert back.status == wire.status
    assert spec.seen_error(back) == spec.expect_error(error)


def _outcome(codec: Codec, chunks: list[bytes]) -> tuple[list[ir.StreamEvent], str | None]:
    """The events a client reading `chunks` gets, and the error that stopped it (None: it read them all)."""
    decoder, events = codec.stream_decoder(), []
    try:
        for chunk in chunks:
            events += decoder.feed(chunk)
        events += decoder.close()
    except WireError as exc:
        return events, str(exc)
    return events, None


EVENTSTREAM_HEADERS = {
    ":event-type": "contentBlockDelta",
    ":content-type": "application/json",
    ":message-type": "event",
}
_FRAME = encode_message(EVENTSTREAM_HEADERS, b"{}")
FRAMING_JUNK = {"sse": b"data: \xff\n\n", "ndjson": b"{bad\n", "eventstream": _FRAME[:-1] + bytes([_FRAME[-1] ^ 1])}
"""A unit that breaks each framing: an SSE line of invalid UTF-8, an NDJSON line of invalid JSON, an AWS event
stream frame whose checksum is wrong."""
PROTOCOL_JUNK = {
    "sse": b"data: [1,2]\n\n",
    "ndjson": b"[1,2]\n",
    "eventstream": encode_message(EVENTSTREAM_HEADERS, b"[1,2]"),
}
"""A unit that frames well but that no protocol reads: a JSON array where an object belongs."""


def _first_unit(body: bytes) -> tuple[int, str]:
    """Where a stream's first unit ends, and its framing."""
    if body.startswith((b"data:", b"event:")):
        return min(i + len(sep) for sep in (b"\n\n", b"\r\n\r\n") if (i := body.find(sep)) >= 0), "sse"
    if body.startswith(b"{") and b"\n" in body:
        return body.index(b"\n") + 1, "ndjson"
    return int.from_bytes(body[:4], "big"), "eventstream"  # AWS event stream: the first frame's total length


@pytest.mark.parametrize("name", NAMES)
def test_a_malformed_line_after_an_event_fails_the_stream_alike_wherever_the_chunks_are_cut(name: str) -> None:
    """A framing error met in a chunk after events it completed is raised by the next call (sticky). Decoders that
    forgive `close`'s error (a stream cut off mid-line is one that ended early) forgave that sticky error too: an
    Ollama stream with a whole line of bad JSON after its first line ended in a malformed-stream event when read
    in one piece, and raised when the bad line came in a chunk of its own."""
    codec = registry.get(name)
    body = encode_events(codec, strategies.events_for(TEXT, chunk=2))
    first, framing = _first_unit(body)
    stream = body[:first] + FRAMING_JUNK[framing]
    whole = _outcome(codec, [stream])
    assert whole[1] is not None, whole
    for cut in range(len(stream) + 1):
        assert _outcome(codec, [stream[:cut], stream[cut:]]) == whole, cut


@pytest.mark.parametrize("name", NAMES)
def test_a_malformed_event_after_a_good_one_gives_the_same_events_wherever_the_chunks_are_cut(name: str) -> None:
    """A unit that frames well but that the protocol cannot read, after one it can: the events before it and then
    the error, alike for the two in one chunk and for any cut. The protocol decoders used to lose the events of
    the chunk the bad unit came in (`decode_each`, `FramedDecoder`): 0 events read in one piece, the first event
    read when a cut fell between the two."""
    codec = registry.get(name)
    body = encode_events(codec, strategies.events_for(TEXT, chunk=2))
    first, framing = _first_unit(body)
    junk = PROTOCOL_JUNK[framing]
    stream = body[:first] + junk
    whole = _outcome(codec, [stream])
    assert whole[1] is not None, whole
    alone = _outcome(codec, [body[:first], junk])
    assert whole == alone
    assert whole[0] == _outcome(codec, [body[:first]])[0][: len(whole[0])]  # what came before, then the error
    for cut in range(len(stream) + 1):
        assert _outcome(codec, [stream[:cut], stream[cut:]]) == whole, cut
