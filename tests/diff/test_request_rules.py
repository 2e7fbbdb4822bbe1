"""Request-view rules: inert settings, tool messages of one result, and text cut into fewer parts upstream."""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.diff import request_divergences
from harness.diff.request_rules import inert_settings, one_result_per_tool_message, same_text_layout, text_layout

PNG_A = ir.ImagePart(source=ir.Base64Image(media_type="image/png", data="QUFB"))
PNG_B = ir.ImagePart(source=ir.Base64Image(media_type="image/png", data="QkJC"))


def text(value: str) -> ir.TextPart:
    return ir.TextPart(text=value)


def request(*messages: ir.Message, **fields: Any) -> dict[str, Any]:
    return ir.to_json(ir.Request(model="m", messages=list(messages), **fields))


def user(*parts: Any) -> ir.Message:
    return ir.Message(role="user", content=list(parts))


def paths(left: dict[str, Any], right: dict[str, Any], losses: tuple[str, ...] = ()) -> list[str]:
    return [d.path for d in request_divergences(left, right, losses=losses)]


def test_interleaved_images_sent_as_one_content_string_and_an_images_list_are_the_same_request() -> None:
    # Quirk seen in the matrix (vision-multiple-images -> ollama): Ollama's message has one `content` string
    # and an `images` list, so "First image: <A> Second image: <B> Name both" comes back as text, A, B.
    client = request(user(text("First image:"), PNG_A, text("Second image:"), PNG_B, text("Name both.")))
    upstream = request(user(text("First image:\nSecond image:\nName both."), PNG_A, PNG_B))
    assert paths(client, upstream) == []


def test_adjacent_text_parts_merged_without_separator_are_the_same_request() -> None:
    # Gemini's model turns have no block boundaries: adjacent text parts come back as one.
    client = request(ir.Message(role="assistant", content=[text("Let me "), text("check.")]))
    upstream = request(ir.Message(role="assistant", content=[text("Let me check.")]))
    assert paths(client, upstream) == []


def test_a_dropped_image_is_still_a_divergence() -> None:
    client = request(user(text("First image:"), PNG_A, text("Second image:"), PNG_B))
    upstream = request(user(text("First image:\nSecond image:"), PNG_A))
    assert paths(client, upstream) != []


def test_reordered_or_changed_text_is_still_a_divergence() -> None:
    client = request(user(text("one"), text("two")))
    expected = ["request.messages[0].content[0].text", "request.messages[0].content[1]"]
    assert paths(client, request(user(text("two\none")))) == expected
    assert paths(client, request(user(text("one two")))) == expected


def test_joined_thinking_must_keep_its_signatures() -> None:
    signed = ir.ThinkingPart(text="a", signature="s1")
    left = [ir.to_json(signed), ir.to_json(ir.ThinkingPart(text="b"))]
    assert same_text_layout(left, [ir.to_json(ir.ThinkingPart(text="a\nb", signature="s1"))])
    assert not same_text_layout(left, [ir.to_json(ir.ThinkingPart(text="a\nb"))])


def test_tool_result_text_joined_into_one_part_is_the_same_result() -> None:
    call = ir.ToolCallPart(id="c1", name="f", arguments={}, arguments_raw="{}")
    result = ir.ToolResultPart(tool_call_id="c1", name="f", content=[text("12"), text("°C")])
    joined = result.model_copy(update={"content": [text("12°C")]})
    assistant = ir.Message(role="assistant", content=[call])
    left, right = text_layout(
        request(assistant, ir.Message(role="tool", content=[result])),
        request(assistant, ir.Message(role="tool", content=[joined])),
    )
    assert left == right
    assert right["messages"][1]["content"][0]["content"] == [
        {"kind": "text", "text": "12"},
        {"kind": "text", "text": "°C"},
    ]


def test_tool_messages_compare_one_result_each() -> None:
    r1, r2 = (ir.ToolResultPart(tool_call_id=i, content=[text(i)]) for i in ("c1", "c2"))
    together = request(ir.Message(role="tool", content=[r1, r2]))
    apart = request(ir.Message(role="tool", content=[r1]), ir.Message(role="tool", content=[r2]))
    assert one_result_per_tool_message(together) == apart
    assert paths(together, apart) == []
    assert paths(together, request(ir.Message(role="tool", content=[r1]))) != []


def test_settings_without_effect_compare_as_unset() -> None:
    off = request(thinking=ir.ThinkingConfig(enabled=False, budget_tokens=1024))
    assert inert_settings(off)["thinking"] == {"enabled": False, "budget_tokens": None}
    assert paths(off, request(thinking=ir.ThinkingConfig(enabled=False))) == []
    on = request(thinking=ir.ThinkingConfig(enabled=True, budget_tokens=1024))
    assert paths(on, request(thinking=ir.ThinkingConfig(enabled=True))) == ["request.thinking.budget_tokens"]
    none = request(tool_choice=ir.ToolChoiceNone(), parallel_tool_calls=False)
    assert paths(none, request(tool_choice=ir.ToolChoiceNone())) == []
    auto = request(tool_choice=ir.ToolChoiceAuto(), parallel_tool_calls=False)
    assert paths(auto, request(tool_choice=ir.ToolChoiceAuto())) == ["request.parallel_tool_calls"]


def test_tool_choice_auto_where_tools_are_offered_compares_as_unset() -> None:
    """Quirk: LLM Gateway sends `tool_choice: auto` to Anthropic for a client that named none (the default)."""
    tool = ir.Tool(name="get_weather", parameters={"type": "object"})
    assert paths(request(tools=[tool]), request(tools=[tool], tool_choice=ir.ToolChoiceAuto())) == []
    assert paths(request(tools=[tool]), request(tools=[tool], tool_choice=ir.ToolChoiceRequired())) != []
    assert paths(request(), request(tool_choice=ir.ToolChoiceAuto())) == ["request.tool_choice"]  # no tools


def test_an_empty_system_prompt_compares_as_none() -> None:
    """Quirk: a real Responses request sends `instructions: ""` (pydantic-ai, March 2025); through Anthropic the
    proxy's upstream request decodes with no system prompt, which is the same request, not a proxy bug."""
    assert paths(request(system=""), request()) == []
    assert paths(request(system="Be brief."), request()) == ["request.system"]  # a dropped prompt still differs


def test_rules_do_not_mutate_their_input() -> None:
    client = request(user(text("a"), text("b")), thinking=ir.ThinkingConfig(enabled=False, budget_tokens=5))
    upstream = request(user(text("a\nb")))
    before = (repr(client), repr(upstream))
    inert_settings(client)
    one_result_per_tool_message(client)
    text_layout(client, upstream)
    assert (repr(client), repr(upstream)) == before


def test_system_folded_into_the_first_user_turn_is_accepted_only_when_exact() -> None:
    from harness import ir
    from harness.diff import request_divergences

    client = ir.to_json(
        ir.Request(
            model="m", system="Be a pirate.", messages=[ir.Message(role="user", content=[ir.TextPart(text="Hi")])]
        )
    )

    def upstream(system: str | None, text: str) -> dict[str, object]:
        return ir.to_json(
            ir.Request(model="m", system=system, messages=[ir.Message(role="user", content=[ir.TextPart(text=text)])])
        )

    assert request_divergences(client, upstream(None, "Be a pirate.\n\nHi")) == []
    dropped = request_divergences(client, upstream(None, "Hi"))
    assert [d.path for d in dropped] == ["request.system"]
    altered = request_divergences(client, upstream(None, "Be polite.\n\nHi"))
    assert altered and altered[0].path.startswith("request.")
