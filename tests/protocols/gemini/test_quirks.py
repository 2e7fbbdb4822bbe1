"""Gemini wire quirks, one test each, named after the quirk; most are taken from the recorded corpus."""

from __future__ import annotations

import base64
import json

import pytest

from harness import ir
from harness.protocols import decode_events, encode_events
from harness.protocols.gemini.fields import EncodeError
from harness.stream import accumulate, validate
from harness.wire.http import HttpRequest
from tests.protocols.gemini.support import CODEC, chunkings, corpus, decode_stream

pytestmark = pytest.mark.corpus

CHUNK = b'{"candidates": [{"content": {"parts": [%s], "role": "model"}%s, "index": 0}]%s}'


def _sse(*objects: bytes) -> bytes:
    return b"".join(b"data: " + o + b"\r\n\r\n" for o in objects)


def test_plain_json_error_on_sse_endpoint() -> None:
    """A failed alt=sse request: content-type text/event-stream, body the usual pretty-printed JSON error."""
    (item,) = corpus("error-400-api-key-invalid-stream-request.yaml")
    assert item.response.headers["content-type"] == "text/event-stream"
    for how, chunks in chunkings(item.response.body).items():
        events = decode_events(CODEC, chunks)
        assert validate(events) == [], how
        start, terminal = events
        assert isinstance(start, ir.MessageStart)
        assert isinstance(terminal, ir.ErrorEvent)
        assert (terminal.error.kind, terminal.error.status, terminal.error.code) == ("auth", 400, "INVALID_ARGUMENT")


def test_api_key_invalid_is_encoded_back_as_400_invalid_argument() -> None:
    """A wrong key is 400 INVALID_ARGUMENT with reason API_KEY_INVALID, which decodes to `auth`: encoded again
    (a Gemini client behind a proxy that translates Gemini to Gemini) it stays Google's 400, not a 401."""
    (item,) = corpus("error-400-api-key-invalid-stream-request.yaml")
    error = CODEC.decode_error(item.response.status, item.response.headers, item.response.body)
    assert (error.kind, error.status, error.code) == (ir.ErrorKind.AUTH, 400, "INVALID_ARGUMENT")
    encoded = CODEC.encode_error(error)
    assert encoded.status == 400
    body = json.loads(encoded.body)["error"]
    assert (body["code"], body["status"]) == (400, "INVALID_ARGUMENT")
    assert body == json.loads(item.response.body)["error"]  # as Google sends it, details and all
    assert CODEC.decode_error(encoded.status, encoded.headers, encoded.body).kind is ir.ErrorKind.AUTH
    other = ir.IRError.of(ir.ErrorKind.AUTH, "bad key", code="invalid_api_key")  # another provider's auth error
    assert CODEC.encode_error(other).status == 401


def test_thought_signature_on_first_text_after_thoughts() -> None:
    """Gemini 2.5 Pro puts the thoughtSignature on the first answer part, not on the thought parts."""
    events = decode_stream(corpus("sse-stream-thoughts-crlf.yaml")[0].response.body)
    end = next(i for i, e in enumerate(events) if isinstance(e, ir.ThinkingEnd))
    ending = events[end]
    assert isinstance(ending, ir.ThinkingEnd)
    assert ending.signature is not None and ending.signature.startswith("CiIB0e2Kb6Sy")
    assert isinstance(events[end + 1], ir.TextStart)
    assert sum(isinstance(e, ir.ThinkingStart) for e in events) == 1


def test_thought_signature_only_on_first_parallel_function_call() -> None:
    """Two functionCalls in one event, thoughtSignature on the first only: one empty signed thinking block."""
    response = accumulate(decode_stream(corpus("sse-stream-parallel-function-calls.yaml")[0].response.body)).response
    assert [p.kind for p in response.content] == ["thinking", "tool_call", "tool_call"]
    thinking = response.content[0]
    assert isinstance(thinking, ir.ThinkingPart)
    assert thinking.text == ""
    assert thinking.signature is not None and thinking.signature.startswith("CikB0e2Kbw5t")


def test_trailing_empty_text_part_with_finish_reason() -> None:
    """Gemini 3 ends a stream with a chunk whose only part is {"text": ""}: no empty text block or delta."""
    events = decode_stream(corpus("sse-stream-function-call-thought-signature-gemini3.yaml")[0].response.body)
    assert [e.kind for e in events] == [
        "message_start",
        "thinking_start",
        "thinking_end",
        "tool_call_start",
        "tool_call_delta",
        "tool_call_end",
        "done",
    ]


def test_thoughts_only_usage_without_candidates_token_count() -> None:
    """While only thoughts were produced (and here to the end), candidatesTokenCount is absent: it means 0."""
    response = accumulate(decode_stream(corpus("sse-stream-thought-summaries.yaml")[0].response.body)).response
    assert (response.usage.output_tokens, response.usage.reasoning_tokens) == (1947, 1947)


def test_usage_metadata_on_every_chunk_last_counts() -> None:
    """Every chunk repeats usageMetadata; Gemini 3 revised promptTokenCount 55 -> 257 on the last one."""
    body = corpus("sse-stream-function-call-thought-signature-gemini3.yaml")[1].response.body
    assert body.count(b'"promptTokenCount": 55') == 2
    done = decode_stream(body)[-1]
    assert isinstance(done, ir.Done) and done.usage is not None
    assert (done.usage.input_tokens, done.usage.output_tokens) == (257, 8)


def test_json_array_stream_crlf_separator() -> None:
    """Without alt=sse the stream is a pretty-printed JSON array whose elements are separated by "\\n,\\r\\n"."""
    body = corpus("json-array-stream-thought-function-call.yaml")[0].response.body
    assert body.startswith(b"[{\n") and b"}\n,\r\n{" in body and body.endswith(b"}\n]")
    events = decode_stream(body)
    replayed = encode_events(
        CODEC, events, CODEC.decode_request(corpus("json-array-stream-thought-function-call.yaml")[0].request)
    )
    assert replayed.startswith(b"[{") and b"}\n,\r\n{" in replayed and replayed.endswith(b"}]")
    assert decode_stream(replayed) == events


def test_sse_crlf_event_separator() -> None:
    """alt=sse events end in CRLF CRLF; so do ours."""
    body = corpus("sse-stream-text.yaml")[0].response.body
    assert body.count(b"\r\n\r\n") == 2 and b"\n\n" not in body.replace(b"\r\n\r\n", b"")
    replayed = encode_events(CODEC, decode_stream(body))
    assert replayed.startswith(b"data: {") and replayed.endswith(b"}\r\n\r\n") and b"\n\n" not in replayed


def test_snake_case_request_keys() -> None:
    """Proto JSON accepts snake_case: google-genai sends thinking_config fields so, llm-gemini function_call."""
    summaries = corpus("sse-stream-thought-summaries.yaml")[0].request
    assert b'"include_thoughts": true, "thinking_budget": 6400' in summaries.body
    assert CODEC.decode_request(summaries).thinking == ir.ThinkingConfig(enabled=True, budget_tokens=6400)
    llm = CODEC.decode_request(corpus("json-array-stream-thought-function-call.yaml")[1].request)
    call = llm.messages[1].content[1]
    result = llm.messages[2].content[0]
    assert isinstance(call, ir.ToolCallPart) and isinstance(result, ir.ToolResultPart)
    assert (call.id, call.name, call.arguments) == (
        "call_27db36357f594e73b557ec8f70da9e87",
        "pelican_name_generator",
        {},
    )
    assert (result.tool_call_id, result.content) == (call.id, [ir.TextPart(text="Charles")])


def test_sdk_sends_thought_signature_as_base64url() -> None:
    """google-genai keeps thought_signature as bytes and re-encodes it base64url: the request's signature
    differs in text from the response's. The IR keeps each as it came (opaque)."""
    first, second = corpus("sse-stream-parallel-function-calls.yaml")
    answered = accumulate(decode_stream(first.response.body)).response.content[0]
    replayed = CODEC.decode_request(second.request).messages[1].content[0]
    assert isinstance(answered, ir.ThinkingPart) and isinstance(replayed, ir.ThinkingPart)
    assert answered.signature != replayed.signature
    assert replayed.signature is not None and "_" in replayed.signature
    assert replayed.signature.translate(str.maketrans("-_", "+/")) == answered.signature


def test_replayed_turn_keeps_the_response_tool_ids() -> None:
    """Ids are synthesized from (ordinal, name, args): the model turn a client sends back (without ids) gets
    the ids its response decoded to, and functionResponses without ids match those calls by name in order."""
    first, second = corpus("sse-stream-parallel-function-calls.yaml")
    answered = [p for p in accumulate(decode_stream(first.response.body)).response.content if p.kind == "tool_call"]
    request = CODEC.decode_request(second.request)
    replayed = [p for p in request.messages[1].content if isinstance(p, ir.ToolCallPart)]
    assert [p.id for p in replayed] == [p.id for p in answered]
    results = request.messages[2].content
    assert [(r.tool_call_id, r.content) for r in results if isinstance(r, ir.ToolResultPart)] == [
        (replayed[0].id, [ir.TextPart(text="Welcome to Moria!")]),
        (replayed[1].id, [ir.TextPart(text="Life before Death")]),
    ]
    body = json.loads(CODEC.encode_request(request).body)
    assert "id" not in body["contents"][1]["parts"][0]["functionCall"]  # Gemini-shaped stays Gemini-shaped
    assert "id" not in body["contents"][2]["parts"][0]["functionResponse"]


def test_repeated_identical_calls_get_distinct_ids() -> None:
    """llm-gemini's model called pelican_name_generator({}) in two turns; without its explicit ids the two
    calls would hash alike, so the second turn's id mixes in the turn number."""
    item = corpus("json-array-stream-thought-function-call.yaml")[2]
    body = json.loads(item.request.body)
    for content in body["contents"]:
        for part in content["parts"]:
            for key in ("function_call", "function_response"):
                part.get(key, {}).pop("id", None)
    stripped = HttpRequest(method="POST", path=item.request.path, body=json.dumps(body).encode())
    request = CODEC.decode_request(stripped)
    calls = [p for m in request.messages for p in m.content if isinstance(p, ir.ToolCallPart)]
    results = [p for m in request.messages for p in m.content if isinstance(p, ir.ToolResultPart)]
    assert len({c.id for c in calls}) == 2
    assert [r.tool_call_id for r in results] == [c.id for c in calls]
    assert CODEC.decode_request(CODEC.encode_request(request)) == request
    assert b'"id"' not in CODEC.encode_request(request).body


def test_explicit_function_call_ids_are_kept() -> None:
    request = CODEC.decode_request(corpus("json-array-stream-thought-function-call.yaml")[2].request)
    body = json.loads(CODEC.encode_request(request).body)
    ids = [p["functionCall"]["id"] for c in body["contents"] for p in c["parts"] if "functionCall" in p]
    assert ids == ["call_27db36357f594e73b557ec8f70da9e87", "call_97666b91d4c14f44b94ab69dded4ab10"]


def test_openapi_uppercase_schema_types() -> None:
    """google-genai sends `parameters` with OpenAPI type names (OBJECT, STRING): the IR gets JSON Schema, and a
    pass-through sends `parameters` again (lower-case types, which the API accepts, as llm-gemini shows)."""
    item = corpus("sse-stream-parallel-function-calls.yaml")[0]
    assert b'"type": "STRING"' in item.request.body
    request = CODEC.decode_request(item.request)
    assert request.tools[0].parameters["properties"]["password"] == {"title": "Password", "type": "string"}
    assert request.provider_fields == {"gemini": {"parameters_key": "parameters"}}
    declaration = json.loads(CODEC.encode_request(request).body)["tools"][0]["functionDeclarations"][0]
    assert declaration["parameters"]["type"] == "object"


def test_inline_data_base64url_normalized() -> None:
    """The SDK sends inlineData bytes base64url-encoded; the IR holds standard base64 (other providers need it)."""
    item = corpus("error-429-resource-exhausted.yaml")[0]
    assert b"Ly9tYXRwbG90bGliLm9yZy_xnp5" in item.request.body
    image = CODEC.decode_request(item.request).messages[0].content[1]
    assert isinstance(image, ir.ImagePart) and isinstance(image.source, ir.Base64Image)
    assert image.source.media_type == "image/png"
    assert "Ly9tYXRwbG90bGliLm9yZy/xnp5" in image.source.data and "_" not in image.source.data


@pytest.mark.parametrize(
    ("finish", "calls", "kind"),
    [
        ("STOP", False, "end_turn"),
        ("STOP", True, "tool_use"),
        ("MAX_TOKENS", False, "max_tokens"),
        ("SAFETY", False, "content_filter"),
        ("RECITATION", False, "content_filter"),
        ("BLOCKLIST", False, "content_filter"),
        ("PROHIBITED_CONTENT", False, "content_filter"),
        ("SPII", False, "content_filter"),
        ("IMAGE_SAFETY", False, "content_filter"),
        ("MALFORMED_FUNCTION_CALL", False, "error"),
        ("LANGUAGE", False, "other"),
        ("OTHER", False, "other"),
    ],
)
def test_finish_reason_mapping(finish: str, calls: bool, kind: str) -> None:
    part = b'{"functionCall": {"name": "f", "args": {}}}' if calls else b'{"text": "x"}'
    body = CHUNK % (part, b', "finishReason": "%s"' % finish.encode(), b"")
    response = CODEC.decode_response(body)
    assert response.stop_reason == ir.StopReason(kind=kind, raw=finish)
    again = CODEC.decode_response(CODEC.encode_response(response).body)
    assert again.stop_reason == response.stop_reason  # raw survives when it means the same kind


def test_candidate_without_content() -> None:
    """MAX_TOKENS spent on thoughts: the candidate has a finishReason and no content at all."""
    body = (
        b'{"candidates": [{"finishReason": "MAX_TOKENS", "index": 0}], '
        b'"usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 59, "thoughtsTokenCount": 50}}'
    )
    events = decode_stream(_sse(body))
    assert [e.kind for e in events] == ["message_start", "done"]
    done = events[-1]
    assert isinstance(done, ir.Done) and done.stop_reason is not None and done.usage is not None
    assert (done.stop_reason.kind, done.usage.output_tokens, done.usage.reasoning_tokens) == ("max_tokens", 50, 50)


def test_prompt_blocked_has_no_candidates() -> None:
    body = b'{"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 7}}'
    done = decode_stream(_sse(body))[-1]
    assert isinstance(done, ir.Done)
    assert done.stop_reason == ir.StopReason(kind="content_filter", raw="SAFETY")
    assert CODEC.decode_response(body).content == []


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (_sse(CHUNK % (b'{"text": "Hel"}', b"", b"")), "stream ended without a finishReason"),
        (_sse(CHUNK % (b'{"text": "Hel"}', b"", b""))[:-4], "SSE event cut off"),
        (b'[{"candidates": []}\n,\r\n', "JSON array not closed"),
        (b"", "stream ended without a finishReason"),
    ],
    ids=["no-finish-reason", "cut-event", "open-array", "empty"],
)
def test_truncated_stream_is_malformed(body: bytes, why: str) -> None:
    events = decode_stream(body)
    assert validate(events) == []
    terminal = events[-1]
    assert isinstance(terminal, ir.ErrorEvent)
    assert terminal.error.kind == "malformed_stream" and why in terminal.error.message


def test_midstream_error_chunk() -> None:
    """An error object as an SSE data payload inside a 200 stream (e.g. the model overloaded mid-answer)."""
    error = b'{"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}'
    events = decode_stream(_sse(CHUNK % (b'{"text": "Hel"}', b"", b""), error))
    assert [e.kind for e in events] == ["message_start", "text_start", "text_delta", "text_end", "error"]
    terminal = events[-1]
    assert isinstance(terminal, ir.ErrorEvent)
    assert (terminal.error.kind, terminal.error.status, terminal.error.retryable) == ("overloaded", None, True)


def test_json_array_error_body() -> None:
    """The JSON-array endpoint wraps its error in a one-element array."""
    body = (
        b'[{\n  "error": {\n    "code": 429,\n    "message": "Quota exceeded",\n    "status": "RESOURCE_EXHAUSTED",\n'
        b'    "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "32s"}]\n  }\n}\n]'
    )
    error = CODEC.decode_error(429, {}, body)
    assert (error.kind, error.message, error.retry_after) == ("throttled", "Quota exceeded", 32.0)
    terminal = decode_stream(body)[-1]
    assert isinstance(terminal, ir.ErrorEvent) and terminal.error.kind == "throttled"
    assert terminal.error.retry_after == 32.0


def test_error_body_not_json() -> None:
    error = CODEC.decode_error(502, {"retry-after": "3"}, b"<html>Bad Gateway</html>")
    assert (error.kind, error.message, error.retry_after, error.code) == (
        "server",
        "<html>Bad Gateway</html>",
        3.0,
        None,
    )


def test_context_window_error_from_message() -> None:
    body = (
        b'{"error": {"code": 400, "message": "The input token count (1200000) exceeds the maximum number of '
        b'tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}'
    )
    assert CODEC.decode_error(400, {}, body).kind == "context_window_exceeded"


def test_v1_path_and_key_query() -> None:
    """`v1` as well as `v1beta`; an API key in `key=` carries no IR; with_auth uses x-goog-api-key."""
    wire = HttpRequest(
        method="POST",
        path="/v1/models/gemini-2.0-flash:streamGenerateContent",
        query={"key": "secret", "alt": "sse"},
        body=b'{"contents": [{"parts": [{"text": "hi"}]}]}',
    )
    request = CODEC.decode_request(wire)
    assert (request.model, request.stream, request.provider_fields) == (
        "gemini-2.0-flash",
        True,
        {"gemini": {"api_version": "v1"}},
    )
    assert request.messages == [ir.Message(role="user", content=[ir.TextPart(text="hi")])]
    encoded = CODEC.with_auth(CODEC.encode_request(request), "k-123")
    assert (encoded.path, encoded.query) == ("/v1/models/gemini-2.0-flash:streamGenerateContent", {"alt": "sse"})
    assert encoded.headers["x-goog-api-key"] == "k-123"
    assert b"secret" not in encoded.body


@pytest.mark.parametrize(
    ("config", "thinking", "extra"),
    [
        ({"thinkingBudget": 0}, ir.ThinkingConfig(enabled=False), None),
        ({"thinkingBudget": -1, "includeThoughts": True}, ir.ThinkingConfig(), {"thinkingBudget": -1}),
        ({"thinkingBudget": 512}, ir.ThinkingConfig(budget_tokens=512), {"includeThoughts": False}),
        ({"thinkingLevel": "low", "includeThoughts": True}, ir.ThinkingConfig(), {"thinkingLevel": "low"}),
    ],
    ids=["off", "dynamic", "budget-no-thoughts", "level"],
)
def test_thinking_config(config: dict[str, object], thinking: ir.ThinkingConfig, extra: object) -> None:
    body = {"contents": [], "generationConfig": {"thinkingConfig": config}}
    wire = HttpRequest(method="POST", path="/v1beta/models/m:generateContent", body=json.dumps(body).encode())
    request = CODEC.decode_request(wire)
    assert request.thinking == thinking
    assert request.provider_fields.get("gemini", {}).get("thinkingConfig") == extra
    sent = json.loads(CODEC.encode_request(request).body)["generationConfig"]["thinkingConfig"]
    assert {k: v for k, v in sent.items() if not (k == "includeThoughts" and v is False)} == {
        k: v for k, v in config.items() if not (k == "includeThoughts" and v is False)
    }


@pytest.mark.parametrize(
    ("config", "choice", "verbatim"),
    [
        ({"functionCallingConfig": {"mode": "AUTO"}}, ir.ToolChoiceAuto(), False),
        ({"functionCallingConfig": {"mode": "NONE"}}, ir.ToolChoiceNone(), False),
        ({"functionCallingConfig": {"mode": "ANY"}}, ir.ToolChoiceRequired(), False),
        ({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f"]}}, ir.ToolChoiceTool(name="f"), False),
        ({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f", "g"]}}, ir.ToolChoiceRequired(), True),
        ({"functionCallingConfig": {"mode": "VALIDATED"}}, None, True),
    ],
)
def test_tool_config_modes(config: dict[str, object], choice: ir.ToolChoice | None, verbatim: bool) -> None:
    body = {"contents": [], "toolConfig": config}
    wire = HttpRequest(method="POST", path="/v1beta/models/m:generateContent", body=json.dumps(body).encode())
    request = CODEC.decode_request(wire)
    assert request.tool_choice == choice
    assert ("toolConfig" in request.provider_fields.get("gemini", {})) == verbatim
    assert json.loads(CODEC.encode_request(request).body)["toolConfig"] == config


def test_tool_result_name_comes_from_the_call() -> None:
    """functionResponse.name must be the real tool name: from the IR, else from the call it answers."""
    call = ir.ToolCallPart(id="toolu_1", name="get_weather", arguments={}, arguments_raw="{}")
    result = ir.ToolResultPart(tool_call_id="toolu_1", content=[ir.TextPart(text="sunny")])
    request = ir.Request(
        model="m",
        messages=[ir.Message(role="assistant", content=[call]), ir.Message(role="tool", content=[result])],
    )
    body = json.loads(CODEC.encode_request(request).body)
    assert body["contents"][0]["parts"][0]["functionCall"] == {"name": "get_weather", "args": {}, "id": "toolu_1"}
    # The call carries its id, so its answer does too.
    assert body["contents"][1]["parts"][0]["functionResponse"] == {
        "name": "get_weather",
        "response": {"output": "sunny"},
        "id": "toolu_1",
    }
    orphan = request.model_copy(update={"messages": [ir.Message(role="tool", content=[result])]})
    with pytest.raises(EncodeError, match="toolu_1"):
        CODEC.encode_request(orphan)


def test_structured_tool_result_travels_as_object() -> None:
    """A tool result whose text is a compact JSON object reaches Gemini as that object (pydantic-ai sends
    {"return_value": ...}) and decodes back to the same text."""
    item = corpus("sse-stream-function-call-thought-signature-gemini3.yaml")[1]
    request = CODEC.decode_request(item.request)
    result = request.messages[2].content[0]
    assert isinstance(result, ir.ToolResultPart)
    assert result.content == [ir.TextPart(text='{"return_value":"Mexico"}')]
    assert result.tool_call_id == "pyd_ai_29bf73b69e02448588e15893d47a3e7e"
    sent = json.loads(CODEC.encode_request(request).body)["contents"][2]["parts"][0]["functionResponse"]
    assert sent["response"] == {"return_value": "Mexico"}


def test_model_turn_with_image_and_signature() -> None:
    """Image models put a thoughtSignature on an inlineData part: it stays with the part that follows it."""
    body = {
        "contents": [
            {
                "role": "model",
                "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0K"}, "thoughtSignature": "c2ln"}],
            }
        ]
    }
    wire = HttpRequest(method="POST", path="/v1beta/models/m:generateContent", body=json.dumps(body).encode())
    request = CODEC.decode_request(wire)
    thinking, image = request.messages[0].content
    assert thinking == ir.ThinkingPart(text="", signature="c2ln")
    assert isinstance(image, ir.ImagePart)
    assert json.loads(CODEC.encode_request(request).body)["contents"] == body["contents"]


def test_response_schema_openapi_and_enum_mime() -> None:
    """`responseSchema` (OpenAPI subset, upper-case types) is the older field; `text/x.enum` is a Gemini-only
    mime type. Both decode and go out again as the client sent them."""
    config = {
        "responseMimeType": "text/x.enum",
        "responseSchema": {"type": "STRING", "enum": ["yes", "no"]},
        "topK": 40,
    }
    body = {"contents": [], "generationConfig": config}
    wire = HttpRequest(method="POST", path="/v1beta/models/m:generateContent", body=json.dumps(body).encode())
    request = CODEC.decode_request(wire)
    assert request.response_format == ir.ResponseFormatJsonSchema(schema_={"type": "string", "enum": ["yes", "no"]})
    assert request.provider_fields == {
        "gemini": {
            "response_schema_key": "responseSchema",
            # The OpenAPI-subset dialect cannot say it: the request diff does not compare it (false alarm FA7).
            "unsaid_schema_keywords": ["additionalProperties"],
            "generationConfig": {"topK": 40, "responseMimeType": "text/x.enum"},
        }
    }
    sent = json.loads(CODEC.encode_request(request).body)["generationConfig"]
    assert sent == {**config, "responseSchema": {"type": "string", "enum": ["yes", "no"]}}


def test_unknown_top_level_fields_are_kept() -> None:
    """llm-gemini sends safetySettings, which the IR has no field for: kept and sent again."""
    item = corpus("json-array-stream-thought-function-call.yaml")[0]
    request = CODEC.decode_request(item.request)
    settings = request.provider_fields["gemini"]["body"]["safetySettings"]
    assert [s["category"] for s in settings][:2] == [
        "HARM_CATEGORY_DANGEROUS_CONTENT",
        "HARM_CATEGORY_SEXUALLY_EXPLICIT",
    ]
    assert json.loads(CODEC.encode_request(request).body)["safetySettings"] == settings


def test_inline_data_of_a_non_image_type_is_a_file_part() -> None:
    """Gemini's inlineData takes any mimeType: a recorded request attaches a text/plain file next to a PNG. The PNG
    is an image part, the text file a file part, which an Anthropic or Bedrock backend sends as a document (not an
    image block, which their specs refuse for text/plain)."""
    item = corpus("error-429-resource-exhausted.yaml")[0]
    _, image, file = CODEC.decode_request(item.request).messages[0].content
    assert isinstance(image, ir.ImagePart)
    assert isinstance(file, ir.FilePart) and (file.media_type, file.filename) == ("text/plain", None)
    assert base64.b64decode(file.data).startswith(b"Review Guidelines")


def test_file_part_is_inline_data_of_its_mime_type_without_its_name() -> None:
    part = ir.FilePart(media_type="application/pdf", data="JVBERi0xLjQK", filename="a.pdf")
    request = ir.Request(model="m", messages=[ir.Message(role="user", content=[part])])
    body = json.loads(CODEC.encode_request(request).body)
    assert body["contents"] == [
        {"role": "user", "parts": [{"inlineData": {"mimeType": "application/pdf", "data": part.data}}]}
    ]
    wire = HttpRequest(method="POST", path="/v1beta/models/m:generateContent", body=json.dumps(body).encode())
    assert CODEC.decode_request(wire).messages[0].content == [part.model_copy(update={"filename": None})]


def _gemini_parts(*parts: dict[str, object]) -> ir.Request:
    body = {"contents": [{"role": "user", "parts": [{"text": "Sum up"}, *parts]}]}
    wire = HttpRequest(method="POST", path="/v1beta/models/m:generateContent", body=json.dumps(body).encode())
    return CODEC.decode_request(wire)


@pytest.mark.parametrize(
    ("file_data", "expected"),
    [
        (
            {"fileUri": "https://example.com/d.pdf", "mimeType": "application/pdf"},
            ir.FilePart(url="https://example.com/d.pdf", media_type="application/pdf"),
        ),
        ({"fileUri": "https://example.com/d.pdf"}, ir.FilePart(url="https://example.com/d.pdf")),
        (
            {"file_uri": "https://example.com/d", "mime_type": "text/plain"},
            ir.FilePart(url="https://example.com/d", media_type="text/plain"),
        ),
        (
            {"fileUri": "https://example.com/cat.png"},
            ir.ImagePart(source=ir.UrlImage(url="https://example.com/cat.png")),
        ),
        (
            {"fileUri": "https://example.com/cat", "mimeType": "image/png"},
            ir.ImagePart(source=ir.UrlImage(url="https://example.com/cat")),
        ),
    ],
)
def test_file_data_of_a_document_type_is_a_url_file_part(file_data: dict[str, str], expected: ir.ContentPart) -> None:
    """A fileData URI is a file part when its mimeType (else its URL) names a type that is not an image; the
    mimeType is kept as sent (None when none was sent); anything else stays a URL image."""
    assert _gemini_parts({"fileData": file_data}).messages[0].content[1] == expected


@pytest.mark.parametrize(
    ("part", "mime"),
    [
        (ir.FilePart(url="https://x/d.pdf", media_type="text/plain"), "text/plain"),
        (ir.FilePart(url="https://x/d.pdf"), "application/pdf"),
        (ir.FilePart(url="https://x/d"), "application/octet-stream"),
    ],
)
def test_a_url_file_without_media_type_is_sent_with_the_type_its_url_names(part: ir.FilePart, mime: str) -> None:
    """fileData needs a mimeType to be read: the IR's, else guessed from the URL, else octet-stream (the declared
    loss `request.FilePart.media_type:None`); it decodes back as a URL file of that type."""
    request = ir.Request(model="m", messages=[ir.Message(role="user", content=[part])])
    body = json.loads(CODEC.encode_request(request).body)
    assert body["contents"][0]["parts"] == [{"fileData": {"fileUri": part.url, "mimeType": mime}}]
    assert "request.FilePart.media_type:None" in CODEC.losses
    wire = HttpRequest(method="POST", path="/v1beta/models/m:generateContent", body=json.dumps(body).encode())
    assert CODEC.decode_request(wire).messages[0].content == [part.model_copy(update={"media_type": mime})]


def test_a_file_by_another_providers_file_id_is_refused() -> None:
    request = ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.FilePart(file_id="file-abc")])])
    with pytest.raises(EncodeError, match="another provider's stored file"):
        CODEC.encode_request(request)
