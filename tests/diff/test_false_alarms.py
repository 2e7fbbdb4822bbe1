"""False alarms met gating real gateways (LiteLLM 1.106.2, Portkey 1.15.2, claude-code-router 2.0.0; the scout's
notes name each class FA1..FA8), one test each, named after the class. Each rule is narrow: the test beside it
shows that the real bug in the same area is still a divergence."""

from __future__ import annotations

import json
from typing import Any

from harness import ir
from harness.backends.app import model_listing
from harness.diff import compare, judge, request_divergences, response_divergences
from harness.diff.request_side import OBJECT_CARRIER
from harness.protocols import HttpRequest, registry
from harness.scenarios.loader import load_scenarios
from harness.trace import Case, Check, RunTrace, SdkView, Verdict
from tests.conftest import REPO
from tests.diff.test_compare import text_events, view

# --- FA1: a usage detail of 0 on one side and absent on the other is one fact, streamed or not ---------------


def _with_done_usage(usage: ir.Usage) -> list[ir.StreamEvent]:
    events = text_events(["Hello"])
    events[-1] = ir.Done(stop_reason=ir.StopReason(kind="end_turn", raw="stop"), usage=usage)
    return events


def _response(usage: ir.Usage) -> ir.Response:
    return ir.Response(id="r", model="m", content=[ir.TextPart(text="Hello")], usage=usage)


def test_fa1_zero_usage_details_equal_absent_ones_in_streams_and_responses() -> None:
    absent = ir.Usage(input_tokens=9, output_tokens=2)
    zeros = ir.Usage(input_tokens=9, output_tokens=2, cache_read_tokens=0, reasoning_tokens=0, cache_write_tokens=0)
    # LiteLLM's stream: `cached_tokens: 0` / `reasoning_tokens: 0` in the final usage; the baseline has none.
    assert compare(view(_with_done_usage(absent)), view(_with_done_usage(zeros))) == []
    assert compare(view([], _response(absent)), view([], _response(zeros))) == []


def test_fa1_a_nonzero_detail_against_an_absent_or_zero_one_still_diverges() -> None:
    cached = ir.Usage(input_tokens=9, output_tokens=2, cache_read_tokens=2048)
    for other in (
        ir.Usage(input_tokens=9, output_tokens=2),
        ir.Usage(input_tokens=9, output_tokens=2, cache_read_tokens=0),
    ):
        found = compare(view(_with_done_usage(cached)), view(_with_done_usage(other)))
        assert [d.path.split(".", 1)[1] for d in found] == ["usage.cache_read_tokens"]
    # Zeroed real counts (LiteLLM's Gemini stream usage, A8) are not details: still a divergence.
    zeroed = ir.Usage(input_tokens=0, output_tokens=0)
    found = compare(view(_with_done_usage(ir.Usage(input_tokens=9, output_tokens=2))), view(_with_done_usage(zeroed)))
    assert {d.path.split(".", 1)[1] for d in found} == {"usage.input_tokens", "usage.output_tokens"}


# --- FA2: JSON re-serialized where the frontend protocol carries an object -----------------------------------


def _call_turns(raw: str, result_text: str) -> dict[str, Any]:
    call = ir.ToolCallPart(id="c1", name="get_weather", arguments=json.loads(raw), arguments_raw=raw)
    result = ir.ToolResultPart(tool_call_id="c1", content=[ir.TextPart(text=result_text)])
    messages = [
        ir.Message(role="user", content=[ir.TextPart(text="Weather in Paris?")]),
        ir.Message(role="assistant", content=[call]),
        ir.Message(role="tool", content=[result]),
    ]
    return ir.to_json(ir.Request(model="m", messages=messages))


def _paths(left: dict[str, Any], right: dict[str, Any], frontend: str, backend: str) -> list[str]:
    losses = list(registry.get(backend).losses)
    found = request_divergences(
        left, right, losses=losses, pair=(frontend, backend), frontend_losses=list(registry.get(frontend).losses)
    )
    return [d.path for d in found]


def test_fa2_arguments_re_serialized_where_the_frontend_carries_an_object() -> None:
    # anthropic/gemini -> openai: the client sent `input` / `args` objects; the gateway wrote the JSON text itself.
    assert OBJECT_CARRIER in registry.get("anthropic").losses and OBJECT_CARRIER in registry.get("gemini").losses
    client = _call_turns('{"city":"Paris"}', "18°C and sunny")
    upstream = _call_turns('{"city": "Paris"}', "18°C and sunny")
    assert _paths(client, upstream, "anthropic", "openai") == []
    assert _paths(client, upstream, "gemini", "openai") == []


def test_fa2_changed_arguments_still_diverge_and_text_frontends_keep_their_text() -> None:
    client = _call_turns('{"city":"Paris"}', "18°C and sunny")
    assert _paths(client, _call_turns('{"city": "paris"}', "18°C and sunny"), "anthropic", "openai") == [
        "request.messages[1].content[0].arguments.city"
    ]
    # An OpenAI client sends the arguments as text: a gateway to a text-carrying wire must pass that text on.
    assert _paths(client, _call_turns('{"city": "Paris"}', "18°C and sunny"), "openai", "openai") == [
        "request.messages[1].content[0].arguments_raw"
    ]


def test_fa2_tool_result_json_re_serialized_where_the_frontend_carries_an_object() -> None:
    # gemini -> openai: functionResponse.response {"result": ...} decodes to its compact JSON; LiteLLM json.dumps it.
    client = _call_turns('{"city":"Paris"}', '{"result":"18°C and sunny"}')
    upstream = _call_turns('{"city":"Paris"}', '{"result": "18\\u00b0C and sunny"}')
    assert _paths(client, upstream, "gemini", "openai") == []
    changed = _call_turns('{"city":"Paris"}', '{"result": "19\\u00b0C and sunny"}')
    assert _paths(client, changed, "gemini", "openai") == ["request.messages[2].content[0].content[0].text"]


# --- FA3: a text tool result wrapped in a one-key object for Gemini's functionResponse.response ---------------


def test_fa3_text_tool_result_wrapped_in_a_one_key_object_for_an_object_only_backend() -> None:
    client = _call_turns('{"city":"Paris"}', "18°C and sunny")
    wrapped = _call_turns('{"city":"Paris"}', '{"content":"18°C and sunny"}')
    assert _paths(client, wrapped, "openai", "gemini") == []
    # The same wrapper towards a backend whose wire carries text is a changed text.
    assert registry.facts("gemini").tool_results_as_objects and not registry.facts("anthropic").tool_results_as_objects
    assert _paths(client, wrapped, "openai", "anthropic") == ["request.messages[2].content[0].content[0].text"]


def test_fa3_stringified_content_blocks_still_diverge() -> None:
    # claude-code-router (R5): the Anthropic blocks are JSON-stringified; on Gemini, wrapped as well.
    client = _call_turns('{"city":"Paris"}', "18°C and sunny")
    blocks = json.dumps([{"type": "text", "text": "18°C and sunny"}])
    for backend, text in (("openai", blocks), ("gemini", json.dumps({"result": blocks}))):
        assert _paths(client, _call_turns('{"city":"Paris"}', text), "anthropic", backend) == [
            "request.messages[2].content[0].content[0].text"
        ]


# --- FA4 / FA6: empty `properties` / `$defs` in tool schemas are absent ones --------------------------------


def _tools_request(parameters: dict[str, Any]) -> dict[str, Any]:
    tool = ir.Tool(name="get_time", description="Current time.", parameters=parameters)
    return ir.to_json(
        ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])], tools=[tool])
    )


def test_fa4_fa6_empty_properties_and_defs_in_tool_schemas_equal_absent_ones() -> None:
    city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    # Portkey adds `$defs: {}` (FA6); LiteLLM drops `properties: {}` for Gemini (FA4).
    assert _paths(_tools_request(city), _tools_request({**city, "$defs": {}}), "openai", "anthropic") == []
    empty = {"type": "object", "properties": {}}
    assert _paths(_tools_request(empty), _tools_request({"type": "object"}), "openai", "gemini") == []
    # A property named `properties` is data, not the keyword.
    named = {"type": "object", "properties": {"properties": {}}}
    assert _paths(_tools_request(named), _tools_request({"type": "object"}), "openai", "gemini") != []


def test_fa6_empty_required_in_tool_schemas_equals_absent_one() -> None:
    # Portkey adds `"required": []` to a schema without `required`: JSON Schema says an omitted `required` behaves
    # as an empty array. A `required` that lost a name still diverges.
    bare = {"type": "object", "properties": {"tz": {"type": "string"}}}
    assert _paths(_tools_request(bare), _tools_request({**bare, "required": []}), "openai", "anthropic") == []
    needed = {**bare, "required": ["tz"]}
    assert _paths(_tools_request(needed), _tools_request({**bare, "required": []}), "openai", "anthropic") != []


def test_fa4_schema_emptied_upstream_still_diverges() -> None:
    # LiteLLM's Gemini frontend (A9): the parameters arrive upstream as an empty object schema.
    city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    found = _paths(_tools_request(city), _tools_request({"type": "object", "properties": {}}), "gemini", "openai")
    assert found and all(p.startswith("request.tools[0].parameters") for p in found)


# --- FA5: a field the scenario's check admits several values for is not judged again by the diff ------------


CASE = Case("error-overloaded", "anthropic", "gemini", False)


def _error_trace(role: str, status: int, check_status: int | None = None) -> RunTrace:
    run = CASE.runs("gemini")[role]  # type: ignore[index]
    error = ir.IRError.of(ir.ErrorKind.OVERLOADED, "Overloaded", status=status)
    got = status if check_status is None else check_status
    checks = [
        Check(name="error.kind", passed=True, expected="overloaded", actual="overloaded"),
        Check(name="error.status", passed=got in (529, 503), expected=[529, 503], actual=got),
    ]
    return RunTrace.of(run, CASE.case_id, sdk=SdkView(error=error, exception="overloaded"), checks=checks)


def test_fa5_error_status_a_scenario_admits_either_way_is_not_rejudged() -> None:
    # anthropic -> gemini: the Anthropic baseline says 529, the gateway passes Gemini's 503; the check admits both.
    runs = {
        "baseline_frontend": _error_trace("baseline_frontend", 529),
        "baseline_backend": _error_trace("baseline_backend", 503),
        "translated": _error_trace("translated", 503),
    }
    assert response_divergences(runs["baseline_frontend"], runs["translated"]) == []
    assert judge(CASE, runs).verdict is Verdict.PASS


def test_fa5_a_status_outside_the_admitted_values_still_diverges() -> None:
    # LiteLLM (A2): Anthropic's 529 overloaded_error comes back as 500.
    translated = _error_trace("translated", 500)
    found = response_divergences(_error_trace("baseline_frontend", 529), translated)
    assert [d.path for d in found] == ["error.status"]


# --- FA8: a gateway's forwarded model listing reaches the replay server as a GET ------------------------------


def test_fa8_replay_server_answers_a_forwarded_model_listing() -> None:
    scenarios = load_scenarios(REPO / "scenarios")
    reply = model_listing("openai", "/v1/models", scenarios)
    assert reply is not None and reply.status == 200
    assert [m["id"] for m in json.loads(reply.body)["data"]] == ["conformance-model", "conformance-model-mini"]
    gemini = model_listing("gemini", "/v1beta/models", scenarios)
    assert gemini is not None and json.loads(gemini.body)["models"][0]["name"] == "models/conformance-model"
    # A profile lists like its family; a path that lists nothing gets no listing (the app answers 404).
    assert model_listing("groq", "/openai/v1/models", scenarios) is not None
    assert model_listing("openai", "/v1/responses", scenarios) is None


# --- Anthropic `system: []` / `""` (Portkey) is no system prompt ---------------------------------------------


def _anthropic(system: Any) -> ir.Request:
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}], "system": system}
    return registry.get("anthropic").decode_request(
        HttpRequest(method="POST", path="/v1/messages", query={}, headers={}, body=json.dumps(body).encode())
    )


def test_fa_sys_anthropic_empty_system_list_or_string_is_no_system_prompt() -> None:
    assert _anthropic([]).system is None and _anthropic("").system is None
    # A real one, as a string or as blocks, is kept (so a dropped prompt still diverges).
    assert _anthropic("You are a pirate.").system == "You are a pirate."
    assert _anthropic([{"type": "text", "text": "You are a pirate."}]).system == "You are a pirate."


# --- FA7: `additionalProperties` where the upstream schema dialect cannot say it (Gemini `responseSchema`) ---------


def _gemini_upstream(config: dict[str, Any]) -> dict[str, Any]:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": config}
    path = "/v1beta/models/gemini-2.5-flash:generateContent"
    request = registry.get("gemini").decode_request(
        HttpRequest(method="POST", path=path, query={}, headers={}, body=json.dumps(body).encode())
    )
    return ir.to_json(request)


def _client_schema(schema: dict[str, Any]) -> dict[str, Any]:
    fmt = ir.ResponseFormatJsonSchema(name="city_info", schema_=schema, strict=True)
    return ir.to_json(
        ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])], response_format=fmt)
    )


CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_fa7_additional_properties_dropped_for_gemini_response_schema_dialect() -> None:
    # Portkey writes `responseSchema` (OpenAPI subset: no additionalProperties field; Gemini rejects it there).
    client = _client_schema({**CITY, "additionalProperties": False})
    openapi = {"responseMimeType": "application/json", "responseSchema": {**CITY, "type": "OBJECT"}}
    assert _paths(client, _gemini_upstream(openapi), "openai", "gemini") == []


def test_fa7_additional_properties_dropped_through_response_json_schema_still_diverges() -> None:
    client = _client_schema({**CITY, "additionalProperties": False})
    json_schema = {"responseMimeType": "application/json", "responseJsonSchema": CITY}
    assert _paths(client, _gemini_upstream(json_schema), "openai", "gemini") == [
        "request.response_format.schema.additionalProperties"
    ]
    # The OpenAPI dialect excuses only what it cannot say: a dropped property still differs.
    lost = {"responseMimeType": "application/json", "responseSchema": {"type": "OBJECT", "properties": {}}}
    assert _paths(client, _gemini_upstream(lost), "openai", "gemini") != []


def test_fa8_replay_app_serves_the_listing_on_get_and_404_elsewhere() -> None:
    from starlette.testclient import TestClient

    from harness.backends import wire_app

    def no_post(backend: str, request: HttpRequest) -> Any:
        raise LookupError("POST not expected here")

    client = TestClient(wire_app(["openai"], no_post, load_scenarios(REPO / "scenarios")))
    listing = client.get("/openai/v1/models")  # Portkey forwards `GET /v1/models` to `{custom_host}/models`
    assert listing.status_code == 200 and listing.json()["object"] == "list"
    assert client.get("/openai/v1/responses").status_code == 404


# --- FA9: `0.0` re-serialized as `0` by a JavaScript gateway is one JSON number (ccr, fuzz-found) -----------------


def _call_answer(arguments: dict[str, Any]) -> dict[str, Any]:
    call = ir.ToolCallPart(id="c1", name="a", arguments=arguments, arguments_raw=json.dumps(arguments))
    return view([], ir.Response(id="r", model="m", content=[call]))


def test_fa9_integral_float_arguments_equal_their_int_spelling() -> None:
    assert compare(_call_answer({"a": 0.0, "b": [2.0, {"c": -1.0}]}), _call_answer({"a": 0, "b": [2, {"c": -1}]})) == []


def test_fa9_a_changed_number_or_a_fraction_lost_still_diverges() -> None:
    for left, right in ((0.5, 0), (1.0, True)):
        found = compare(_call_answer({"a": left}), _call_answer({"a": right}))
        assert [d.path for d in found] == ["response.content[0].arguments.a"]
