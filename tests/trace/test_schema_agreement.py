"""The trace models and their JSON Schema agree, so the models' own strict check (run on every trace written and
read) is the schema check at a fraction of its cost (`harness.trace.writer`).

- Every case result the models build dumps to JSON the schema accepts, and parses back to the same result.
- Around such a trace, with one field dropped, one unknown field added or one value of another JSON type: what
  the models accept in strict mode, the schema accepts, and what the schema accepts, the models accept.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.protocols import registry
from harness.trace import CaseResult, TraceError, Verdict, case_text, parse_case, validate
from harness.trace.model import Check, DivergenceJSON, RunTrace, SdkView, Timings, Wire
from tests import strategies as s
from tests.report.factory import case as factory_case

ROLES = ("baseline_frontend", "baseline_backend", "translated")
protocols = st.sampled_from(registry.names())
millis = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def sdk_views(draw: st.DrawFn) -> SdkView:
    response = draw(st.none() | s.responses())
    events = s.events_for(response) if response is not None and draw(st.booleans()) else None
    return SdkView(
        response=response,
        events=events,
        error=draw(st.none() | s.errors),
        exception=draw(st.none() | s.names),
    )


checks = st.builds(Check, name=s.names, passed=st.booleans(), expected=s.json_values, actual=s.json_values)
wires = st.builds(
    Wire,
    cassette=st.none() | s.names,
    interaction=st.none() | st.integers(0, 3),
    upstream=s.text,
    frontend=s.text,
    upstream_chunks=st.integers(0, 100),
    frontend_chunks=st.integers(0, 100),
    truncated=st.booleans(),
)


@st.composite
def run_traces(draw: st.DrawFn) -> RunTrace:
    response = draw(st.none() | s.responses())
    return RunTrace(
        case_id=draw(s.names),
        role=draw(st.sampled_from(ROLES)),
        scenario=draw(s.names),
        client=draw(protocols),
        upstream=draw(protocols),
        mode=draw(st.sampled_from(["passthrough", "translate"])),
        stream=draw(st.booleans()),
        trace_id=draw(st.none() | s.ids),
        frontend_request=draw(st.none() | s.requests),
        upstream_request=draw(st.none() | s.requests),
        upstream_status=draw(st.none() | st.integers(100, 599)),
        upstream_events=s.events_for(response) if response is not None and draw(st.booleans()) else None,
        upstream_response=response,
        sdk=draw(sdk_views()),
        checks=draw(st.lists(checks, max_size=3)),
        grammar=draw(st.lists(s.text, max_size=2)),
        status=draw(st.sampled_from(["ok", "failed", "error", "skipped"])),
        error=draw(st.none() | s.text),
        timings=Timings(total_ms=draw(millis), first_byte_ms=draw(st.none() | millis)),
        wire=draw(wires),
    )


divergences = st.builds(
    DivergenceJSON,
    path=s.text,
    left=s.json_values,
    right=s.json_values,
    event_index=st.none() | st.integers(0, 50),
    change=s.text,
)


@st.composite
def case_results(draw: st.DrawFn) -> CaseResult:
    roles = draw(st.lists(st.sampled_from(ROLES), unique=True, max_size=2))
    return CaseResult(
        case_id=draw(s.names),
        scenario=draw(s.names),
        frontend=draw(protocols),
        backend=draw(protocols),
        stream=draw(st.booleans()),
        verdict=draw(st.sampled_from(list(Verdict))),
        reason=draw(s.text),
        first_divergence=draw(st.none() | divergences),
        request_divergences=draw(st.lists(divergences, max_size=2)),
        response_divergences=draw(st.lists(divergences, max_size=2)),
        runs={role: draw(run_traces()) for role in roles},
        known=draw(st.none() | s.text),
        duration_ms=draw(millis),
    )


@given(case_results())
def test_every_case_the_models_build_is_valid_by_the_schema_and_reads_back(result: CaseResult) -> None:
    assert parse_case(case_text(result), full_check=True) == result  # the models, then the schema


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += _paths(value, (*path, index))
    return out


def _mutated(data: dict[str, Any], path: tuple[Any, ...], how: str, value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(data))
    parent: Any = data
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1] if path else None
    if how == "drop" and isinstance(parent, dict) and last is not None:
        del parent[last]
    elif how == "extra":
        target = parent[last] if last is not None else parent
        if isinstance(target, dict):
            target["unknown_field"] = value
    elif last is not None:
        parent[last] = value
    return data


other_json = st.sampled_from([None, True, 0, 7, 1.5, -2, "", "text", [], [1], {}, {"kind": "text"}])


def _accepted_by_models(data: dict[str, Any]) -> bool:
    try:
        parse_case(json.dumps(data))
    except TraceError:
        return False
    return True


def _accepted_by_schema(data: dict[str, Any]) -> bool:
    try:
        validate(data, "case")
    except TraceError:
        return False
    return True


@given(case_results(), st.data(), st.sampled_from(["drop", "extra", "replace"]), other_json)
def test_models_and_schema_accept_and_reject_the_same_neighbours(
    result: CaseResult, data: st.DataObject, how: str, value: Any
) -> None:
    dumped = json.loads(case_text(result))
    path = data.draw(st.sampled_from(_paths(dumped)))
    changed = _mutated(dumped, path, how, value)
    assert _accepted_by_models(changed) == _accepted_by_schema(changed), (how, path, value)


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d.pop("verdict"), "verdict"),
        (lambda d: d.update(verdict="flaky"), "verdict"),
        (lambda d: d.update(duration_ms="5"), "duration_ms"),
        (lambda d: d.update(stream=1), "stream"),
        (lambda d: d.update(extra=1), "extra"),
    ],
)
def test_a_bad_trace_is_refused_naming_the_field(change: Any, where: str) -> None:
    result = CaseResult(
        case_id="c", scenario="s", frontend="openai", backend="openai", stream=True, verdict=Verdict.PASS, reason="r"
    )
    data = json.loads(case_text(result))
    change(data)
    with pytest.raises(TraceError, match=where):
        parse_case(json.dumps(data), "c.json")
    with pytest.raises(TraceError, match=where):
        validate(data, "case")


def test_ir_events_in_traces_are_the_ir_union() -> None:
    """The stream-event union the trace schema embeds is the IR's (a guard for the properties above)."""
    assert "TextDelta" in json.dumps(RunTrace.model_json_schema())
    assert ir.TextDelta(index=0, text="x").kind == "text_delta"


@pytest.mark.parametrize("side", ["upstream", "frontend"])
def test_a_negative_chunk_count_is_refused_by_both(side: str) -> None:
    # Hypothesis found it: the models refused `frontend_chunks: -2` (fewer chunks than its zero offsets), while the
    # schema took any integer.
    data = json.loads(case_text(factory_case("text-basic", "openai", "anthropic", "pass", "r")))
    assert _accepted_by_models(data) and _accepted_by_schema(data)
    data["runs"]["translated"]["wire"][f"{side}_chunks"] = -2
    assert not _accepted_by_models(data)
    assert not _accepted_by_schema(data)


def test_an_image_source_without_its_type_tag_is_refused_by_both() -> None:
    # Hypothesis found it: pydantic picks an image source by its `type` tag and refuses one without it, while the
    # schema's oneOf took a tagless {media_type, data} as a base64 source.
    part = {"kind": "image", "source": {"media_type": "image/png", "data": "AAAA"}}
    with pytest.raises(ValueError, match="type"):
        ir.ImagePart.model_validate(part)
    schema = ir.ir_json_schema()
    assert "type" in schema["$defs"]["Base64Image"]["required"]
    assert "type" in schema["$defs"]["UrlImage"]["required"]


def test_a_tool_result_part_without_its_kind_tag_is_refused_by_both() -> None:
    # Hypothesis found it: the models took a tagless {"text": ...} inside a tool result as a text part (its `kind`
    # defaulted), while the schema requires the tag there as everywhere else.
    part = {"kind": "tool_result", "tool_call_id": "call_1", "content": [{"text": "18 degrees"}]}
    with pytest.raises(ValueError, match="kind"):
        ir.ToolResultPart.model_validate(part)
    tagged = {**part, "content": [{"kind": "text", "text": "18 degrees"}]}
    assert ir.ToolResultPart.model_validate(tagged).content[0] == ir.TextPart(text="18 degrees")


@pytest.mark.parametrize(
    ("part", "ok"),
    [
        ({"kind": "file", "media_type": "application/pdf", "data": "AA=="}, True),
        ({"kind": "file", "data": "AA=="}, False),  # hypothesis found it: the schema took inline data without a type
        ({"kind": "file", "url": "https://example.com/a.pdf"}, True),
        ({"kind": "file", "file_id": "file-1", "url": None, "data": None}, True),
        ({"kind": "file", "url": "https://example.com/a.pdf", "file_id": "file-1"}, False),
        ({"kind": "file", "media_type": "application/pdf"}, False),
    ],
)
def test_a_file_part_has_one_form_and_inline_data_its_type_by_both(part: dict[str, Any], ok: bool) -> None:
    # The models' rule (`FilePart._one_form`) is a validator, which pydantic's schema leaves out: it is written
    # into the schema by hand (`ir.content._file_forms`).
    data = json.loads(case_text(factory_case("text-basic", "openai", "anthropic", "pass", "r")))
    request = data["runs"]["translated"]["upstream_request"]
    assert request is not None
    request["messages"][0]["content"] = [part]
    assert _accepted_by_models(data) is ok
    assert _accepted_by_schema(data) is ok
