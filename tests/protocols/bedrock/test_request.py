"""Converse requests: the model id in the path, what the IR carries, what rides in provider_fields, and errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import ir
from harness.protocols import DecodeError
from harness.wire.http import HttpRequest
from tests.protocols.bedrock.support import CODEC

PROFILE = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0"


def decode(body: dict[str, Any], path: str = "/model/m/converse") -> ir.Request:
    return CODEC.decode_request(HttpRequest("POST", path, body=json.dumps(body).encode()))


def user(text: str = "hi") -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


@pytest.mark.parametrize(
    ("path", "model", "stream"),
    [
        ("/model/us.amazon.nova-micro-v1%3A0/converse", "us.amazon.nova-micro-v1:0", False),
        ("/model/us.amazon.nova-micro-v1:0/converse-stream", "us.amazon.nova-micro-v1:0", True),  # ASGI-decoded
        ("/bedrock/model/" + PROFILE.replace(":", "%3A").replace("/", "%2F") + "/converse", PROFILE, False),
        ("/model/" + PROFILE + "/converse-stream", PROFILE, True),  # an ARN whose slash was decoded on the way
    ],
)
def test_the_model_id_and_the_operation_come_from_the_path(path: str, model: str, stream: bool) -> None:
    request = decode({"messages": [user()]}, path)
    assert (request.model, request.stream) == (model, stream)
    assert CODEC.is_stream_request(HttpRequest("POST", path)) is stream
    encoded = CODEC.encode_request(request)
    assert encoded.path.startswith("/model/") and CODEC.decode_request(encoded).model == model
    assert ":" not in encoded.path and encoded.path.count("/") == 3  # percent-encoded as boto3 does


def test_everything_the_ir_carries() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    request = decode(
        {
            "messages": [user("Weather?")],
            "system": [{"text": "Be brief."}, {"text": "Use metric."}],
            "inferenceConfig": {"maxTokens": 300, "temperature": 0.2, "topP": 1, "stopSequences": ["END"]},
            "toolConfig": {
                "tools": [{"toolSpec": {"name": "get_weather", "description": "W", "inputSchema": {"json": schema}}}],
                "toolChoice": {"any": {}},
            },
            "additionalModelRequestFields": {"thinking": {"type": "adaptive"}},
            "outputConfig": {
                "textFormat": {
                    "type": "json_schema",
                    "structure": {"jsonSchema": {"name": "City", "schema": json.dumps(schema)}},
                }
            },
        }
    )
    assert request.system == "Be brief.\n\nUse metric."
    assert (request.max_tokens, request.temperature, request.top_p, request.stop) == (300, 0.2, 1.0, ["END"])
    assert request.tools == [ir.Tool(name="get_weather", description="W", parameters=schema)]
    assert request.tool_choice == ir.ToolChoiceRequired()
    assert request.thinking == ir.ThinkingConfig(enabled=True)
    assert request.response_format == ir.ResponseFormatJsonSchema(name="City", schema=schema)
    # Two system blocks and a schema text laid out with spaces say more than the IR: kept to send back as they were.
    extra = request.provider_fields["bedrock"]
    assert extra["system"] == [{"text": "Be brief."}, {"text": "Use metric."}] and set(extra) == {
        "system",
        "textFormat",
    }
    assert json.loads(CODEC.encode_request(request).body)["outputConfig"]["textFormat"] == extra["textFormat"]


def test_what_has_no_ir_form_rides_along_and_is_sent_back() -> None:
    body = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"text": "Read it"},
                    {"document": {"name": "a", "format": "txt", "source": {"s3Location": {"uri": "s3://b/a.txt"}}}},
                ],
            },
            {"role": "assistant", "content": [{"text": "Done."}, {"cachePoint": {"type": "default"}}]},
        ],
        "toolConfig": {"tools": [{"systemTool": {"name": "nova_grounding"}}], "toolChoice": {"auto": {}}},
        "inferenceConfig": {"maxTokens": 5, "futureSetting": True},
        "additionalModelRequestFields": {"top_k": 40, "thinking": {"type": "enabled", "budget_tokens": 1024}},
        "guardrailConfig": {"guardrailIdentifier": "g", "guardrailVersion": "1"},
        "performanceConfig": {"latency": "optimized"},
    }
    request = decode(body)
    assert [[p.kind for p in m.content] for m in request.messages] == [["text"], ["text"]]
    assert request.tools == [] and request.tool_choice == ir.ToolChoiceAuto()
    extra = request.provider_fields["bedrock"]
    assert set(extra) == {
        "messages",
        "toolConfig",
        "inferenceConfig",
        "additionalModelRequestFields",
        "guardrailConfig",
        "performanceConfig",
    }
    sent = json.loads(CODEC.encode_request(request).body)
    assert sent == body


def test_stale_raw_fields_never_override_a_translation() -> None:
    request = decode({"messages": [{"role": "user", "content": [{"text": "a"}, {"cachePoint": {"type": "default"}}]}]})
    changed = request.model_copy(update={"messages": [ir.Message(role="user", content=[ir.TextPart(text="b")])]})
    assert json.loads(CODEC.encode_request(changed).body)["messages"] == [user("b")]


def test_tool_turns_split_and_join() -> None:
    call = {"toolUse": {"toolUseId": "t1", "name": "f", "input": {"x": 1}}}
    result = {
        "toolResult": {"toolUseId": "t1", "content": [{"json": {"temp": 18}}, {"text": "ok"}], "status": "success"}
    }
    request = decode(
        {
            "messages": [
                user(),
                {"role": "assistant", "content": [call]},
                {"role": "user", "content": [result, {"text": "And now?"}]},
            ]
        }
    )
    assert [m.role for m in request.messages] == ["user", "assistant", "tool", "user"]
    assert request.messages[2].content == [
        ir.ToolResultPart(
            tool_call_id="t1", name="f", content=[ir.TextPart(text='{"temp":18}'), ir.TextPart(text="ok")]
        )
    ]
    # The JSON result has no IR form of its own (it became text): the raw messages keep it.
    assert request.provider_fields["bedrock"]["messages"][2]["content"][0] == result
    plain = request.model_copy(update={"provider_fields": {}})
    sent = json.loads(CODEC.encode_request(plain).body)["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[2]["content"][0]["toolResult"]["content"] == [{"text": '{"temp":18}'}, {"text": "ok"}]


def test_losses_are_what_the_table_says() -> None:
    request = ir.Request(
        model="m",
        messages=[
            ir.Message(role="system", content=[ir.TextPart(text="late system")]),
            ir.Message(
                role="user", content=[ir.ImagePart(source=ir.UrlImage(url="https://x/y.png")), ir.TextPart(text="q")]
            ),
        ],
        tools=[ir.Tool(name="f")],
        tool_choice=ir.ToolChoiceNone(),
        parallel_tool_calls=False,
        response_format=ir.ResponseFormatJsonObject(),
    )
    body = json.loads(CODEC.encode_request(request).body)
    assert body["messages"] == [user("late system"), user("q")]
    assert "toolChoice" not in body["toolConfig"] and "outputConfig" not in body
    back = CODEC.decode_request(CODEC.encode_request(request))
    assert (back.tool_choice, back.parallel_tool_calls, back.response_format) == (None, None, None)
    for key in (
        "ToolChoiceNone",
        "Request.parallel_tool_calls",
        "UrlImage",
        "Message.role:system",
        "ResponseFormatJsonObject",
    ):
        assert key in CODEC.losses


@pytest.mark.parametrize(
    ("body", "path", "problem"),
    [
        ({"messages": []}, "/model/m/invoke", "is not /model/{modelId}/converse"),
        ({"messages": [{"role": "system", "content": []}]}, "/model/m/converse", "role is 'system'"),
        ({"messages": [{"role": "user"}]}, "/model/m/converse", "messages\\[0\\] has no content"),
        ({"messages": [], "toolConfig": {"tools": [], "toolChoice": {"none": {}}}}, "/model/m/converse", "has 'none'"),
        ({"messages": [], "toolConfig": {"tools": [{"toolSpec": {"name": "f"}}]}}, "/model/m/converse", "inputSchema"),
        ({"messages": [], "inferenceConfig": {"maxTokens": True}}, "/model/m/converse", "maxTokens is bool"),
        ({"messages": [], "additionalModelRequestFields": {"thinking": {"type": "on"}}}, "/model/m/converse", "'on'"),
        (
            {
                "messages": [],
                "outputConfig": {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": {"schema": "{"}}}},
            },
            "/model/m/converse",
            "schema is not JSON",
        ),
        (
            {"messages": [{"role": "assistant", "content": [{"reasoningContent": {"redactedContent": "%%"}}]}]},
            "/model/m/converse",
            "not base64",
        ),
    ],
)
def test_malformed_requests_raise_decode_error(body: dict[str, Any], path: str, problem: str) -> None:
    with pytest.raises(DecodeError, match=problem):
        decode(body, path)


def test_an_empty_system_prompt_is_not_sent() -> None:
    # Converse's system block text is a NonEmptyString (the service model; boto3 refuses ""): an empty IR system
    # prompt (a real Responses request's `instructions: ""`) is sent as no system block at all.
    empty = ir.Request(model="m", system="", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])])
    assert "system" not in json.loads(CODEC.encode_request(empty).body)
    assert json.loads(CODEC.encode_request(empty.model_copy(update={"system": "Be brief."})).body)["system"] == [
        {"text": "Be brief."}
    ]


PDF = "JVBERi0xLjQK"  # "%PDF-1.4\n"


@pytest.mark.parametrize(
    ("filename", "name"),
    [
        ("invoice.pdf", "invoice"),
        ("Q3 report (final).v2.pdf", "Q3 report (final)-v2"),
        ("a__b  c.txt", "a-b c"),
        (None, "document"),
        (".env", "-env"),
        ("", "document"),
    ],
)
def test_document_name_allows_only_converse_characters(filename: str | None, name: str) -> None:
    part = ir.FilePart(media_type="application/pdf", data=PDF, filename=filename)
    request = ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="Sum"), part])])
    sent = json.loads(CODEC.encode_request(request).body)
    document = {"format": "pdf", "name": name, "source": {"bytes": PDF}}
    assert sent["messages"][0]["content"][1] == {"document": document}
    assert decode(sent).messages[0].content[1] == part.model_copy(update={"filename": name})


@pytest.mark.parametrize(("media_type", "fmt"), [("text/plain", "txt"), ("text/csv", "csv"), ("text/markdown", "md")])
def test_document_format_is_the_extension_of_its_media_type(media_type: str, fmt: str) -> None:
    part = ir.FilePart(media_type=media_type, data="eA==", filename="f")
    sent = json.loads(
        CODEC.encode_request(ir.Request(model="m", messages=[ir.Message(role="user", content=[part])])).body
    )
    assert sent["messages"][0]["content"] == [{"document": {"format": fmt, "name": "f", "source": {"bytes": "eA=="}}}]
    assert decode(sent).messages[0].content == [part]


def test_a_file_without_a_document_format_is_not_sent() -> None:
    part = ir.FilePart(media_type="audio/wav", data="eA==")
    content = [ir.TextPart(text="hi"), part]
    sent = json.loads(
        CODEC.encode_request(ir.Request(model="m", messages=[ir.Message(role="user", content=content)])).body
    )
    assert sent["messages"] == [user("hi")]


def test_a_document_of_an_unknown_format_is_a_decode_error() -> None:
    body = {
        "messages": [
            {"role": "user", "content": [{"document": {"format": "pptx", "name": "a", "source": {"bytes": "eA=="}}}]}
        ]
    }
    with pytest.raises(DecodeError, match="format is 'pptx'"):
        decode(body)
