"""`harness.protocols.common`: the token estimate a frontend reports before its upstream has; JSON in and out."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.protocols import DecodeError
from harness.protocols.common import (
    JsonTemplate,
    dump_json,
    dump_sorted,
    dump_str,
    dump_text,
    estimate_tokens,
    load_json,
)
from tests.strategies import json_values


def _request(*parts: ir.ContentPart) -> ir.Request:
    return ir.Request(model="m", messages=[ir.Message(role="user", content=list(parts))])


def test_estimate_counts_a_file_by_its_bytes_and_an_image_as_85() -> None:
    text = ir.TextPart(text="abcd" * 10)  # 40 characters: 10 tokens
    file = ir.FilePart(media_type="application/pdf", data=base64.b64encode(b"%PDF-" + b"x" * 395).decode())
    image = ir.ImagePart(source=ir.Base64Image(media_type="image/png", data="iVBORw0K"))
    assert estimate_tokens(_request(text)) == 10
    assert estimate_tokens(_request(text, file)) == 10 + 100  # 400 bytes
    assert estimate_tokens(_request(text, image)) == 10 + 85


@pytest.mark.parametrize(
    "text",
    ['{"a":[1,2.5,"é"]}', ' {"a":1}', '{"a":1} ', '{"a":1}\n', "[]", '"x"', "1", "null", "true", "1e400"],
)
def test_load_json_reads_what_json_loads_reads(text: str) -> None:
    assert load_json("p", text) == json.loads(text)
    assert load_json("p", text.encode()) == json.loads(text)


@pytest.mark.parametrize(
    ("text", "message", "offset"),
    [
        ('{"a":1} x', "stream chunk is not JSON: Extra data", 18),
        ('{"a":1}{}', "stream chunk is not JSON: Extra data", 17),
        ("\ufeff{}", "stream chunk is not JSON: Unexpected UTF-8 BOM (decode using utf-8-sig)", 10),
        ("", "stream chunk is not JSON: Expecting value", 10),
        ("  ", "stream chunk is not JSON: Expecting value", 12),
        ("[" * 100_000, "stream chunk nests too deeply", 10),
        ("1" * 5000, "stream chunk is not usable JSON", 10),
    ],
)
def test_load_json_errors_are_json_loads_errors(text: str, message: str, offset: int) -> None:
    with pytest.raises(DecodeError) as caught:
        load_json("p", text, offset=10, what="stream chunk")
    assert str(caught.value).startswith(f"p: {message}")
    assert caught.value.offset == offset


@pytest.mark.parametrize(
    "value",
    [
        {"t": 'é \u2028 "q"', "n": [1, 2.5, None, True], "e": {}},
        {1: "int key", 2.5: "float key", False: "bool key", None: "null key"},
        [float("nan"), float("inf"), -float("inf"), 1e300, -0.0, 10**30],
        "a string",
        [[[[{"deep": [{}]}]]]],
        ("a", "tuple"),
    ],
)
def test_dump_json_writes_what_json_dumps_writes(value: object) -> None:
    assert dump_json(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def test_dump_json_refuses_what_json_dumps_refuses() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        dump_json({"a": object()})
    with pytest.raises(TypeError, match="keys must be str"):
        dump_json({("tuple", "key"): 1})


def test_dump_json_is_compact_utf8_json() -> None:
    value = {"t": 'é \u2028 "q"', "n": [1, 2.5, None, True], "e": {}}
    assert dump_json(value) == '{"t":"é \u2028 \\"q\\"","n":[1,2.5,null,true],"e":{}}'.encode()


@given(json_values)
def test_dump_sorted_writes_what_json_dumps_writes_with_sorted_keys(value: object) -> None:
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    assert dump_sorted(value) == expected


def test_dump_sorted_sorts_nested_keys_and_refuses_what_json_dumps_refuses() -> None:
    assert (
        dump_sorted({"b": {"z": 1, "a": [{"y": 2, "x": "é"}]}, "a": None})
        == '{"a":null,"b":{"a":[{"x":"é","y":2}],"z":1}}'.encode()
    )
    with pytest.raises(TypeError, match="not JSON serializable"):
        dump_sorted({"a": object()})


@given(st.text())
def test_dump_str_is_dump_text_of_a_string(text: str) -> None:
    assert dump_str(text) == dump_text(text)


_leaves = st.text() | st.integers(-(10**12), 10**12) | st.none() | st.booleans()


@given(json_values, st.lists(_leaves, min_size=3, max_size=3), st.permutations([0, 1, 2]), st.booleans())
def test_a_json_template_filled_is_the_value_encoded(
    around: object, leaves: list[object], places: list[int], drop_last: bool
) -> None:
    def build(*holes: object) -> object:
        value: dict[str, object] = {"a": around, "x": holes[places[0]], "n": [{"y": holes[places[1]]}, around]}
        if not drop_last:  # a hole the value does not hold is ignored
            value["z"] = holes[places[2]]
        return value

    template = JsonTemplate.of(build, 3)
    assert template is not None
    assert template.fill(*leaves) == dump_text(build(*leaves))


def test_a_json_template_with_a_marker_twice_is_none() -> None:
    assert JsonTemplate.of(lambda hole: {"a": hole, "b": [hole]}, 1) is None
