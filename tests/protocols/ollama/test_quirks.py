"""Ollama wire quirks, each seen in real traffic or in Ollama's API reference, one test per quirk."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

import pytest

from harness import ir
from harness.ir import Capability
from harness.protocols import DecodeError, decode_events, encode_events
from harness.protocols.ollama import decode_tags, encode_tags
from harness.protocols.ollama.errors import error_kind
from harness.stream import accumulate, validate
from harness.wire.http import HttpRequest
from tests.protocols.ollama import support
from tests.protocols.ollama.support import CODEC


def _lines(*objs: object) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def _chunk(content: str = "", *, done: bool = False, **fields: object) -> dict[str, object]:
    message: dict[str, object] = {"role": "assistant", "content": content}
    message.update({k: fields.pop(k) for k in ("thinking", "tool_calls") if k in fields})
    return {"model": "qwen3", "created_at": "2025-01-01T00:00:00Z", "message": message, "done": done, **fields}


def _request(body: Mapping[str, Any]) -> ir.Request:
    return CODEC.decode_request(HttpRequest(method="POST", path="/api/chat", body=json.dumps(body).encode()))


CALL = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}


def test_tool_calls_only_on_the_final_done_line_without_ids() -> None:
    body = _lines(
        _chunk("Checking."),
        _chunk(done=True, done_reason="stop", tool_calls=[CALL], prompt_eval_count=9, eval_count=4),
    )
    events = decode_events(CODEC, [body])
    assert validate(events) == []
    result = accumulate(events).response
    assert [p.kind for p in result.content] == ["text", "tool_call"]
    call = result.content[1]
    assert isinstance(call, ir.ToolCallPart)
    assert (call.name, call.arguments, call.arguments_raw) == ("get_weather", {"city": "Paris"}, '{"city":"Paris"}')
    assert call.id.startswith("call_")
    assert result.stop_reason == ir.StopReason(kind="tool_use", raw="stop")
    assert result.usage == ir.Usage(input_tokens=9, output_tokens=4)
    # The synthesized id is deterministic and the same for the non-streamed form of the reply.
    assert accumulate(decode_events(CODEC, [body])).response == result
    nonstream = _chunk("Checking.", done=True, done_reason="stop", tool_calls=[CALL])
    assert CODEC.decode_response(json.dumps(nonstream).encode()).content[1] == call


def test_thinking_and_content_interleaved_become_blocks_in_wire_order() -> None:
    body = _lines(
        _chunk(thinking="a"),
        _chunk("b"),
        _chunk(thinking="c"),
        _chunk("d", thinking="e"),  # one line with both: thinking first
        _chunk(done=True, done_reason="stop"),
    )
    events = decode_events(CODEC, [body])
    assert validate(events) == []
    assert accumulate(events).response.content == [
        ir.ThinkingPart(text="a"),
        ir.TextPart(text="b"),
        ir.ThinkingPart(text="ce"),
        ir.TextPart(text="d"),
    ]


def test_midstream_error_line_ends_the_stream_with_an_error_event() -> None:
    body = _lines(_chunk("par"), {"error": "an error was encountered while running the model: unexpected EOF"})
    events = decode_events(CODEC, [body])
    assert validate(events) == []
    assert events[-1] == ir.ErrorEvent(
        error=ir.IRError.of(ir.ErrorKind.SERVER, "an error was encountered while running the model: unexpected EOF")
    )
    assert accumulate(events).response.content == [ir.TextPart(text="par")]


def test_midstream_error_that_names_a_missing_model_is_not_found() -> None:
    events = decode_events(CODEC, [_lines({"error": 'model "nope" not found, try pulling it first'})])
    assert events[0] == ir.MessageStart()
    assert isinstance(events[-1], ir.ErrorEvent)
    assert events[-1].error.kind == ir.ErrorKind.NOT_FOUND


def test_stream_without_a_done_line_is_a_malformed_stream() -> None:
    events = decode_events(CODEC, [_lines(_chunk("Hello"))])
    assert validate(events) == []
    assert events[-2] == ir.TextEnd(index=0)
    last = events[-1]
    assert isinstance(last, ir.ErrorEvent)
    assert last.error.kind == ir.ErrorKind.MALFORMED_STREAM
    assert "done:true" in last.error.message


def test_stream_cut_inside_a_line_is_a_malformed_stream() -> None:
    body = _lines(_chunk("Hello"), _chunk(done=True, done_reason="stop"))
    events = decode_events(CODEC, [body[:-20]])
    last = events[-1]
    assert isinstance(last, ir.ErrorEvent)
    assert last.error.kind == ir.ErrorKind.MALFORMED_STREAM
    assert "inside a line" in last.error.message


def test_data_after_the_done_line_is_a_decode_error() -> None:
    body = _lines(_chunk(done=True, done_reason="stop"), _chunk("late"))
    with pytest.raises(DecodeError, match="after the final line"):
        decode_events(CODEC, [body])


def test_final_line_without_trailing_newline_is_accepted() -> None:
    body = _lines(_chunk("Hi"), _chunk(done=True, done_reason="length", eval_count=1)).rstrip(b"\n")
    events = decode_events(CODEC, [body])
    assert events[-1] == ir.Done(
        stop_reason=ir.StopReason(kind="max_tokens", raw="length"), usage=ir.Usage(output_tokens=1)
    )


@pytest.mark.parametrize(
    ("done_reason", "kind"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("load", "other"), ("unload", "other")],
)
def test_done_reason_maps_to_stop_kind(done_reason: str, kind: str) -> None:
    events = decode_events(CODEC, [_lines(_chunk(done=True, done_reason=done_reason))])
    assert events[-1] == ir.Done(stop_reason=ir.StopReason(kind=kind, raw=done_reason), usage=ir.Usage())


def test_stream_defaults_to_true_when_absent() -> None:
    body = {"model": "llama3.2", "messages": [{"role": "user", "content": "hi"}]}
    wire = HttpRequest(method="POST", path="/api/chat", body=json.dumps(body).encode())
    assert CODEC.is_stream_request(wire) is True
    assert CODEC.decode_request(wire).stream is True
    assert CODEC.is_stream_request(HttpRequest(method="GET", path="/api/tags")) is False


def test_think_level_string_is_kept_for_the_round_trip() -> None:
    request = _request({"model": "gpt-oss:20b", "messages": [], "think": "high"})
    assert request.thinking == ir.ThinkingConfig(enabled=True)
    assert request.provider_fields == {"ollama": {"think": "high"}}
    wire = CODEC.encode_request(request)
    support.check_request(wire)
    assert json.loads(wire.body)["think"] == "high"
    assert _request({"model": "m", "think": False}).thinking == ir.ThinkingConfig(enabled=False)


def test_format_json_and_schema() -> None:
    schema = {"type": "object", "properties": {"age": {"type": "integer"}}}
    assert _request({"model": "m", "format": "json"}).response_format == ir.ResponseFormatJsonObject()
    assert _request({"model": "m", "format": schema}).response_format == ir.ResponseFormatJsonSchema(schema_=schema)
    assert _request({"model": "m"}).response_format is None
    with pytest.raises(DecodeError):
        _request({"model": "m", "format": "yaml"})


def test_options_map_to_ir_and_the_rest_is_kept() -> None:
    request = _request(
        {"model": "m", "options": {"temperature": 0.5, "top_p": 0.9, "num_predict": 12, "stop": "\n", "top_k": 40}}
    )
    assert (request.temperature, request.top_p, request.max_tokens, request.stop) == (0.5, 0.9, 12, ["\n"])
    assert request.provider_fields == {"ollama": {"options": {"top_k": 40}}}
    wire = CODEC.encode_request(request)
    support.check_request(wire)
    encoded = json.loads(wire.body)
    assert encoded["options"] == {"temperature": 0.5, "top_p": 0.9, "num_predict": 12, "stop": ["\n"], "top_k": 40}


@pytest.mark.parametrize(
    ("head", "media_type"),
    [
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff\xe0", "image/jpeg"),
        (b"GIF89a", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"hello world", "application/octet-stream"),
    ],
)
def test_images_have_no_media_type_so_it_is_sniffed(head: bytes, media_type: str) -> None:
    data = base64.b64encode(head + b"\x00" * 10).decode()
    request = _request({"model": "m", "messages": [{"role": "user", "content": "", "images": [data]}]})
    assert request.messages[0].content == [ir.ImagePart(source=ir.Base64Image(media_type=media_type, data=data))]


def test_image_that_is_not_base64_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="not base64"):
        _request({"model": "m", "messages": [{"role": "user", "images": ["data:image/png;base64,AAAA"]}]})


def test_url_images_are_dropped_by_the_encoder() -> None:
    request = ir.Request(
        model="m",
        messages=[
            ir.Message(
                role="user",
                content=[
                    ir.TextPart(text="what is this?"),
                    ir.ImagePart(source=ir.UrlImage(url="https://x.test/a.png")),
                ],
            )
        ],
    )
    wire = CODEC.encode_request(request)
    support.check_request(wire)
    body = json.loads(wire.body)
    assert body["messages"] == [{"role": "user", "content": "what is this?"}]
    assert "UrlImage" in CODEC.losses


def test_tool_result_with_tool_call_id_keeps_it() -> None:
    request = _request(
        {
            "model": "m",
            "messages": [
                {"role": "assistant", "content": "", "tool_calls": [{"id": "call_a", **CALL}]},
                {"role": "tool", "content": "sunny", "tool_name": "get_weather", "tool_call_id": "call_a"},
            ],
        }
    )
    assert request.messages[1].content == [
        ir.ToolResultPart(tool_call_id="call_a", name="get_weather", content=[ir.TextPart(text="sunny")])
    ]


def test_tool_result_with_no_matching_call_gets_a_deterministic_id() -> None:
    body = {"model": "m", "messages": [{"role": "tool", "content": "x", "tool_name": "lookup"}]}
    first, second = _request(body), _request(body)
    assert first == second
    (part,) = first.messages[0].content
    assert isinstance(part, ir.ToolResultPart)
    assert part.tool_call_id.startswith("call_")


def test_leading_system_message_becomes_request_system() -> None:
    request = _request(
        {
            "model": "m",
            "messages": [
                {"role": "system", "content": "Be terse."},
                {"role": "user", "content": "hi"},
                {"role": "system", "content": "Later."},
            ],
        }
    )
    assert request.system == "Be terse."
    assert [m.role for m in request.messages] == ["user", "system"]


NOT_PULLED = 'model "llama9" not found, try pulling it first'
NO_TOOLS = "registry.ollama.ai/library/gemma3:1b does not support tools"
BUSY = "server busy, please try again.  maximum pending requests exceeded"
TOO_LONG = "input length exceeds the context length"


@pytest.mark.parametrize(
    ("status", "body", "kind", "message"),
    [
        (404, json.dumps({"error": NOT_PULLED}).encode(), "not_found", NOT_PULLED),
        (400, json.dumps({"error": NO_TOOLS}).encode(), "invalid_request", NO_TOOLS),
        (500, json.dumps({"error": NOT_PULLED}).encode(), "not_found", NOT_PULLED),
        (503, json.dumps({"error": BUSY}).encode(), "overloaded", BUSY),
        (401, b'{"error":"unauthorized"}', "auth", "unauthorized"),
        (400, json.dumps({"error": TOO_LONG}).encode(), "context_window_exceeded", TOO_LONG),
        (502, b"<html>Bad Gateway</html>", "server", "<html>Bad Gateway</html>"),
        (500, b"\xff\xfe not utf-8", "server", "\ufffd\ufffd not utf-8"),
        (400, b'{"error":{"message":"bad thing","type":"invalid_request_error"}}', "invalid_request", "bad thing"),
    ],
)
def test_error_kind_comes_from_status_and_message(status: int, body: bytes, kind: str, message: str) -> None:
    error = CODEC.decode_error(status, {}, body)
    assert (error.kind.value, error.message, error.status) == (kind, message, status)


def test_retry_after_header_is_read() -> None:
    error = CODEC.decode_error(429, {"Retry-After": "7"}, b'{"error":"too many requests"}')
    assert (error.kind, error.retry_after, error.retryable) == (ir.ErrorKind.THROTTLED, 7.0, True)


def test_with_auth_adds_a_bearer_token() -> None:
    wire = CODEC.with_auth(CODEC.encode_request(ir.Request(model="m")), "secret")
    assert wire.headers["authorization"] == "Bearer secret"


def test_encoder_rejects_non_object_tool_arguments() -> None:
    events: list[ir.StreamEvent] = [
        ir.MessageStart(model="m"),
        ir.ToolCallStart(index=0, id="c", name="f"),
        ir.ToolCallDelta(index=0, arguments="[1, 2]"),
        ir.ToolCallEnd(index=0),
    ]
    with pytest.raises(ValueError, match="not a JSON object"):
        encode_events(CODEC, events)


def test_encoder_folds_usage_events_into_the_final_line() -> None:
    events: list[ir.StreamEvent] = [
        ir.MessageStart(model="m", usage=ir.Usage(input_tokens=5)),
        ir.UsageEvent(usage=ir.Usage(output_tokens=2)),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn")),
    ]
    body = encode_events(CODEC, events)
    support.check_stream(body)
    final = json.loads(body.splitlines()[-1])
    assert (final["done"], final["done_reason"], final["prompt_eval_count"], final["eval_count"]) == (
        True,
        "stop",
        5,
        2,
    )


def test_tags_round_trip() -> None:
    wire = encode_tags(["llama3.2:latest", "gpt-oss:20b"])
    assert decode_tags(wire.body) == ["llama3.2:latest", "gpt-oss:20b"]
    assert decode_tags(b'{"models":[{"name":"old-style"}]}') == ["old-style"]
    with pytest.raises(DecodeError):
        decode_tags(b'{"models":[{}]}')


def test_an_error_before_any_content_is_an_http_status_never_a_stream_that_begins_with_it() -> None:
    # ollama server/routes.go `streamResponse`: an error that comes before anything was written is `c.JSON(status,
    # {"error": e})` (the StatusError's status, else 500); the `{"error"}` NDJSON line only follows content. So
    # a 200 stream whose first event is an error is not Ollama's wire: the stream-error-first scenario is
    # unsupported with Ollama on either side, and the status carries the kind instead.
    assert Capability.STREAM_ERROR_FIRST not in CODEC.capabilities
    error = CODEC.decode_error(429, {"content-type": "application/json"}, b'{"error":"too many requests"}')
    assert (error.kind, error.status) == (ir.ErrorKind.THROTTLED, 429)
    first = CODEC.decode_error(500, {}, b'{"error":"model runner has unexpectedly stopped"}')
    assert first.kind is ir.ErrorKind.SERVER


def test_bedrocks_throttling_message_is_not_read_as_a_context_overflow() -> None:
    # "Too many tokens, please wait before trying again." is Bedrock's ThrottlingException message; a flat
    # Ollama error line carrying it must not become context_window_exceeded ("too many input tokens" is).
    throttle = "Too many tokens, please wait before trying again."
    assert error_kind(None, throttle) is ir.ErrorKind.SERVER
    assert error_kind(429, throttle) is ir.ErrorKind.THROTTLED
    assert error_kind(None, "prompt has too many input tokens") is ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED
