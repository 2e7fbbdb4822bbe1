"""Every committed scenario loads and validates; bad files fail with `<file>: <path>: <problem>`."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from harness import ir
from harness.scenarios import ReplyError, ReplyModels, ReplyOk, Scenario, ScenarioError, load_scenarios
from harness.scenarios.loader import load_scenario, scenario_json_schema
from tests.conftest import REPO

SCENARIOS = REPO / "scenarios"
REQUIRED_IDS = {
    "text-basic", "system-prompt", "multi-turn", "max-tokens-length", "stop-sequence", "sampling-params",
    "unicode-multibyte", "long-output", "tool-call-single", "tool-call-parallel", "tool-empty-arguments",
    "tool-choice-required", "tool-choice-none", "tool-choice-specific", "tool-result-roundtrip", "text-then-tool",
    "vision-base64", "vision-multiple-images", "json-object", "json-schema", "thinking-with-signature",
    "thinking-then-tool", "usage-with-cache", "error-rate-limit-429", "error-auth-401", "error-context-overflow-400",
    "error-overloaded", "error-server-500", "midstream-error", "truncated-stream", "models-list",
}  # fmt: skip

MINIMAL = {
    "id": "tmp-basic",
    "description": "temporary",
    "request": {"messages": [{"role": "user", "content": [{"kind": "text", "text": "hi"}]}]},
    "reply": {"kind": "ok", "content": [{"kind": "text", "text": "hello"}]},
}


@pytest.fixture(scope="module")
def scenarios() -> dict[str, Scenario]:
    return {s.id: s for s in load_scenarios(SCENARIOS)}


def _write(folder: Path, name: str, data: object) -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def _error_for(tmp_path: Path, data: object) -> ScenarioError:
    path = _write(tmp_path, "tmp-basic.yaml", data)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}: ")
    return info.value


def test_every_required_scenario_is_present(scenarios: dict[str, Scenario]) -> None:
    assert set(scenarios) >= REQUIRED_IDS
    assert len(scenarios) >= 31


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_each_file_validates_against_the_generated_schema(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(scenario_json_schema()).validate(data)
    scenario = load_scenario(path)
    assert scenario.id == path.stem  # the convention the README states
    assert scenario.description.strip()


def test_schema_is_json_and_lets_the_model_be_omitted() -> None:
    schema = json.loads(json.dumps(scenario_json_schema()))
    request_def = schema["$defs"]["ScenarioRequest"]
    assert "model" not in request_def.get("required", [])
    assert set(schema["required"]) == {"id", "description", "reply"}


def test_concrete_values_of_a_few_scenarios(scenarios: dict[str, Scenario]) -> None:
    tool = scenarios["tool-call-single"]
    assert isinstance(tool.reply, ReplyOk)
    call = tool.reply.content[0]
    assert isinstance(call, ir.ToolCallPart)
    assert (call.name, call.arguments, call.arguments_raw) == (
        "get_weather",
        {"city": "Paris", "unit": "celsius"},
        '{"city":"Paris","unit":"celsius"}',
    )
    assert tool.request.model == "conformance-model"
    assert [c.value for c in tool.requires] == ["tools"]

    limited = scenarios["error-rate-limit-429"]
    assert isinstance(limited.reply, ReplyError)
    assert (limited.reply.status, limited.reply.error.retry_after, limited.reply.error.retryable) == (429, 7.0, True)

    assert scenarios["midstream-error"].streaming == ["stream"]
    assert scenarios["truncated-stream"].streaming == ["stream"]
    assert scenarios["text-basic"].streaming == ["stream", "nonstream"]
    models = scenarios["models-list"]
    assert isinstance(models.reply, ReplyModels)
    assert models.kind == "models_list"
    assert models.reply.models == ["conformance-model", "conformance-model-mini"]


def test_tool_empty_arguments_keeps_the_empty_raw_text(scenarios: dict[str, Scenario]) -> None:
    reply = scenarios["tool-empty-arguments"].reply
    assert isinstance(reply, ReplyOk)
    call = reply.content[0]
    assert isinstance(call, ir.ToolCallPart)
    assert (call.arguments, call.arguments_raw) == ({}, "")


def test_not_yaml(tmp_path: Path) -> None:
    error = _error_for(tmp_path, "id: [unclosed\n")
    assert error.path.startswith("line ")
    assert "not valid YAML" in error.problem


def test_not_a_mapping(tmp_path: Path) -> None:
    error = _error_for(tmp_path, "- just\n- a list\n")
    assert (error.path, error.problem) == ("$", "a scenario file holds a mapping, not list")


def test_unknown_key_names_its_path(tmp_path: Path) -> None:
    data = {**MINIMAL, "expect": {"text_equal": "typo"}}
    error = _error_for(tmp_path, data)
    assert error.path == "expect"
    assert "text_equal" in error.problem


def test_missing_reply(tmp_path: Path) -> None:
    data = {k: v for k, v in MINIMAL.items() if k != "reply"}
    error = _error_for(tmp_path, data)
    assert (error.path, error.problem) == ("$", "'reply' is a required property")


def test_wrong_type_deep_in_the_request(tmp_path: Path) -> None:
    data = {**MINIMAL, "request": {"messages": [{"role": "user", "content": "plain string"}]}}
    error = _error_for(tmp_path, data)
    assert error.path == "request.messages[0].content"
    assert "is not of type 'array'" in error.problem


def test_bad_capability(tmp_path: Path) -> None:
    error = _error_for(tmp_path, {**MINIMAL, "requires": ["telepathy"]})
    assert error.path == "requires[0]"
    assert "'telepathy' is not one of" in error.problem


def test_midstream_error_must_be_stream_only(tmp_path: Path) -> None:
    reply = {**MINIMAL["reply"], "midstream_error": {"after_events": 2, "error": {"kind": "overloaded"}}}  # type: ignore[dict-item]
    error = _error_for(tmp_path, {**MINIMAL, "reply": reply})
    assert error.problem == "a reply with midstream_error or truncate_after is stream-only: streaming: [stream]"


def test_cut_beyond_the_scripted_stream(tmp_path: Path) -> None:
    reply = {**MINIMAL["reply"], "truncate_after": 9}  # type: ignore[dict-item]
    error = _error_for(tmp_path, {**MINIMAL, "reply": reply, "streaming": ["stream"]})
    assert (error.path, error.problem) == ("reply", "truncate_after=9 but the reply has only 5 events")


def test_request_fields_must_name_request_fields(tmp_path: Path) -> None:
    error = _error_for(tmp_path, {**MINIMAL, "expect": {"request_fields": ["temprature"]}})
    assert error.problem == "expect.request_fields names no request field: temprature"


def test_models_kind_and_reply_go_together(tmp_path: Path) -> None:
    error = _error_for(tmp_path, {**MINIMAL, "kind": "models_list"})
    assert error.problem == "kind models_list goes with reply kind models, and only with it"


def test_stream_flag_is_the_runners(tmp_path: Path) -> None:
    data = {**MINIMAL, "request": {**MINIMAL["request"], "stream": True}}  # type: ignore[dict-item]
    error = _error_for(tmp_path, data)
    assert error.problem == "request.stream is set by the runner from `streaming`; leave it out"


def test_id_must_be_the_file_name(tmp_path: Path) -> None:
    """`--scenario ID`, the cassette names and the report find a scenario's file by its id."""
    path = _write(tmp_path, "tmp-basics.yaml", MINIMAL)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == f"{path}: id: 'tmp-basic' differs from the file name; use id: tmp-basics"


def test_every_schema_error_of_a_file_at_once(tmp_path: Path) -> None:
    """Three mistakes in one file, three lines in one error, in data order; the id check joins them."""
    data = {
        **MINIMAL,
        "requires": ["telepathy"],
        "streaming": ["sometimes"],
        "request": {"messages": [{"role": "user", "content": "plain string"}]},
    }
    path = _write(tmp_path, "other-name.yaml", data)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    error = info.value
    assert [(e.path, e.problem.split(" is ")[0]) for e in error.problems] == [
        ("request.messages[0].content", "'plain string'"),
        ("requires[0]", "'telepathy'"),
        ("streaming[0]", "'sometimes'"),
        ("id", "'tmp-basic' differs from the file name; use id: other-name"),
    ]
    assert str(error).splitlines() == [str(e) for e in error.problems]
    assert all(line.startswith(f"{path}: ") for line in str(error).splitlines())
    assert (error.path, error.file) == ("request.messages[0].content", str(path))  # the first, as before


def test_every_bad_file_of_a_folder_at_once(tmp_path: Path) -> None:
    _write(tmp_path, "tmp-basic.yaml", MINIMAL)
    first = _write(tmp_path, "a.yaml", {**MINIMAL, "id": "a", "requires": ["telepathy"]})
    second = _write(tmp_path, "b.yaml", {**MINIMAL, "id": "c"})
    with pytest.raises(ScenarioError) as info:
        load_scenarios(tmp_path)
    lines = str(info.value).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{first}: requires[0]: 'telepathy' is not one of")
    assert lines[1] == f"{second}: id: 'c' differs from the file name; use id: b"


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="scenario folder not found"):
        load_scenarios(tmp_path / "nope")
