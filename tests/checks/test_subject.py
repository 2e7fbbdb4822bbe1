"""What a check looks at: the client's stream, decoded once per distinct stream."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.checks import subject
from harness.checks.subject import Subject, decode_stream, decoded_stream
from harness.drivers.base import SdkResult
from harness.protocols import encode_events, registry
from harness.scenarios.loader import load_scenarios
from tests import strategies
from tests.conftest import REPO

BODY = (
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
    b'"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n'
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
    b'"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def test_a_stream_sent_again_byte_for_byte_is_decoded_once() -> None:
    subject._decoded.clear()
    chunks = (BODY[:40], BODY[40:])
    first = decoded_stream("openai", chunks)
    again = decoded_stream("openai", tuple(bytes(c) for c in chunks))
    assert first == again == decode_stream("openai", chunks)
    assert first[1] is None and "".join(getattr(e, "text", "") for e in first[0] if e.kind == "text_delta") == "Hi"
    assert first[0] is not again[0]  # each caller gets a list of its own
    assert len(subject._decoded) == 1


def test_the_same_bytes_cut_elsewhere_or_another_protocol_are_decoded_apart() -> None:
    subject._decoded.clear()
    decoded_stream("openai", (BODY[:40], BODY[40:]))
    decoded_stream("openai", (BODY[:41], BODY[41:]))
    decoded_stream("openai", (BODY,))
    events, error = decoded_stream("anthropic", (BODY,))
    assert len(subject._decoded) == 4
    assert (events, error) == decode_stream("anthropic", (BODY,))


@settings(max_examples=150)
@given(
    st.sampled_from(registry.names()),
    strategies.responses(),
    st.lists(st.integers(0, 4000), max_size=6),
    st.sampled_from([None, 0.3, 0.7]),
    st.sampled_from([b"", b"data: {\n\n", b"\x00\xff garbage", b'{"x": 1}\n']),
)
def test_a_stream_decoded_in_one_piece_is_what_its_chunks_decode_to(
    protocol: str, response: object, cuts: list[int], cut_off: float | None, tail: bytes
) -> None:
    """`decoded_stream` reads the joined chunks in one piece (and a stream that does not decode chunk by chunk
    again): the events and why the decoder stopped are `decode_stream`'s of the chunks, for a whole stream, a
    truncated one and one with trailing garbage."""
    body = encode_events(registry.get(protocol), strategies.events_for(response))  # type: ignore[arg-type]
    if cut_off is not None:
        body = body[: int(len(body) * cut_off)]
    body += tail
    at = sorted({c % (len(body) + 1) for c in cuts})
    chunks = tuple(body[a:b] for a, b in zip([0, *at], [*at, len(body)], strict=True))
    subject._decoded.clear()
    assert decoded_stream(protocol, chunks) == decode_stream(protocol, chunks)


def _subject(**wire: object) -> Subject:
    scenario = next(s for s in load_scenarios(REPO / "scenarios") if s.id == "text-basic")
    return Subject(
        role="translated", client="openai", backend="openai", stream=True, scenario=scenario, result=SdkResult(),
        **wire,  # type: ignore[arg-type]
    )  # fmt: skip


def test_the_body_sent_upstream_is_parsed_once_and_what_is_no_json_says_so() -> None:
    one = _subject(upstream_body=b'{"model": "m", "messages": []}')
    assert one.upstream_json == (True, {"model": "m", "messages": []})
    assert one.upstream_json[1] is one.upstream_json[1]  # one parse for every check
    assert _subject(upstream_body=b"[1, 2]").upstream_json == (True, [1, 2])
    assert _subject(upstream_body=b"").upstream_json == (False, None)
    assert _subject(upstream_body=b"{not json").upstream_json == (False, None)
    assert _subject(upstream_body=b'"\xff"').upstream_json == (False, None)  # no UTF-8


def test_the_answer_is_joined_once_from_its_chunks() -> None:
    one = _subject(frontend_chunks=(BODY[:40], BODY[40:]))
    assert one.frontend_body == BODY and one.frontend_body is one.frontend_body
    assert _subject().frontend_body == b""
