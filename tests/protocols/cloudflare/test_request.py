"""Workers AI native requests: the model and account in the path, both tool shapes, JSON mode, bare prompts."""

from __future__ import annotations

import json

import pytest

from harness import ir
from harness.protocols import DecodeError
from harness.wire.http import HttpRequest
from tests.protocols.cloudflare.support import CODEC, check_request

PATH = "/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/ai/run/@cf/meta/llama-3.3-70b-instruct-fp8-fast"


def _decode(body: object, path: str = PATH) -> ir.Request:
    return CODEC.decode_request(HttpRequest(method="POST", path=path, body=json.dumps(body).encode()))


def test_model_and_account_from_the_path_and_back() -> None:
    request = _decode({"messages": [{"role": "user", "content": "hi"}], "stream": True, "top_k": 5})
    assert request.model == "@cf/meta/llama-3.3-70b-instruct-fp8-fast" and request.stream
    assert request.provider_fields == {"cloudflare": {"top_k": 5, "account_id": "023e105f4ecef8ad9ca31a8372d0c353"}}
    wire = CODEC.encode_request(request)
    check_request(wire)
    assert wire.path == PATH
    assert json.loads(wire.body)["top_k"] == 5


def test_a_proxy_route_prefix_is_allowed() -> None:
    assert _decode({"prompt": "hi"}, "/route-label" + PATH.removeprefix("/client/v4")).messages == [
        ir.Message(role="user", content=[ir.TextPart(text="hi")])
    ]


def test_flat_legacy_tools_and_openai_tools() -> None:
    legacy = {"name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {}}}
    openai = {"type": "function", "function": legacy}
    request = _decode({"messages": [{"role": "user", "content": "x"}], "tools": [legacy, openai]})
    assert request.tools[0] == request.tools[1] == ir.Tool(**legacy)


def test_json_mode_takes_the_bare_schema_and_reads_the_openai_wrapper() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    bare = _decode({"messages": [], "response_format": {"type": "json_schema", "json_schema": schema}})
    wrapped = _decode(
        {
            "messages": [],
            "response_format": {"type": "json_schema", "json_schema": {"name": "n", "strict": True, "schema": schema}},
        }
    )
    assert bare.response_format == ir.ResponseFormatJsonSchema(schema_=schema)
    assert wrapped.response_format == ir.ResponseFormatJsonSchema(name="n", schema_=schema, strict=True)
    assert json.loads(CODEC.encode_request(wrapped).body)["response_format"] == {
        "type": "json_schema",
        "json_schema": schema,
    }


def test_tool_result_without_id_answers_the_earliest_call_of_its_name() -> None:
    request = _decode(
        {
            "messages": [
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": "", "tool_calls": [{"name": "f", "arguments": {"a": 1}}]},
                {"role": "tool", "name": "f", "content": "done"},
            ]
        }
    )
    call = request.messages[1].content[0]
    result = request.messages[2].content[0]
    assert isinstance(call, ir.ToolCallPart) and isinstance(result, ir.ToolResultPart)
    assert call.arguments == {"a": 1} and result.tool_call_id == call.id


def test_a_path_that_is_not_the_run_route_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="ai/run"):
        _decode({"messages": []}, "/client/v4/accounts/a/ai/v1/chat/completions")
