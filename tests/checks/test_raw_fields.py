"""answer.raw_fields: the fields the frontend protocol's own encoder writes for the same answer, left out."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import ir
from harness.checks import Subject, raw_fields, run_checks
from harness.checks.memo import Memo
from harness.checks.raw_fields import RAW_FIELDS, key_paths
from harness.drivers.base import SdkResult
from harness.protocols import encode_events, registry
from harness.scenarios import load_scenario
from harness.trace.model import Deviation
from tests.checks.support import forget_answers
from tests.conftest import REPO

SCENARIO = load_scenario(REPO / "scenarios" / "text-basic.yaml")


def _deviations(body: bytes, request: ir.Request | None = None) -> list[Deviation]:
    subject = Subject(
        role="translated",
        client="openai",
        backend="anthropic",
        stream=False,
        scenario=SCENARIO,
        result=SdkResult(),
        frontend_request=request,
        frontend_status=200,
        frontend_chunks=(body,),
        frontend_response_headers={"content-type": "application/json"},
    )
    return [r for r in run_checks(subject) if isinstance(r, Deviation) and r.rule == RAW_FIELDS]


def _ours() -> dict[str, object]:
    response = ir.Response(
        id="chatcmpl-1",
        model="gpt-4o-mini",
        content=[ir.TextPart(text="Hello.")],
        stop_reason=ir.StopReason(kind="end_turn"),
        usage=ir.Usage(input_tokens=3, output_tokens=2),
    )
    body: dict[str, object] = json.loads(registry.get("openai").encode_response(response).body)
    return body


def test_a_chat_choice_without_logprobs_and_refusal_names_both() -> None:
    body = _ours()
    choices = body["choices"]
    assert isinstance(choices, list)
    choice = {k: v for k, v in choices[0].items() if k != "logprobs"}
    choice["message"] = {k: v for k, v in choice["message"].items() if k != "refusal"}
    (found,) = _deviations(json.dumps({**body, "choices": [choice]}).encode())
    assert found.message == "left out: body: choices[*].logprobs; body: choices[*].message.refusal"


def test_the_encoders_own_answer_leaves_nothing_out() -> None:
    assert _deviations(json.dumps(_ours()).encode()) == []


def test_key_paths_generalise_list_indices() -> None:
    assert key_paths({"a": [{"b": 1}, {"c": None}], "d": {}}) == {"a", "a[*].b", "a[*].c", "d"}


def test_the_encoders_own_bytes_are_not_compared_field_by_field(monkeypatch: pytest.MonkeyPatch) -> None:
    """The frontend's own encoding, byte for byte (a faithful proxy's answer), leaves nothing out: no key path of
    either side is listed. The same fields in another order are listed and compared."""
    listed: list[object] = []
    # key paths other tests found are remembered by payload text
    monkeypatch.setattr(raw_fields, "_memo", Memo(raw_fields.MEMO))
    forget_answers(monkeypatch)
    monkeypatch.setattr(raw_fields, "key_paths", lambda value, prefix="": listed.append(value) or set())
    ours = registry.get("openai").encode_response(registry.get("openai").decode_response(json.dumps(_ours()).encode()))
    assert _deviations(ours.body) == [] and listed == []
    assert _deviations(json.dumps(_ours(), indent=1).encode()) == [] and listed


def test_the_clients_stream_is_decoded_once_for_every_check(monkeypatch: pytest.MonkeyPatch) -> None:
    codec = registry.get("openai")
    stream = registry_events_body(codec)
    decoders: list[object] = []
    real = type(codec).stream_decoder  # a codec is frozen: count through its class
    monkeypatch.setattr(type(codec), "stream_decoder", lambda self: decoders.append(1) or real(self))
    forget_answers(monkeypatch)
    subject = Subject(
        role="translated",
        client="openai",
        backend="anthropic",
        stream=True,
        scenario=SCENARIO,
        result=SdkResult(),
        frontend_status=200,
        frontend_chunks=(stream[:40], stream[40:]),
        frontend_response_headers={"content-type": "text/event-stream"},
    )
    results = run_checks(subject)
    assert len(decoders) == 1
    assert any(getattr(r, "name", None) == "frontend_wire" and r.passed for r in results)
    # The same answer again (another run, through another backend) is judged from memory, to the same results.
    again = dataclasses.replace(subject, backend="gemini")
    assert run_checks(again) == results and len(decoders) == 1


def test_an_answer_to_another_request_is_judged_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # The frontend's encoder may write an answer by the request it answers (OpenAI's usage chunk): the raw fields
    # an answer left out are found again for each run, never taken from an answer to another request.
    forget_answers(monkeypatch)
    encoded = []
    expected = raw_fields._expected
    monkeypatch.setattr(raw_fields, "_expected", lambda *a: encoded.append(a) or expected(*a))
    body = json.dumps({k: v for k, v in _ours().items() if k != "system_fingerprint"}).encode()
    first = _deviations(body)
    assert len(encoded) == 1
    request = ir.Request(model="gpt-4o-mini", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])])
    assert _deviations(body, request) == first
    assert len(encoded) == 2


def registry_events_body(codec: Any) -> bytes:
    """A whole Chat stream of one short answer, as the openai encoder writes it."""
    events = [
        ir.MessageStart(id="chatcmpl-1", model="gpt-4o-mini"),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="Hello."),
        ir.TextEnd(index=0),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage(input_tokens=3, output_tokens=2)),
    ]
    return encode_events(codec, events)


def _plain_key_paths(value: Any, prefix: str = "") -> set[str]:
    """`key_paths` as first written: a set per node, joined on the way up."""
    out: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            out.add(path)
            out |= _plain_key_paths(item, path)
    elif isinstance(value, list):
        for item in value:
            out |= _plain_key_paths(item, f"{prefix}[*]")
    return out


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=20,
)


@given(json_values, st.sampled_from(["", "p"]))
def test_key_paths_into_one_set_equal_the_plain_walk(value: Any, prefix: str) -> None:
    assert key_paths(value, prefix) == _plain_key_paths(value, prefix)


def test_a_payload_seen_before_is_not_walked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Key paths are remembered by the payload's exact text: a matrix sends the same payloads again and again."""
    monkeypatch.setattr(raw_fields, "_memo", Memo(raw_fields.MEMO))
    body: dict[str, Any] = _ours()
    sent = json.dumps({**body, "choices": [{k: v for k, v in c.items() if k != "logprobs"} for c in body["choices"]]})
    (first,) = _deviations(sent.encode())
    walked: list[object] = []

    def walk(value: object, prefix: str = "") -> set[str]:
        walked.append(value)
        return set()

    monkeypatch.setattr(raw_fields, "key_paths", walk)
    forget_answers(monkeypatch)  # the same answer is remembered whole: this asks for its payloads again
    (again,) = _deviations(sent.encode())
    assert again == first and "choices[*].logprobs" in first.message
    assert walked == []


PART_TEXTS = st.sampled_from(
    [
        '{"type": "a", "x": 1}',
        '{"type": "a", "y": {"z": []}}',
        '{"type": "b", "x": [{"w": 1}]}',
        '{"x": null}',
        '{"y": 2, "z": 3}',
        "[1, 2]",
        "not json",
    ]
)
PARTS = st.lists(st.tuples(st.sampled_from(["sse", "line"]), PART_TEXTS), max_size=6)


def _missing_reading_all(ours: list[tuple[str, str]], sent: list[tuple[str, str]]) -> list[str] | str:
    """What `_missing` found before it skipped our parts the answer sent too: both sides read whole."""
    try:
        wanted, found = raw_fields._by_kind(ours), raw_fields._by_kind(sent)
    except ValueError:
        return "no JSON"
    return sorted(f"{g}: {p}" for g, paths in wanted.items() if g in found for p in paths - found[g])


@given(PARTS, PARTS)
def test_missing_fields_skipping_the_parts_sent_alike_equal_reading_all(
    ours: list[tuple[str, str]], sent: list[tuple[str, str]]
) -> None:
    try:
        fast: list[str] | str = raw_fields._missing(ours, sent)
    except ValueError:
        fast = "no JSON"
    assert fast == _missing_reading_all(ours, sent)


FRAME_TEXTS = st.sampled_from(
    [
        '{"type": "a", "x": 1}',
        '{"type": "response.created", "response": {"id": "r", "error": null}}',
        '{"type": "error", "code": "c", "message": "m", "param": null, "error": {"type": "t", "message": "m"}}',
        '{"type": "error", "code": "c", "message": "m", "param": null}',
        '{"type": "\\u0065rror", "error": {"message": "m"}}',
        '{"error": {"message": "m"}}',
        '{"y": 2, "z": 3}',
        "not json",
    ]
)


@given(st.lists(FRAME_TEXTS, max_size=6))
def test_frames_holding_our_streams_texts_leave_out_what_reading_both_finds(texts: list[str]) -> None:
    """The WebSocket shortcut (`_framed_alike`): frames that hold our HTTP stream's event texts one for one are
    found to leave nothing out only where `_missing`, reading both, finds nothing (or no JSON, for which `_left_out`
    reports nothing either); error events, whose frames read as another kind of payload, included."""
    ours, sent = [("sse", t) for t in texts], [("socket", t) for t in texts]
    try:
        alike: bool | str = raw_fields._framed_alike(ours, sent)
    except ValueError:
        alike = "no JSON"
    try:
        missing: list[str] | str = raw_fields._missing(ours, sent)
    except ValueError:
        missing = "no JSON"
    if alike == "no JSON":
        assert missing == "no JSON"
    elif alike:
        assert missing in ([], "no JSON")  # `_left_out` reports nothing for either


def test_frames_holding_our_streams_texts_are_taken_as_alike_unless_one_is_an_error() -> None:
    created = '{"type": "response.created", "response": {"id": "r", "error": null}}'
    nested = '{"type": "error", "code": "c", "message": "m", "param": null, "error": {"type": "t", "message": "m"}}'
    assert raw_fields._framed_alike([("sse", created)], [("socket", created)])
    assert not raw_fields._framed_alike([("sse", created), ("sse", nested)], [("socket", created), ("socket", nested)])
    assert not raw_fields._framed_alike([("sse", created)], [("socket", created.replace("r", "s"))])
