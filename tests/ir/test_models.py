"""IR model rules: retryable kinds, strictness about unknown fields and tags, immutability, usage merging."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from harness import ir
from tests.conftest import REPO

# Which kinds of error a client may retry: the whole table, so adding a kind forces a decision here.
RETRYABLE = {
    ir.ErrorKind.THROTTLED: True,
    ir.ErrorKind.OVERLOADED: True,
    ir.ErrorKind.SERVER: True,
    ir.ErrorKind.NETWORK: True,
    ir.ErrorKind.TIMEOUT: True,
    ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED: False,
    ir.ErrorKind.AUTH: False,
    ir.ErrorKind.PERMISSION: False,
    ir.ErrorKind.NOT_FOUND: False,
    ir.ErrorKind.INVALID_REQUEST: False,
    ir.ErrorKind.MALFORMED_STREAM: False,
}


def test_retryable_table_covers_every_kind() -> None:
    """The table names every error kind exactly once."""
    assert set(RETRYABLE) == set(ir.ErrorKind)


@pytest.mark.parametrize("kind", list(ir.ErrorKind), ids=str)
def test_error_kind_retryable(kind: ir.ErrorKind) -> None:
    """ErrorKind.retryable follows the table."""
    assert kind.retryable is RETRYABLE[kind]


@pytest.mark.parametrize("kind", list(ir.ErrorKind), ids=str)
def test_irerror_of_sets_retryable(kind: ir.ErrorKind) -> None:
    """IRError.of derives `retryable` from the kind and passes the other fields through."""
    error = ir.IRError.of(kind, "boom", status=429, retry_after=2.5, code="rate_limit_error")
    assert error.retryable is RETRYABLE[kind]
    assert (error.kind, error.message, error.status, error.retry_after, error.code) == (
        kind,
        "boom",
        429,
        2.5,
        "rate_limit_error",
    )


def test_irerror_rejects_negative_retry_after() -> None:
    """Retry-After is a wait, never negative."""
    with pytest.raises(ValidationError):
        ir.IRError.of(ir.ErrorKind.THROTTLED, retry_after=-1.0)


def test_error_kind_values_are_wire_strings() -> None:
    """Kinds serialize as their snake_case names (traces and reports show them)."""
    assert ir.to_json(ir.IRError.of(ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED))["kind"] == "context_window_exceeded"


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (ir.TextPart, {"text": "a", "txt": "typo"}),
        (ir.Request, {"model": "m", "temprature": 0.2}),
        (ir.Usage, {"input_tokens": 1, "prompt_tokens": 1}),
        (ir.IRError, {"kind": "auth", "detail": "x"}),
        (ir.Response, {"content": [{"kind": "text", "text": "a", "annotations": []}]}),
    ],
    ids=["TextPart", "Request", "Usage", "IRError", "nested-part"],
)
def test_unknown_fields_rejected(model: type[ir.IRModel], data: dict[str, object]) -> None:
    """extra="forbid": an unknown field (even nested) is a validation error naming it."""
    with pytest.raises(ValidationError) as info:
        ir.from_json(model, data)
    assert [e["type"] for e in info.value.errors()] == ["extra_forbidden"]


def test_unknown_event_kind_rejected() -> None:
    """The event union is discriminated on `kind`: an unknown tag is rejected as such."""
    with pytest.raises(ValidationError) as info:
        ir.EVENT_ADAPTER.validate_python({"kind": "content_block_delta", "index": 0})
    assert [e["type"] for e in info.value.errors()] == ["union_tag_invalid"]


def test_unknown_content_kind_rejected() -> None:
    """Message content is discriminated on `kind` too."""
    with pytest.raises(ValidationError) as info:
        ir.Message.model_validate({"role": "user", "content": [{"kind": "video", "url": "x"}]})
    assert [e["type"] for e in info.value.errors()] == ["union_tag_invalid"]


def test_unknown_tool_choice_and_image_source_rejected() -> None:
    """Tool choice (`kind`) and image source (`type`) unions reject unknown tags."""
    with pytest.raises(ValidationError):
        ir.Request.model_validate({"model": "m", "tool_choice": {"kind": "any"}})
    with pytest.raises(ValidationError):
        ir.ImagePart.model_validate({"source": {"type": "file", "path": "/x.png"}})


def test_event_dispatch_by_kind() -> None:
    """A tagged dict becomes the right event class."""
    event = ir.EVENT_ADAPTER.validate_python({"kind": "tool_call_delta", "index": 2, "arguments": '{"a"'})
    assert event == ir.ToolCallDelta(index=2, arguments='{"a"')


def test_models_are_frozen() -> None:
    """IR values are immutable, so traces and comparisons can share them."""
    part = ir.TextPart(text="a")
    with pytest.raises(ValidationError):
        part.text = "b"  # type: ignore[misc]


def test_usage_merged() -> None:
    """Later non-None figures win field by field; None leaves the usage as it was."""
    first = ir.Usage(input_tokens=10, output_tokens=1, cache_read_tokens=4)
    assert first.merged(ir.Usage(output_tokens=9, reasoning_tokens=3)) == ir.Usage(
        input_tokens=10, output_tokens=9, cache_read_tokens=4, reasoning_tokens=3
    )
    assert first.merged(None) is first
    assert first.merged(ir.Usage()) == first


def test_tool_call_part_defaults() -> None:
    """A tool call's arguments default to None and its raw text to ""."""
    part = ir.ToolCallPart(id="call_1", name="f")
    assert (part.arguments, part.arguments_raw) == (None, "")


def test_ir_imports_nothing_else_of_the_harness() -> None:
    """`harness.ir` stands alone: importing it loads no other harness package (checked in a fresh process)."""
    code = "import sys, harness.ir; print(' '.join(sorted(m for m in sys.modules if m.startswith('harness'))))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    loaded = out.split()
    assert "harness.ir" in loaded
    assert [m for m in loaded if m != "harness" and not m.startswith("harness.ir")] == []


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({}, "got none"),
        ({"url": "https://x/a.pdf", "file_id": "file-abc"}, r"got \['url', 'file_id'\]"),
        ({"data": "JVBERi0="}, "needs its media_type"),
    ],
)
def test_a_file_part_has_exactly_one_form(fields: dict[str, str], match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        ir.FilePart.model_validate(fields)


def test_a_file_part_says_its_form() -> None:
    assert ir.FilePart(media_type="application/pdf", data="JVBERi0=").form == "data"
    assert ir.FilePart(url="https://x/a.pdf").form == "url"
    assert ir.FilePart(file_id="file-abc").form == "file_id"
