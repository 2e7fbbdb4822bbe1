"""Requests: every field the issue lists decodes to IR and re-encodes as the client wrote it; what the IR has no
place for stays in `provider_fields["responses"]`; a request from another protocol is written the way a
stateless translation needs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import ir
from harness.protocols import DecodeError
from harness.protocols.responses import schemas, stateful_fields
from harness.wire.http import HttpRequest
from tests.protocols.responses.support import CODEC

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYPgPAAEDAQAIicLsAAAAAElFTkSuQmCC"


def wire(body: dict[str, Any]) -> HttpRequest:
    """A client request with this JSON body."""
    return HttpRequest(method="POST", path="/v1/responses", body=json.dumps(body).encode())


def decode(body: dict[str, Any]) -> ir.Request:
    """Decode a body, and check that re-encoding the IR gives the same JSON back (pass-through fidelity)."""
    request = CODEC.decode_request(wire(body))
    assert json.loads(CODEC.encode_request(request).body) == body
    return request


def encode(request: ir.Request) -> dict[str, Any]:
    """The JSON body the codec writes for an IR request (schema-checked)."""
    body: dict[str, Any] = json.loads(CODEC.encode_request(request).body)
    schemas.validate("request", body)
    return body


AGENT_TURN = {
    "model": "gpt-5",
    "instructions": "You are terse.",
    "input": [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is in this image, and the weather there?"},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
                {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "high"},
            ],
        },
        {
            "type": "reasoning",
            "id": "rs_abc",
            "summary": [{"type": "summary_text", "text": "Look first."}],
            "encrypted_content": "gAAAAB-opaque",
        },
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
    ],
    "tools": [
        {"type": "function", "name": "get_weather", "description": "Weather", "parameters": {"type": "object"}},
    ],
    "tool_choice": {"type": "function", "name": "get_weather"},
    "parallel_tool_calls": False,
    "max_output_tokens": 512,
    "temperature": 0.2,
    "top_p": 0.9,
    "reasoning": {"effort": "high", "summary": "auto"},
    "store": False,
    "include": ["reasoning.encrypted_content"],
    "metadata": {"session": "s-1"},
    "stream": True,
}


def test_an_agent_turn_decodes_every_listed_field() -> None:
    request = decode(AGENT_TURN)
    assert request.system == "You are terse."
    user, assistant, tool = request.messages
    assert user == ir.Message(
        role="user",
        content=[
            ir.TextPart(text="What is in this image, and the weather there?"),
            ir.ImagePart(source=ir.Base64Image(media_type="image/png", data=PNG)),
            ir.ImagePart(source=ir.UrlImage(url="https://example.com/a.png")),
        ],
    )
    assert assistant.role == "assistant" and assistant.content == [
        ir.ThinkingPart(text="Look first.", signature="gAAAAB-opaque"),
        ir.ToolCallPart(id="call_1", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}'),
    ]
    assert tool.content == [
        ir.ToolResultPart(tool_call_id="call_1", name="get_weather", content=[ir.TextPart(text="sunny")])
    ]
    assert request.tools == [ir.Tool(name="get_weather", description="Weather", parameters={"type": "object"})]
    assert request.tool_choice == ir.ToolChoiceTool(name="get_weather")
    assert (request.parallel_tool_calls, request.max_tokens, request.temperature, request.top_p) == (
        False, 512, 0.2, 0.9,
    )  # fmt: skip
    assert request.thinking == ir.ThinkingConfig(enabled=True) and request.stream is True
    raw = request.provider_fields["responses"]
    assert raw["metadata"] == {"session": "s-1"}
    assert raw["_shape"]["items"] == {"1": {"id": "rs_abc"}}  # the stored reasoning item's real id
    assert raw["_shape"]["image_detail"] == {"0.2": "high"}
    assert raw["_shape"]["reasoning"] == {"effort": "high"}


def test_input_as_a_string_is_one_user_turn() -> None:
    request = decode({"model": "m", "input": "Hello"})
    assert request.messages == [ir.Message(role="user", content=[ir.TextPart(text="Hello")])]
    assert request.provider_fields["responses"]["_shape"]["input_string"] is True


def test_a_leading_developer_message_is_the_system_prompt_and_goes_back_where_it_was() -> None:
    request = decode(
        {"model": "m", "input": [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "Hi"}]}
    )
    assert request.system == "Be brief." and [m.role for m in request.messages] == ["user"]


def test_a_developer_message_after_instructions_is_an_in_conversation_system_message() -> None:
    body = {
        "model": "m",
        "instructions": "A",
        "input": [{"role": "developer", "content": "B"}, {"role": "user", "content": "C"}],
    }
    request = decode(body)
    assert request.system == "A" and request.messages[0] == ir.Message(role="system", content=[ir.TextPart(text="B")])


TWO, THREE = ({"type": "input_text", "text": t} for t in "23")


def test_assistant_messages_reasoning_and_calls_of_one_turn_join_one_assistant_message() -> None:
    body = {
        "model": "m",
        "input": [
            {"role": "user", "content": "Go"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
            {"type": "function_call", "call_id": "c1", "name": "a", "arguments": "{}"},
            {"type": "function_call", "call_id": "c2", "name": "b", "arguments": ""},
            {"type": "function_call_output", "call_id": "c1", "output": "1"},
            {"type": "function_call_output", "call_id": "c2", "output": [TWO, THREE]},
        ],
    }
    request = decode(body)
    assert [m.role for m in request.messages] == ["user", "assistant", "tool"]
    assert [p.kind for p in request.messages[1].content] == ["text", "tool_call", "tool_call"]
    assert request.messages[1].content[2] == ir.ToolCallPart(id="c2", name="b", arguments={}, arguments_raw="")
    results = request.messages[2].content
    assert [(r.tool_call_id, r.name) for r in results if isinstance(r, ir.ToolResultPart)] == [("c1", "a"), ("c2", "b")]


def test_output_items_sent_back_whole_keep_their_keys() -> None:
    # What Codex sends back: the output message as the API returned it, ids, statuses and annotations included.
    message = {
        "type": "message",
        "id": "msg_1",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Done.", "annotations": [], "logprobs": []}],
    }
    request = decode({"model": "m", "input": [{"role": "user", "content": "Go"}, message]})
    assert request.messages[1] == ir.Message(role="assistant", content=[ir.TextPart(text="Done.")])


def test_reasoning_with_only_encrypted_content_is_redacted_thinking() -> None:
    body = {"model": "m", "input": [{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}]}
    assert decode(body).messages == [ir.Message(role="assistant", content=[ir.RedactedThinkingPart(data="enc")])]


def test_reasoning_text_content_reads_as_thinking_and_is_sent_back_the_same_way() -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "raw"}]}
    request = decode({"model": "m", "input": [item]})
    assert request.messages[0].content == [ir.ThinkingPart(text="raw")]


def test_items_with_no_ir_form_are_kept_in_place_and_named_as_state() -> None:
    body = {
        "model": "m",
        "previous_response_id": "resp_prev",
        "input": [
            {"type": "item_reference", "id": "msg_old"},
            {"role": "user", "content": "And now?"},
            {"type": "reasoning", "id": "rs_stored", "summary": []},
        ],
        "tools": [{"type": "web_search"}, {"type": "function", "name": "f", "parameters": {}, "strict": True}],
    }
    request = decode(body)
    assert [m.role for m in request.messages] == ["user"] and [t.name for t in request.tools] == ["f"]
    assert stateful_fields(request) == ["previous_response_id", "item_reference", "reasoning"]
    assert stateful_fields(decode({"model": "m", "input": "hi"})) == []


def test_text_format_json_object_and_json_schema() -> None:
    assert decode({"model": "m", "input": "x", "text": {"format": {"type": "json_object"}}}).response_format == (
        ir.ResponseFormatJsonObject()
    )
    fmt = {"type": "json_schema", "name": "person", "schema": {"type": "object"}, "strict": True, "description": "A"}
    request = decode({"model": "m", "input": "x", "text": {"format": fmt, "verbosity": "low"}})
    assert request.response_format == ir.ResponseFormatJsonSchema(
        name="person", schema_={"type": "object"}, strict=True
    )


@pytest.mark.parametrize(
    ("reasoning", "thinking"),
    [
        ({"effort": "none"}, ir.ThinkingConfig(enabled=False)),
        ({"effort": "minimal"}, ir.ThinkingConfig(enabled=True)),
        ({"effort": "medium", "summary": "detailed"}, ir.ThinkingConfig(enabled=True)),
        ({"summary": "auto"}, ir.ThinkingConfig(enabled=True)),
    ],
)
def test_reasoning_settings(reasoning: dict[str, Any], thinking: ir.ThinkingConfig) -> None:
    assert decode({"model": "m", "input": "x", "reasoning": reasoning}).thinking == thinking


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", ir.ToolChoiceAuto()),
        ("none", ir.ToolChoiceNone()),
        ("required", ir.ToolChoiceRequired()),
        ({"type": "function", "name": "f"}, ir.ToolChoiceTool(name="f")),
        ({"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "f"}]}, None),
    ],
)
def test_tool_choice(choice: Any, expected: ir.ToolChoice | None) -> None:
    body = {
        "model": "m",
        "input": "x",
        "tools": [{"type": "function", "name": "f", "parameters": {}}],
        "tool_choice": choice,
    }
    assert decode(body).tool_choice == expected


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (
            {
                "model": "m",
                "input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f", "file_url": "u"}]}],
            },
            "exactly one of file_data, file_url and file_id",
        ),
        ({"model": "m", "input": [{"role": "user", "content": [{"type": "input_file"}]}]}, "got none"),
        ({"model": "m", "input": [{"role": "user", "content": [{"type": "input_image", "file_id": "f"}]}]}, "file_id"),
        ({"model": "m", "input": [{"role": "critic", "content": "x"}]}, "role"),
        ({"model": "m", "input": [{"type": "function_call", "name": "f", "arguments": "{}"}]}, "call_id"),
        ({"model": "m", "input": "x", "text": {"format": {"type": "xml"}}}, "format"),
        ({"input": "x"}, "model"),
    ],
)
def test_what_has_no_ir_form_or_is_malformed_is_a_decode_error(body: dict[str, Any], match: str) -> None:
    with pytest.raises(DecodeError, match=match):
        CODEC.decode_request(wire(body))


def test_a_request_from_another_protocol_is_written_for_a_stateless_translation() -> None:
    request = ir.Request(
        model="gpt-5",
        system="Be brief.",
        messages=[
            ir.Message(role="user", content=[ir.TextPart(text="Weather?")]),
            ir.Message(
                role="assistant",
                content=[
                    ir.ThinkingPart(text="Need a lookup.", signature="sig-1"),
                    ir.ToolCallPart(id="toolu_1", name="w", arguments={}, arguments_raw="{}"),
                ],
            ),
            ir.Message(
                role="tool", content=[ir.ToolResultPart(tool_call_id="toolu_1", content=[ir.TextPart(text="sun")])]
            ),
        ],
        tools=[ir.Tool(name="w", parameters={"type": "object", "properties": {"c": {"type": "string"}}})],
        thinking=ir.ThinkingConfig(enabled=True, budget_tokens=1024),
        max_tokens=100,
        stream=True,
    )
    body = encode(request)
    assert body["instructions"] == "Be brief."
    assert body["tools"] == [
        {"type": "function", "name": "w", "parameters": request.tools[0].parameters, "strict": False}
    ]
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["max_output_tokens"] == 100 and body["stream"] is True
    reasoning, call, output = body["input"][1:]
    assert reasoning["type"] == "reasoning" and reasoning["id"].startswith("rs_")
    assert reasoning["summary"] == [{"type": "summary_text", "text": "Need a lookup."}]
    assert reasoning["encrypted_content"] == "sig-1"
    assert call == {"type": "function_call", "call_id": "toolu_1", "name": "w", "arguments": "{}"}
    assert output == {"type": "function_call_output", "call_id": "toolu_1", "output": "sun"}


def test_thinking_off_is_effort_none_without_a_summary() -> None:
    body = encode(ir.Request(model="m", thinking=ir.ThinkingConfig(enabled=False)))
    assert body["reasoning"] == {"effort": "none"} and "include" not in body


def test_is_stream_request_reads_the_body_flag() -> None:
    assert CODEC.is_stream_request(wire({"model": "m", "stream": True}))
    assert not CODEC.is_stream_request(wire({"model": "m"}))
    with pytest.raises(DecodeError):
        CODEC.is_stream_request(HttpRequest(method="POST", path="/v1/responses", body=b"[]"))


def test_with_auth_is_a_bearer_token() -> None:
    assert CODEC.with_auth(wire({"model": "m"}), "sk-1").headers["authorization"] == "Bearer sk-1"


PDF = "JVBERi0xLjQK"  # "%PDF-1.4\n"


def test_input_file_carries_file_data_as_a_data_url_and_its_filename() -> None:
    part = {"type": "input_file", "file_data": f"data:application/pdf;base64,{PDF}", "filename": "a.pdf"}
    body = {"model": "m", "input": [{"role": "user", "content": [{"type": "input_text", "text": "Sum"}, part]}]}
    request = decode(body)
    assert request.messages[0].content[1] == ir.FilePart(media_type="application/pdf", data=PDF, filename="a.pdf")
    assert encode(request)["input"] == body["input"]


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (
            {"type": "input_file", "file_url": "https://example.com/a.pdf", "filename": "a.pdf"},
            ir.FilePart(url="https://example.com/a.pdf", filename="a.pdf"),
        ),
        ({"type": "input_file", "file_id": "file-abc"}, ir.FilePart(file_id="file-abc")),
    ],
)
def test_input_file_by_url_or_file_id_round_trips(part: dict[str, Any], expected: ir.FilePart) -> None:
    body = {"model": "m", "input": [{"role": "user", "content": [{"type": "input_text", "text": "Sum"}, part]}]}
    request = decode(body)
    assert request.messages[0].content[1] == expected
    assert encode(request)["input"] == body["input"]


def test_a_url_file_media_type_is_not_sent_on_file_url() -> None:
    """The wire has no field for it: the declared loss `request.FilePart.media_type:None`."""
    request = ir.Request(
        model="m",
        messages=[ir.Message(role="user", content=[ir.FilePart(url="https://x/a.pdf", media_type="application/pdf")])],
    )
    sent = encode(request)["input"][0]["content"]
    assert sent == [{"type": "input_file", "file_url": "https://x/a.pdf"}]
    assert "request.FilePart.media_type:None" in CODEC.losses


def test_input_file_in_a_function_call_output_is_refused_not_dropped() -> None:
    part = {"type": "input_file", "file_data": f"data:application/pdf;base64,{PDF}"}
    body = {"model": "m", "input": [{"type": "function_call_output", "call_id": "c", "output": [part]}]}
    with pytest.raises(DecodeError, match="function_call_output has no IR form"):
        CODEC.decode_request(wire(body))
