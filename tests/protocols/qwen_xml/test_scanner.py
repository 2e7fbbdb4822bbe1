"""The `<tool_call>` text state machine: what passes, what is held back, what is parsed, for any split."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from harness import ir
from harness.protocols.qwen_xml import XmlToolCallScanner, parse_body, render_call
from harness.protocols.qwen_xml.scanner import ParsedCall, Segment
from tests import strategies

HERMES = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
CODER = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"  # noqa: E501
WEATHER = ParsedCall(name="get_weather", arguments={"city": "Paris"})


def scan(pieces: list[str], tools: list[ir.Tool] | None = None) -> tuple[list[Segment], list[str]]:
    scanner = XmlToolCallScanner(tools or [])
    out: list[Segment] = []
    for piece in pieces:
        out += scanner.feed(piece)
    out += scanner.finish()
    return merge(out), scanner.warnings


def merge(segments: list[Segment]) -> list[Segment]:
    out: list[Segment] = []
    for seg in segments:
        if isinstance(seg, str) and out and isinstance(out[-1], str):
            out[-1] += seg
        else:
            out.append(seg)
    return out


def test_hermes_call_after_text_drops_the_template_newlines() -> None:
    assert scan([f"Let me check.\n{HERMES}\nIt is sunny."]) == (["Let me check.", WEATHER, "It is sunny."], [])


def test_text_outside_tags_passes_through_immediately() -> None:
    scanner = XmlToolCallScanner()
    assert scanner.feed("Hello, ") == ["Hello, "]
    assert scanner.feed("world") == ["world"]


def test_partial_open_tag_is_held_back_until_decided() -> None:
    scanner = XmlToolCallScanner()
    assert scanner.feed("a <tool") == ["a "]
    assert scanner.feed("box> b") == ["<toolbox> b"]
    # A trailing newline might be the template's separator before a call: held until the next character.
    assert scanner.feed("\n") == []
    assert scanner.feed("c") == ["\nc"]
    assert scanner.finish() == []


def test_the_xml_never_leaks_into_text_whatever_the_split() -> None:
    text = f"Sure.\n{HERMES}"
    for cut in range(len(text) + 1):
        segments, warnings = scan([text[:cut], text[cut:]])
        assert segments == ["Sure.", WEATHER], cut
        assert warnings == []


def test_parallel_calls_separated_by_newlines() -> None:
    other = render_call("get_time", {})
    assert scan([f"{HERMES}\n{other}"])[0] == [WEATHER, ParsedCall(name="get_time", arguments={})]


def test_qwen3_coder_body_with_schema_keeps_string_parameters() -> None:
    tool = ir.Tool(
        name="get_weather",
        parameters={"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "string"}}},
    )
    assert scan([CODER], [tool])[0] == [ParsedCall(name="get_weather", arguments={"city": "Paris", "days": "3"})]


def test_qwen3_coder_body_without_schema_reads_json_looking_values() -> None:
    assert scan([CODER])[0] == [ParsedCall(name="get_weather", arguments={"city": "Paris", "days": 3})]


def test_qwen3_coder_boolean_written_python_style() -> None:
    tool = ir.Tool(name="f", parameters={"type": "object", "properties": {"flag": {"type": "boolean"}}})
    body = "<function=f>\n<parameter=flag>\nTrue\n</parameter>\n</function>"
    assert parse_body(body, {tool.name: tool.parameters}) == ParsedCall(name="f", arguments={"flag": True})


def test_arguments_as_a_json_string_are_accepted() -> None:
    body = '{"name": "f", "arguments": "{\\"a\\": 1}"}'
    assert parse_body(body) == ParsedCall(name="f", arguments={"a": 1})


@pytest.mark.parametrize(
    "body",
    ["{not json}", '{"arguments": {}}', '{"name": "f", "arguments": [1]}', "<function=f>no end", '"just a string"'],
)
def test_malformed_body_becomes_text_with_a_warning(body: str) -> None:
    text = f"x\n<tool_call>{body}</tool_call>y"
    segments, warnings = scan([text])
    assert segments == [text]
    assert len(warnings) == 1
    assert warnings[0].startswith("malformed tool call")


def test_unterminated_call_at_the_end_becomes_text_with_a_warning() -> None:
    segments, warnings = scan(['ok\n<tool_call>\n{"name": "f"'])
    assert segments == ['ok\n<tool_call>\n{"name": "f"']
    assert warnings == ["unterminated <tool_call> at the end of the text; passed on as text"]


def test_closing_tag_inside_an_argument_string_is_escaped_by_the_encoder() -> None:
    call = render_call("echo", {"text": "a</tool_call>b"})
    assert "a<\\/tool_call>b" in call
    assert scan([call])[0] == [ParsedCall(name="echo", arguments={"text": "a</tool_call>b"})]


@st.composite
def texts_with_calls(draw: st.DrawFn) -> tuple[str, list[Segment]]:
    """A model's text: plain runs and rendered calls, plus the segments it must scan to."""
    # Plain text from an alphabet rich in tag characters, to stress the held-back prefix logic.
    plain = st.text(st.sampled_from("<tool_call>/\n x"), min_size=1, max_size=12) | strategies.nonempty_text
    items = draw(st.lists(plain | strategies.tool_call_parts(), max_size=5))
    text, expected = "", list[Segment]()
    for item in items:
        if isinstance(item, str):
            lead = "\n" if expected and isinstance(expected[-1], ParsedCall) else ""
            text += lead + item
            expected.append(item)
        else:
            text += ("\n" if text else "") + render_call(item.name, item.arguments)
            expected.append(ParsedCall(name=item.name, arguments=item.arguments))
    calls = sum(isinstance(e, ParsedCall) for e in expected)
    # Plain runs must not spell a tag themselves (then the text really does hold another call).
    assume(text.count("<tool_call>") == calls and text.count("</tool_call>") == calls)
    return text, merge(expected)


@given(texts_with_calls(), st.lists(st.integers(0, 400), max_size=8))
def test_any_split_of_the_text_gives_the_same_segments(case: tuple[str, list[Segment]], cuts: list[int]) -> None:
    text, expected = case
    points = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    pieces = [text[a:b] for a, b in itertools.pairwise(points)]
    assert scan(pieces) == (expected, [])
    assert scan(list(text)) == (expected, [])
