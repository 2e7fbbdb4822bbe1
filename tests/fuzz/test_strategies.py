"""The generated scenarios stay within what the pair can express, load as scenario files, and vary."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import ir
from harness.fuzz import space_of
from harness.fuzz.strategies import (
    ERRORS,
    FUZZ_ID,
    IMAGE_MAGIC,
    LONE_SURROGATES,
    PDF_HEAD,
    SPECIAL_TEXT,
    Space,
    scenarios,
)
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


ESCAPED = ("\\uD800", "\\uDFFF", "\\uDBFF", "\\uDC00")
"""How a scenario file writes the lone surrogates (YAML escapes)."""


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


@settings(max_examples=40)
@given(scenario=scenarios(space_of("gemini", "ollama", False)))
def test_a_drawn_image_is_inline_with_the_magic_bytes_of_its_type(scenario: object) -> None:
    from harness.scenarios.model import Scenario

    assert isinstance(scenario, Scenario)
    images = [p for m in scenario.request.messages for p in m.content if p.kind == "image"]
    assert (Capability.VISION in scenario.requires) == bool(images)
    for image in images:
        assert image.source.type == "base64"  # Bedrock and Ollama declare UrlImage lost
        raw = base64.b64decode(image.source.data, validate=True)
        assert raw.startswith(IMAGE_MAGIC[image.source.media_type])  # what Ollama's decoder sniffs


@settings(max_examples=40)
@given(scenario=scenarios(space_of("anthropic", "bedrock", False)))
def test_a_drawn_file_is_an_inline_pdf_and_requires_files(scenario: object) -> None:
    from harness.scenarios.model import Scenario

    assert isinstance(scenario, Scenario)
    files = [p for m in scenario.request.messages for p in m.content if p.kind == "file"]
    assert (Capability.FILES in scenario.requires) == bool(files)
    for part in files:
        assert part.media_type == "application/pdf"
        assert base64.b64decode(part.data, validate=True).startswith(PDF_HEAD)


def test_files_are_drawn_only_where_every_party_has_them() -> None:
    from hypothesis import find

    found = find(
        scenarios(space_of("openai", "gemini", False)),
        lambda s: any(p.kind == "file" for m in s.request.messages for p in m.content),
    )
    assert Capability.FILES in found.requires
    never = space_of("openai", "ollama", False)  # Ollama's wire has no file part
    assert not never.has(Capability.FILES)


def test_images_are_drawn_only_where_every_party_has_vision() -> None:
    from hypothesis import find

    space = space_of("openai", "anthropic", False)
    found = find(scenarios(space), lambda s: any(p.kind == "image" for m in s.request.messages for p in m.content))
    assert Capability.VISION in found.requires
    blind = Space(capabilities=space.capabilities - {Capability.VISION}, stream=False)

    @settings(max_examples=40)
    @given(scenario=scenarios(blind))
    def never(scenario: object) -> None:
        assert "kind: image" not in render(scenario)  # type: ignore[arg-type]

    never()


@settings(max_examples=60)
@given(scenario=scenarios(space_of("openai", "ollama", True)))
def test_a_midstream_error_comes_after_content_and_expects_what_was_sent(scenario: object) -> None:
    from harness.scenarios.model import ReplyOk, Scenario
    from harness.scenarios.script import full_events

    assert isinstance(scenario, Scenario)
    reply = scenario.reply
    if not isinstance(reply, ReplyOk) or reply.midstream_error is None:
        return
    assert scenario.streaming == ["stream"]
    # Said, so that every backend cuts at the same text (each protocol's typical size would differ).
    assert scenario.chunking.text_chunk_size is not None
    cut = reply.midstream_error.after_events
    events = full_events(reply, scenario.chunking)
    sent = events[:cut]
    assert any(isinstance(e, ir.TextDelta | ir.ThinkingDelta) for e in sent) and cut < len(events)
    text = "".join(e.text for e in sent if isinstance(e, ir.TextDelta))
    assert scenario.expect.text_contains == ([text] if text else [])
    assert scenario.expect.error is not None and scenario.expect.error.exception == "stream_error"
    # Ollama's stream errors are a bare message: the kind must be readable from it.
    assert scenario.expect.error.kind == reply.midstream_error.error.kind


def test_midstream_errors_are_drawn_streamed_only() -> None:
    from hypothesis import find

    found = find(
        scenarios(space_of("openai", "anthropic", True)),
        lambda s: getattr(s.reply, "midstream_error", None) is not None,
    )
    assert found.reply.midstream_error.after_events >= 3  # type: ignore[union-attr]  # message_start, a block start, a delta at least

    @settings(max_examples=60)
    @given(scenario=scenarios(space_of("openai", "anthropic", False)))
    def never(scenario: object) -> None:
        assert "midstream_error" not in render(scenario)  # type: ignore[arg-type]

    never()


@pytest.mark.parametrize("status", sorted({row.get("status", 0) for row in ERRORS}))
def test_an_error_of_each_status_is_drawn(status: int) -> None:
    from hypothesis import find

    space = space_of("anthropic", "openai", False)
    found = find(scenarios(space), lambda s: s.reply.kind == "error" and (s.reply.status or 0) == status)
    assert found.expect.error is not None
    assert found.reply.error.kind in _kinds(found.expect.error.kind)


def test_lone_surrogates_are_not_drawn_while_the_reference_encoders_cannot_write_them(tmp_path: Path) -> None:
    from harness.fuzz.engine import SURROGATE_PROBE, carries_lone_surrogates, record

    # The quirk: the reference backends write JSON as UTF-8 without escapes, and a lone surrogate has no UTF-8
    # form. (The openai and anthropic SDKs fail the same way on a request holding one, before sending it.)
    with pytest.raises(UnicodeEncodeError):
        record(SURROGATE_PROBE, Case(FUZZ_ID, "gemini", "gemini", True), tmp_path)
    assert not carries_lone_surrogates("gemini", "gemini", True)
    assert not space_of("gemini", "gemini", True).lone_surrogates


def test_lone_surrogates_go_into_the_reply_where_the_pair_carries_them() -> None:
    from hypothesis import find

    space = Space(capabilities=space_of("openai", "anthropic", True).capabilities, stream=True, lone_surrogates=True)
    found = find(scenarios(space), lambda s: any(ch in render(s) for ch in ESCAPED))
    reply_text = "".join(p.text for p in found.reply.content if p.kind == "text")  # type: ignore[union-attr]
    assert any(ch in reply_text for ch in LONE_SURROGATES)
    request = found.request.model_dump_json()
    assert not any(ch in request for ch in LONE_SURROGATES)  # never in a request: the SDKs cannot send one

    @settings(max_examples=40)
    @given(scenario=scenarios(Space(capabilities=space.capabilities, stream=True)))
    def never(scenario: object) -> None:
        text = render(scenario)  # type: ignore[arg-type]
        assert not any(s in text for s in ESCAPED)

    never()
