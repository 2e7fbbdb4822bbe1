"""Request decoding and encoding: the Messages API's shapes and how the codec maps each."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from harness import ir
from harness.protocols import DecodeError
from harness.protocols.anthropic.mapping import DEFAULT_MAX_TOKENS
from harness.wire.http import HttpRequest
from tests.protocols.anthropic.support import CODEC, assert_schema


def wire(body: dict[str, Any], **headers: str) -> HttpRequest:
    """A POST /v1/messages request with this JSON body."""
    return HttpRequest(method="POST", path="/v1/messages", headers=headers, body=json.dumps(body).encode())


def decode(**body: Any) -> ir.Request:
    """Decode a body with model and one user message filled in unless given."""
    base: dict[str, Any] = {
        "model": "claude-haiku-4-5",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    return CODEC.decode_request(wire({**base, **body}))


def encoded(request: ir.Request) -> dict[str, Any]:
    """The JSON body the encoder makes, schema-checked."""
    body: dict[str, Any] = json.loads(CODEC.encode_request(request).body)
    assert_schema("request", body)
    return body


def test_system_as_string_and_as_blocks() -> None:
    assert decode(system="Be brief.").system == "Be brief."
    blocks = [
        {"type": "text", "text": "One."},
        {"type": "text", "text": "Two.", "cache_control": {"type": "ephemeral"}},
    ]
    request = decode(system=blocks)
    assert request.system == "One.\n\nTwo."
    assert request.provider_fields["anthropic"]["system"] == blocks
    assert encoded(request)["system"] == blocks  # blocks kept while they still say what the IR says
    changed = request.model_copy(update={"system": "Something else."})
    assert encoded(changed)["system"] == "Something else."  # a translation's change is never overridden


def test_system_encodes_as_a_string_by_default() -> None:
    body = encoded(ir.Request(model="m", system="Be brief.", messages=[]))
    assert body["system"] == "Be brief."
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS == 4096


def test_image_blocks_base64_and_url() -> None:
    request = decode(
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}},
                    {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
                    {"type": "text", "text": "What are these?"},
                ],
            }
        ]
    )
    assert request.messages[0].content == [
        ir.ImagePart(source=ir.Base64Image(media_type="image/png", data="iVBORw0K")),
        ir.ImagePart(source=ir.UrlImage(url="https://example.com/cat.jpg")),
        ir.TextPart(text="What are these?"),
    ]
    assert request.provider_fields == {}


def test_tool_result_string_content_and_is_error() -> None:
    request = decode(
        messages=[
            {"role": "user", "content": "Go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "run", "input": {"n": 1}}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True}],
            },
        ]
    )
    call = request.messages[1].content[0]
    assert call == ir.ToolCallPart(id="t1", name="run", arguments={"n": 1}, arguments_raw='{"n":1}')
    assert request.messages[2] == ir.Message(
        role="tool",
        content=[ir.ToolResultPart(tool_call_id="t1", name="run", content=[ir.TextPart(text="boom")], is_error=True)],
    )
    assert encoded(request)["messages"][2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True}],
    }


def test_tool_result_without_a_matching_tool_use_has_no_name() -> None:
    request = decode(messages=[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz"}]}])
    assert request.messages[0].content == [ir.ToolResultPart(tool_call_id="zz", name=None, content=[])]


def test_user_message_mixing_tool_results_and_text_splits_and_joins_back() -> None:
    content = [
        {"type": "tool_result", "tool_use_id": "a", "content": "1"},
        {
            "type": "tool_result",
            "tool_use_id": "b",
            "content": [{"type": "text", "text": "2"}, {"type": "text", "text": "3"}],
        },
        {"type": "text", "text": "thanks"},
    ]
    request = decode(messages=[{"role": "user", "content": content}])
    assert [m.role for m in request.messages] == ["tool", "user"]
    assert encoded(request)["messages"] == [{"role": "user", "content": content}]


def test_thinking_and_redacted_thinking_in_assistant_history() -> None:
    request = decode(
        messages=[
            {"role": "user", "content": "Q"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "sig=="},
                    {"type": "redacted_thinking", "data": "opaque"},
                    {"type": "text", "text": "A"},
                ],
            },
        ]
    )
    assert request.messages[1].content == [
        ir.ThinkingPart(text="hmm", signature="sig=="),
        ir.RedactedThinkingPart(data="opaque"),
        ir.TextPart(text="A"),
    ]
    # unsigned thinking (from another provider) goes out with the empty signature the wire field needs
    unsigned = ir.Message(role="assistant", content=[ir.ThinkingPart(text="x")])
    body = encoded(ir.Request(model="m", messages=[unsigned]))
    assert body["messages"][0]["content"] == [{"type": "thinking", "thinking": "x", "signature": ""}]


@pytest.mark.parametrize(
    ("wire_choice", "choice", "parallel"),
    [
        ({"type": "auto"}, ir.ToolChoiceAuto(), None),
        ({"type": "any"}, ir.ToolChoiceRequired(), None),
        ({"type": "tool", "name": "run"}, ir.ToolChoiceTool(name="run"), None),
        ({"type": "none"}, ir.ToolChoiceNone(), None),
        ({"type": "auto", "disable_parallel_tool_use": True}, ir.ToolChoiceAuto(), False),
        ({"type": "any", "disable_parallel_tool_use": False}, ir.ToolChoiceRequired(), True),
    ],
)
def test_tool_choice(wire_choice: dict[str, Any], choice: ir.ToolChoice, parallel: bool | None) -> None:
    tools = [{"name": "run", "input_schema": {"type": "object"}}]
    request = decode(tools=tools, tool_choice=wire_choice)
    assert (request.tool_choice, request.parallel_tool_calls) == (choice, parallel)
    assert encoded(request)["tool_choice"] == wire_choice


def test_parallel_tool_calls_without_a_tool_choice_rides_on_auto() -> None:
    body = encoded(ir.Request(model="m", parallel_tool_calls=False))
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


@pytest.mark.parametrize(
    ("wire_thinking", "thinking"),
    [
        ({"type": "enabled", "budget_tokens": 2048}, ir.ThinkingConfig(enabled=True, budget_tokens=2048)),
        ({"type": "disabled"}, ir.ThinkingConfig(enabled=False)),
        ({"type": "adaptive"}, ir.ThinkingConfig(enabled=True)),
    ],
)
def test_thinking_config(wire_thinking: dict[str, Any], thinking: ir.ThinkingConfig) -> None:
    request = decode(thinking=wire_thinking)
    assert request.thinking == thinking and request.provider_fields == {}
    assert encoded(request)["thinking"] == wire_thinking


def test_structured_output_format_and_effort() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    request = decode(output_config={"effort": "low", "format": {"type": "json_schema", "schema": schema}})
    assert request.response_format == ir.ResponseFormatJsonSchema(schema_=schema)
    assert request.provider_fields == {"anthropic": {"output_config": {"effort": "low"}}}
    assert encoded(request)["output_config"] == {"effort": "low", "format": {"type": "json_schema", "schema": schema}}
    beta = decode(output_format={"type": "json_schema", "schema": schema})  # the structured-outputs beta spelling
    assert beta.response_format == ir.ResponseFormatJsonSchema(schema_=schema)
    assert encoded(beta)["output_format"] == {"type": "json_schema", "schema": schema}
    assert "output_config" not in encoded(beta)


def test_unknown_top_level_fields_ride_in_provider_fields() -> None:
    extra = {
        "metadata": {"user_id": "u"},
        "top_k": 3,
        "service_tier": "auto",
        "container": "c1",
        "cache_control": {"type": "ephemeral"},
    }
    request = decode(**extra)
    assert request.provider_fields == {"anthropic": extra}
    body = encoded(request)
    assert {k: body[k] for k in extra} == extra


def test_server_tools_and_unmapped_blocks_survive_a_pass_through() -> None:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "document", "source": {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}},
                {"type": "text", "text": "Sum up"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "q"}},
                {"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": []},
                {"type": "text", "text": "Done", "citations": [{"type": "char_location", "cited_text": "d"}]},
            ],
        },
    ]
    tools = [{"type": "web_search_20250305", "name": "web_search"}]
    request = decode(messages=messages, tools=tools)
    assert [m.content for m in request.messages] == [[ir.TextPart(text="Sum up")], [ir.TextPart(text="Done")]]
    assert request.tools == []
    body = encoded(request)
    assert (body["messages"], body["tools"]) == (messages, tools)
    # once the IR messages change, the stale raw messages are not sent
    changed = request.model_copy(update={"messages": request.messages[:1]})
    assert encoded(changed)["messages"] == [{"role": "user", "content": "Sum up"}]


def test_count_tokens_body_has_no_max_tokens() -> None:
    request = CODEC.decode_request(
        HttpRequest(
            method="POST",
            path="/v1/messages/count_tokens",
            body=json.dumps({"model": "claude-haiku-4-5", "messages": [{"role": "user", "content": "Hi"}]}).encode(),
        )
    )
    assert request.max_tokens is None and request.messages[0].content == [ir.TextPart(text="Hi")]


def test_encoder_headers_auth_and_stream_flag() -> None:
    request = ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="Hi")])], stream=True)
    http = CODEC.encode_request(request)
    assert (http.method, http.path) == ("POST", "/v1/messages")
    assert http.headers == {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    assert "x-api-key" not in http.headers
    authed = CODEC.with_auth(http, "sk-ant-123")
    assert authed.headers["x-api-key"] == "sk-ant-123" and authed.body == http.body
    assert CODEC.is_stream_request(http) is True
    assert json.loads(http.body)["messages"] == [{"role": "user", "content": "Hi"}]


def test_in_conversation_system_message_is_sent_as_a_user_turn() -> None:
    request = ir.Request(model="m", messages=[ir.Message(role="system", content=[ir.TextPart(text="Rules")])])
    assert encoded(request)["messages"] == [{"role": "user", "content": "Rules"}]


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[1, 2]",
        b'{"messages": []}',
        b'{"model": "m", "messages": [{"role": "system", "content": "x"}]}',
        b'{"model": "m", "messages": [{"role": "user", "content": 5}]}',
        b'{"model": "m", "messages": [{"role": "user", "content": [{"type": "text"}]}]}',
        b'{"model": "m", "messages": [], "tool_choice": {"type": "sometimes"}}',
        b'{"model": "m", "messages": [], "thinking": {"type": "enabled"}}',
        b'{"model": "m", "messages": [], "temperature": true}',
        b'{"model": "m", "messages": [], "max_tokens": "many"}',
        b'{"model": "m", "messages": [], "temperature": 1' + b"0" * 400 + b"}",
        b"[" * 100_000,
    ],
    ids=lambda b: b[:40].decode(errors="replace"),
)
def test_bad_requests_raise_decode_error(body: bytes) -> None:
    with pytest.raises(DecodeError):
        CODEC.decode_request(HttpRequest(method="POST", path="/v1/messages", body=body))


def test_anthropic_version_of_the_client_is_kept_through_translation() -> None:
    # An Anthropic client that chose another API version (the SDK's 2026-10-21 rejects `temperature`) keeps it
    # upstream; a request from another API is written for, and sent with, the version the encoder pins.
    body = json.dumps({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}).encode()
    headers = {"content-type": "application/json", "anthropic-version": "2026-10-21"}
    request = CODEC.decode_request(HttpRequest(method="POST", path="/v1/messages", headers=headers, body=body))
    assert CODEC.encode_request(request).headers["anthropic-version"] == "2026-10-21"
    plain = ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])])
    assert CODEC.encode_request(plain).headers["anthropic-version"] == "2023-06-01"


def test_an_empty_system_prompt_is_not_sent() -> None:
    # A real Responses request's `instructions: ""` is an empty IR system prompt; `"system": ""` is no Anthropic
    # client's request (and the decoder reads it as none), so the proxy leaves the field out.
    empty = ir.Request(model="m", system="", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])])
    body = json.loads(CODEC.encode_request(empty).body)
    assert "system" not in body
    assert json.loads(CODEC.encode_request(empty.model_copy(update={"system": "Be brief."})).body)["system"] == (
        "Be brief."
    )


PDF = "JVBERi0xLjQK"  # "%PDF-1.4\n"


def test_pdf_document_is_a_base64_source_and_its_filename_is_not_sent() -> None:
    part = ir.FilePart(media_type="application/pdf", data=PDF, filename="a.pdf")
    request = ir.Request(model="m", max_tokens=5, messages=[ir.Message(role="user", content=[part])])
    block = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}}
    assert encoded(request)["messages"] == [{"role": "user", "content": [block]}]
    assert decode(messages=[{"role": "user", "content": [block]}]).messages[0].content == [
        part.model_copy(update={"filename": None})
    ]


def test_text_plain_document_is_a_text_source_carried_base64_in_the_ir() -> None:
    block = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Grüße"}}
    (part,) = decode(messages=[{"role": "user", "content": [block]}]).messages[0].content
    assert part == ir.FilePart(media_type="text/plain", data=base64.b64encode("Grüße".encode()).decode())
    request = ir.Request(model="m", max_tokens=5, messages=[ir.Message(role="user", content=[part])])
    assert encoded(request)["messages"][0]["content"] == [block]


def test_text_plain_file_that_is_not_utf8_goes_as_a_base64_source() -> None:
    part = ir.FilePart(media_type="text/plain", data=base64.b64encode(b"\xff\xfe").decode())
    request = ir.Request(model="m", max_tokens=5, messages=[ir.Message(role="user", content=[part])])
    (block,) = json.loads(CODEC.encode_request(request).body)["messages"][0]["content"]
    assert block["source"] == {"type": "base64", "media_type": "text/plain", "data": part.data}


def test_a_document_by_url_is_a_url_file_part_both_ways() -> None:
    block = {"type": "document", "source": {"type": "url", "url": "https://example.com/d.pdf"}}
    request = decode(messages=[{"role": "user", "content": [block, {"type": "text", "text": "Sum up"}]}])
    assert request.messages[0].content == [ir.FilePart(url="https://example.com/d.pdf"), ir.TextPart(text="Sum up")]
    assert encoded(request)["messages"][0]["content"][0] == block


def test_a_document_by_another_providers_file_id_is_refused_not_sent() -> None:
    """Anthropic declares no file_id capability: an id from OpenAI's Files means nothing to it."""
    request = ir.Request(
        model="m", max_tokens=10, messages=[ir.Message(role="user", content=[ir.FilePart(file_id="file-abc")])]
    )
    with pytest.raises(ValueError, match="another provider's stored file"):
        CODEC.encode_request(request)
