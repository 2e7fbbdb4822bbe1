"""The generated scenarios stay within what the pair can express, load as scenario files, and vary."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.fuzz import space_of
from harness.fuzz.strategies import FUZZ_ID, SPECIAL_TEXT, scenarios
from harness.importer.scenario import render
from harness.ir import Capability
from harness.runner.plan import case_gap
from harness.scenarios.loader import load_scenario
from harness.trace import Case

PAIRS = [
    ("anthropic", "openai", True),
    ("openai", "gemini", False),
    ("gemini", "ollama", True),
    ("openai", "swink", True),
]


@pytest.mark.parametrize(("frontend", "backend", "stream"), PAIRS)
@settings(max_examples=15)
@given(data=st.data())
def test_a_generated_case_is_never_unsupported(frontend: str, backend: str, stream: bool, data: st.DataObject) -> None:
    space = space_of(frontend, backend, stream)
    scenario = data.draw(scenarios(space))
    assert case_gap(scenario, Case(FUZZ_ID, frontend, backend, stream)) is None
    assert scenario.streaming == ["stream" if stream else "nonstream"]


def test_the_space_of_a_pair_is_what_every_party_has() -> None:
    # swink has no top_p and no overloaded kind: the pair has neither, whatever the other side can do.
    space = space_of("anthropic", "swink", True)
    assert not space.has(Capability.OVERLOADED_ERROR)
    wide = space_of("anthropic", "openai", True)
    assert wide.has(Capability.OVERLOADED_ERROR) and wide.has(Capability.PARALLEL_TOOLS)
    assert space.capabilities < wide.capabilities | space.capabilities


@settings(max_examples=15)
@given(scenario=scenarios(space_of("anthropic", "openai", True)))
def test_a_generated_scenario_reads_back_as_a_scenario_file(
    tmp_path_factory: pytest.TempPathFactory, scenario: object
) -> None:
    folder = tmp_path_factory.mktemp("scenarios")
    path = folder / f"{FUZZ_ID}.yaml"
    path.write_text(render(scenario), encoding="utf-8")  # type: ignore[arg-type]
    assert load_scenario(path) == scenario


@settings(max_examples=30)
@given(scenario=scenarios(space_of("anthropic", "openai", True)))
def test_expectations_follow_the_reply(scenario: object) -> None:
    from harness.scenarios.model import Scenario

    assert isinstance(scenario, Scenario)
    reply, expect = scenario.reply, scenario.expect
    if reply.kind == "error":
        assert expect.error is not None and reply.error.kind in _kinds(expect.error.kind)
        return
    if reply.midstream_error is not None:
        assert expect.error is not None and _kinds(expect.error.kind) == [reply.midstream_error.error.kind]
        assert expect.stop_reason is None and expect.tool_calls is None
        return
    calls = [p for p in reply.content if p.kind == "tool_call"]
    assert [(t.name, t.arguments) for t in expect.tool_calls or []] == [(c.name, c.arguments) for c in calls]
    assert expect.stop_reason == ("tool_use" if calls else reply.stop_reason.kind)
    ids = [c.id for c in calls]
    assert len(ids) == len(set(ids))


def _kinds(kind: object) -> list[object]:
    return list(kind) if isinstance(kind, list) else [kind]


def test_special_text_splits_utf8() -> None:
    # What the strategies mix in must include code points of 2, 3 and 4 UTF-8 bytes, and a ZWJ sequence.
    widths = {len(ch.encode("utf-8")) for text in SPECIAL_TEXT for ch in text}
    assert {2, 3, 4} <= widths
    assert any("\u200d" in text for text in SPECIAL_TEXT)


@settings(max_examples=40)
@given(scenario=scenarios(space_of("anthropic", "openai", False)))
def test_a_drawn_tool_choice_is_kept_by_the_reply_and_checked(scenario: object) -> None:
    from harness.scenarios.model import Scenario

    assert isinstance(scenario, Scenario)
    choice = scenario.request.tool_choice
    if choice is None or scenario.reply.kind != "ok":
        return
    calls = [p for p in scenario.reply.content if p.kind == "tool_call"]
    assert calls, "a tool choice is drawn only for a reply with calls"
    assert Capability.TOOL_CHOICE in scenario.requires
    assert "tool_choice" in (scenario.expect.request_fields or [])
    if choice.kind == "tool":
        assert {c.name for c in calls} == {choice.name}


def test_tool_choice_is_drawn_where_the_pair_carries_it() -> None:
    from hypothesis import find

    found = find(scenarios(space_of("anthropic", "openai", False)), lambda s: s.request.tool_choice is not None)
    assert found.request.tool_choice is not None
    never = space_of("openai", "ollama", False)  # Ollama's wire has no tool_choice
    assert not never.has(Capability.TOOL_CHOICE)
