"""Request decoding and encoding, field by field: roles, content parts, tools, formats, limits, provider fields."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import ir
from harness.protocols import DecodeError, registry
from harness.protocols.openai import OpenAICodec, Profile
from harness.wire.http import HttpRequest
from tests.protocols.openai.support import OPENAI, check_request

USER = {"role": "user", "content": "hi"}


def _wire(body: dict[str, Any]) -> HttpRequest:
    return HttpRequest(method="POST", path="/v1/chat/completions", body=json.dumps(body).encode())


def _decode(**fields: Any) -> ir.Request:
    return OPENAI.decode_request(_wire({"model": "gpt-4o", "messages": [USER], **fields}))


def _reencoded(body: dict[str, Any]) -> dict[str, Any]:
    wire = OPENAI.encode_request(OPENAI.decode_request(_wire(body)))
    check_request(wire)
    out: dict[str, Any] = json.loads(wire.body)
    return out


def test_developer_roles_decode_as_system_and_reencode_as_developer() -> None:
    body = {
        "model": "o3",
        "messages": [
            {"role": "developer", "content": "Rules."},
            USER,
            {"role": "system", "content": "Later system."},
            {"role": "developer", "content": [{"type": "text", "text": "Later developer."}]},
        ],
    }
    request = OPENAI.decode_request(_wire(body))
    assert request.system == "Rules."
    assert [(m.role, m.content) for m in request.messages[1:]] == [
        ("system", [ir.TextPart(text="Later system.")]),
        ("system", [ir.TextPart(text="Later developer.")]),
    ]
    messages = _reencoded(body)["messages"]
    assert [m["role"] for m in messages] == ["developer", "user", "system", "developer"]
    assert messages[3]["content"] == "Later developer."  # one text part travels as a string


def test_ir_system_prompt_encodes_as_system_message() -> None:
    body = json.loads(OPENAI.encode_request(ir.Request(model="m", system="Be brief.")).body)
    assert body["messages"] == [{"role": "system", "content": "Be brief."}]


@pytest.mark.parametrize(
    ("fields", "max_tokens", "wire_field"),
    [
        ({"max_completion_tokens": 64}, 64, "max_completion_tokens"),
        ({"max_tokens": 32}, 32, "max_tokens"),
        ({"max_tokens": 32, "max_completion_tokens": 64}, 64, "max_completion_tokens"),
    ],
)
def test_max_tokens_and_max_completion_tokens(fields: dict[str, int], max_tokens: int, wire_field: str) -> None:
    assert _decode(**fields).max_tokens == max_tokens
    out = _reencoded({"model": "m", "messages": [USER], **fields})
    assert out[wire_field] == max_tokens
    assert {k: out[k] for k in fields} == fields


def test_ir_max_tokens_encodes_as_max_completion_tokens() -> None:
    body = json.loads(OPENAI.encode_request(ir.Request(model="m", max_tokens=9)).body)
    assert body["max_completion_tokens"] == 9 and "max_tokens" not in body


def test_stop_as_string_or_list() -> None:
    assert _decode(stop="END").stop == ["END"]
    assert _decode(stop=["a", "b"]).stop == ["a", "b"]
    assert _reencoded({"model": "m", "messages": [USER], "stop": "END"})["stop"] == "END"
    assert _reencoded({"model": "m", "messages": [USER], "stop": ["END"]})["stop"] == ["END"]


def test_image_url_parts_data_url_and_http_url_with_detail() -> None:
    content = [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "high"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
    ]
    body = {"model": "m", "messages": [{"role": "user", "content": content}]}
    request = OPENAI.decode_request(_wire(body))
    assert request.messages[0].content == [
        ir.TextPart(text="What is this?"),
        ir.ImagePart(source=ir.Base64Image(media_type="image/png", data="iVBORw0KGgo=")),
        ir.ImagePart(source=ir.UrlImage(url="https://example.com/cat.jpg")),
    ]
    assert _reencoded(body)["messages"][0]["content"] == content


def test_malformed_data_url_is_a_decode_error() -> None:
    part = {"type": "image_url", "image_url": {"url": "data:image/png,notbase64"}}
    with pytest.raises(DecodeError, match=r"messages\[0\].content\[0\].image_url.url"):
        OPENAI.decode_request(_wire({"model": "m", "messages": [{"role": "user", "content": [part]}]}))


@pytest.mark.parametrize(
    ("message", "where"),
    [
        ({"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}, "unsupported content part"),
        ({"role": "function", "name": "f", "content": "x"}, "unsupported role"),
        ({"role": "tool", "content": "x"}, "tool_call_id"),
        (
            {"role": "assistant", "function_call": None, "tool_calls": [{"function": {"name": "f", "arguments": {}}}]},
            "arguments",
        ),
    ],
)
def test_unsupported_or_malformed_messages_are_decode_errors(message: dict[str, Any], where: str) -> None:
    with pytest.raises(DecodeError, match=where):
        OPENAI.decode_request(_wire({"model": "m", "messages": [message]}))


def test_missing_model_or_messages_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="model"):
        OPENAI.decode_request(_wire({"messages": []}))
    with pytest.raises(DecodeError, match="messages"):
        OPENAI.decode_request(_wire({"model": "m"}))


@pytest.mark.parametrize(
    ("wire", "choice"),
    [
        ("auto", ir.ToolChoiceAuto()),
        ("none", ir.ToolChoiceNone()),
        ("required", ir.ToolChoiceRequired()),
        ({"type": "function", "function": {"name": "f"}}, ir.ToolChoiceTool(name="f")),
    ],
)
def test_tool_choice_forms(wire: Any, choice: ir.ToolChoice) -> None:
    assert _decode(tool_choice=wire).tool_choice == choice
    assert _reencoded({"model": "m", "messages": [USER], "tool_choice": wire})["tool_choice"] == wire


def test_allowed_tools_tool_choice_stays_raw() -> None:
    wire = {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": []}}
    request = _decode(tool_choice=wire)
    assert request.tool_choice is None and request.provider_fields["openai"]["tool_choice"] == wire
    assert _reencoded({"model": "m", "messages": [USER], "tool_choice": wire})["tool_choice"] == wire


def test_response_formats_json_object_and_json_schema() -> None:
    assert _decode(response_format={"type": "json_object"}).response_format == ir.ResponseFormatJsonObject()
    assert _decode(response_format={"type": "text"}).response_format == ir.ResponseFormatText()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    wire = {"type": "json_schema", "json_schema": {"name": "num", "schema": schema, "strict": True, "description": "d"}}
    assert _decode(response_format=wire).response_format == ir.ResponseFormatJsonSchema(
        name="num", schema_=schema, strict=True
    )
    assert _reencoded({"model": "m", "messages": [USER], "response_format": wire})["response_format"] == wire


def test_fields_without_ir_equivalent_go_to_provider_fields_and_back() -> None:
    extra = {
        "n": 1,
        "seed": 42,
        "user": "u-1",
        "logprobs": True,
        "top_logprobs": 2,
        "frequency_penalty": 0.5,
        "presence_penalty": -0.5,
        "logit_bias": {"50256": -100},
        "metadata": {"run": "x"},
        "store": False,
        "service_tier": "flex",
    }
    request = _decode(**extra)
    assert request.provider_fields == {"openai": extra}
    assert request.thinking is None
    out = _reencoded({"model": "m", "messages": [USER], **extra})
    assert {k: out[k] for k in extra} == extra


@pytest.mark.parametrize(
    ("effort", "enabled", "shape"),
    [("low", True, "low"), ("medium", True, None), ("high", True, "high"), ("minimal", True, "minimal"),
     ("none", False, None)],
)  # fmt: skip
def test_reasoning_effort_is_the_thinking_switch(effort: str, enabled: bool, shape: str | None) -> None:
    request = _decode(reasoning_effort=effort)
    assert request.thinking == ir.ThinkingConfig(enabled=enabled)
    # The level comes back exactly: from the settings, or from the remembered level the settings cannot give.
    assert request.provider_fields.get("openai", {}).get("_shape", {}).get("reasoning_effort") == shape
    assert _reencoded({"model": "m", "messages": [USER], "reasoning_effort": effort})["reasoning_effort"] == effort


def test_thinking_budget_maps_to_an_effort_level() -> None:
    def effort(budget: int | None) -> str:
        thinking = ir.ThinkingConfig(enabled=True, budget_tokens=budget)
        return str(json.loads(OPENAI.encode_request(ir.Request(model="m", thinking=thinking)).body)["reasoning_effort"])

    assert [effort(b) for b in (1024, 2048, 4096, 8192, 16000, None)] == [
        "low",
        "low",
        "medium",
        "medium",
        "high",
        "medium",
    ]
    assert "reasoning_effort" not in json.loads(OPENAI.encode_request(ir.Request(model="m")).body)
    # A provider without a thinking switch keeps the field raw and sends none from IR settings.
    gemma = registry.get("gemma")
    assert "reasoning_effort" not in json.loads(
        gemma.encode_request(ir.Request(model="m", thinking=ir.ThinkingConfig())).body
    )
    assert gemma.decode_request(_wire({"model": "m", "messages": [USER], "reasoning_effort": "low"})).thinking is None
    assert "Request.thinking" in gemma.losses and "ThinkingConfig.budget_tokens" not in gemma.losses


def test_assistant_tool_calls_with_null_content_and_tool_messages() -> None:
    calls = [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}]
    body = {
        "model": "m",
        "messages": [
            USER,
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "one"}]},
            {"role": "tool", "tool_call_id": "call_unknown", "content": "two"},
        ],
    }
    request = OPENAI.decode_request(_wire(body))
    assert request.messages[1].content == [
        ir.ToolCallPart(id="call_1", name="f", arguments={"x": 1}, arguments_raw='{"x": 1}')
    ]
    assert request.messages[2].content == [
        ir.ToolResultPart(tool_call_id="call_1", name="f", content=[ir.TextPart(text="one")]),
        ir.ToolResultPart(tool_call_id="call_unknown", name=None, content=[ir.TextPart(text="two")]),
    ]
    messages = _reencoded(body)["messages"]
    assert messages[1] == {"role": "assistant", "content": None, "tool_calls": calls}
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]


def test_user_turn_with_tool_results_and_text_splits_into_tool_messages_then_user() -> None:
    # The shape Anthropic clients produce: tool_result blocks and text in one user message.
    request = ir.Request(
        model="m",
        messages=[
            ir.Message(
                role="user",
                content=[
                    ir.ToolResultPart(
                        tool_call_id="toolu_1", name="f", content=[ir.TextPart(text="42")], is_error=True
                    ),
                    ir.TextPart(text="Now summarize."),
                ],
            )
        ],
    )
    wire = OPENAI.encode_request(request)
    check_request(wire)
    assert json.loads(wire.body)["messages"] == [
        {"role": "tool", "tool_call_id": "toolu_1", "content": "42"},
        {"role": "user", "content": "Now summarize."},
    ]


def test_assistant_thinking_is_dropped_unless_the_profile_sends_it_back() -> None:
    turn = ir.Message(role="assistant", content=[ir.ThinkingPart(text="hmm", signature="sig"), ir.TextPart(text="ok")])
    request = ir.Request(model="m", messages=[turn])
    assert json.loads(OPENAI.encode_request(request).body)["messages"] == [{"role": "assistant", "content": "ok"}]
    vllm = OpenAICodec(Profile(name="vllm-test", request_reasoning_field="reasoning_content"))
    sent = json.loads(vllm.encode_request(request).body)["messages"][0]
    assert sent == {"role": "assistant", "content": "ok", "reasoning_content": "hmm"}


def test_stream_options_default_absent_and_declined() -> None:
    default = _decode(stream=True, stream_options={"include_usage": True})
    assert default.stream is True and default.provider_fields == {}
    absent = _decode(stream=True)
    assert absent.provider_fields == {"openai": {"_shape": {"stream_options": None}}}
    assert "stream_options" not in _reencoded({"model": "m", "messages": [USER], "stream": True})
    declined = {"include_usage": False}
    assert (
        _reencoded({"model": "m", "messages": [USER], "stream": True, "stream_options": declined})["stream_options"]
        == declined
    )
    ir_stream = json.loads(OPENAI.encode_request(ir.Request(model="m", stream=True)).body)
    assert ir_stream["stream"] is True and ir_stream["stream_options"] == {"include_usage": True}


def test_tool_strict_flag_and_message_extra_fields_survive_pass_through() -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}, "strict": True}}
    body = {"model": "m", "messages": [{"role": "user", "content": "hi", "name": "alice"}], "tools": [tool]}
    request = OPENAI.decode_request(_wire(body))
    assert request.tools == [ir.Tool(name="f", parameters={"type": "object"})]
    assert _reencoded(body) == body


def test_request_path_auth_and_stream_flag() -> None:
    wire = OPENAI.encode_request(ir.Request(model="m", stream=True))
    assert (wire.method, wire.path, wire.headers["content-type"]) == (
        "POST",
        "/v1/chat/completions",
        "application/json",
    )
    assert OPENAI.is_stream_request(wire) is True
    assert OPENAI.with_auth(wire, "sk-1").headers["authorization"] == "Bearer sk-1"
    azure = OpenAICodec(Profile(name="azure-test", auth="api-key"))
    assert azure.with_auth(wire, "k").headers["api-key"] == "k"
    assert "authorization" not in azure.with_auth(wire, "k").headers
    with pytest.raises(DecodeError):
        OPENAI.is_stream_request(HttpRequest(method="POST", path="/", body=b"not json"))


PDF = "JVBERi0xLjQK"  # "%PDF-1.4\n"


def test_file_part_is_a_data_url_in_file_data_with_its_filename() -> None:
    part = {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "a.pdf"}}
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": [{"type": "text", "text": "Sum"}, part]}]}
    request = OPENAI.decode_request(_wire(body))
    assert request.messages[0].content[1] == ir.FilePart(media_type="application/pdf", data=PDF, filename="a.pdf")
    assert _reencoded(body)["messages"] == body["messages"]


def test_file_part_without_filename_keeps_none() -> None:
    part = {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}"}}
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": [part]}]}
    assert OPENAI.decode_request(_wire(body)).messages[0].content == [
        ir.FilePart(media_type="application/pdf", data=PDF)
    ]
    assert _reencoded(body)["messages"] == body["messages"]


@pytest.mark.parametrize(
    ("file", "match"),
    [
        ({"file_id": "file-abc", "file_data": f"data:application/pdf;base64,{PDF}"}, "exactly one"),
        ({"filename": "a.pdf"}, "exactly one"),
        ({"file_data": PDF, "filename": "a.pdf"}, "data:<type>"),
    ],
)
def test_file_with_both_or_no_source_or_without_data_url_is_a_decode_error(file: dict[str, Any], match: str) -> None:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": [{"type": "file", "file": file}]}]}
    with pytest.raises(DecodeError, match=match):
        OPENAI.decode_request(_wire(body))


def test_file_by_id_round_trips_where_the_store_is_openais() -> None:
    part = {"type": "file", "file": {"file_id": "file-abc", "filename": "a.pdf"}}
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": [part]}]}
    assert OPENAI.decode_request(_wire(body)).messages[0].content == [ir.FilePart(file_id="file-abc", filename="a.pdf")]
    assert _reencoded(body)["messages"] == body["messages"]


@pytest.mark.parametrize(
    ("profile", "part", "match"),
    [
        ("openai", ir.FilePart(url="https://x/a.pdf"), "no URL form"),
        ("openrouter", ir.FilePart(file_id="file-abc"), "another provider than openrouter"),
    ],
)
def test_a_file_the_wire_has_no_form_for_is_refused_not_dropped(profile: str, part: ir.FilePart, match: str) -> None:
    """No file_url capability anywhere, file_id only where the store is OpenAI's: the planner never sends these,
    and an encoder that meets one says why instead of sending a part without its file."""
    request = ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="Sum"), part])])
    with pytest.raises(ValueError, match=match):
        registry.get(profile).encode_request(request)
