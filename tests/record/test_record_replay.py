"""Recording from reference backends with vcrpy, readable cassettes, replay by scenario with chunk boundaries,
re-chunking, misses that name the nearest recordings, and no socket in replay."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
from pathlib import Path

import httpx2
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from vcr.request import Request as VcrRequest

import harness.record.serializer
from harness import ir
from harness.protocols import decode_events, registry
from harness.protocols.openai.reference import usage_chunks_dropped
from harness.record import Rechunk, RecordMode, Replayer, ReplayMissError, ReplayTransport, record_one, reference_source
from harness.record.chunks import event_boundaries, rechunk, split_by_lengths
from harness.record.layout import recorded
from harness.record.matching import StepKeys, http_request_of, step_key
from harness.scenarios.model import Scenario
from harness.stream import accumulate

TEXT = "Hello there, héllo 🌍 and 日本語!"
SCENARIO = Scenario.model_validate(
    {
        "id": "text-basic",
        "description": "plain text",
        "request": {"messages": [{"role": "user", "content": [{"kind": "text", "text": "Say hi"}]}]},
        "reply": {
            "kind": "ok",
            "content": [{"kind": "text", "text": TEXT}],
            "usage": {"input_tokens": 5, "output_tokens": 7},
        },
    }
)
OTHER = Scenario.model_validate(
    {
        "id": "other",
        "description": "another",
        "request": {"messages": [{"role": "user", "content": [{"kind": "text", "text": "Something else"}]}]},
        "reply": {"kind": "ok", "content": [{"kind": "text", "text": "x"}]},
    }
)
SCENARIOS = [SCENARIO, OTHER]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    source = reference_source(SCENARIOS)
    for backend in ("openai", "anthropic"):
        for stream in (True, False):
            record_one(backend, SCENARIO, stream, scenarios=SCENARIOS, root=tmp_path, source=source)
    return tmp_path


def _fetch(replayer: Replayer, backend: str, stream: bool, model: str = "text-basic") -> tuple[int, list[bytes]]:
    codec = registry.get(backend)
    request = codec.encode_request(SCENARIO.request_for(model, stream=stream))

    async def go() -> tuple[int, list[bytes]]:
        async with (
            httpx2.AsyncClient(transport=ReplayTransport(replayer)) as client,
            client.stream(
                "POST", f"http://up/{backend}{request.path}", content=request.body, headers=request.headers
            ) as r,
        ):
            return r.status_code, [c async for c in r.aiter_raw()]

    return asyncio.run(go())


def test_cassette_is_readable_with_metadata_chunks_and_no_secrets(root: Path) -> None:
    doc = yaml.safe_load((root / "anthropic" / "text-basic.stream.yaml").read_text())
    assert doc["metadata"]["source"] == "reference"
    assert doc["metadata"]["scenario"] == "text-basic" and doc["metadata"]["mode"] == "stream"
    (interaction,) = doc["interactions"]
    assert interaction["request"]["body"]["json"]["messages"][0]["content"] == "Say hi"
    body = interaction["response"]["body"]
    assert "event: message_start" in body["string"]  # readable SSE, not base64
    assert sum(body["chunks"]) == len(body["string"].encode())
    assert len(body["chunks"]) > 3
    nonstream = yaml.safe_load((root / "openai" / "text-basic.nonstream.yaml").read_text())
    assert nonstream["interactions"][0]["response"]["body"]["json"]["choices"][0]["message"]["content"] == TEXT
    assert [(r.backend, r.scenario, r.stream) for r in recorded(root)] == [
        ("anthropic", "text-basic", False),
        ("anthropic", "text-basic", True),
        ("openai", "text-basic", False),
        ("openai", "text-basic", True),
    ]


def test_replay_keeps_recorded_chunk_boundaries(root: Path) -> None:
    doc = yaml.safe_load((root / "openai" / "text-basic.stream.yaml").read_text())
    status, chunks = _fetch(Replayer(root, SCENARIOS), "openai", True)
    assert status == 200
    assert [len(c) for c in chunks] == doc["interactions"][0]["response"]["body"]["chunks"]
    events = registry.get("openai").stream_decoder()
    decoded = [e for c in chunks for e in events.feed(c)] + events.close()
    assert "".join(e.text for e in decoded if e.kind == "text_delta") == TEXT


def test_a_checked_cassette_is_parsed_once(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[int] = []
    deserialize = harness.record.serializer.deserialize
    monkeypatch.setattr(harness.record.serializer, "deserialize", lambda text: parsed.append(1) or deserialize(text))
    replayer = Replayer(root, SCENARIOS)
    replayer.check("openai", "text-basic", True)
    replayer.check("openai", "text-basic", True)
    status, chunks = _fetch(replayer, "openai", True)
    assert status == 200 and b"".join(chunks).count(b"data: ") > 2
    assert len(parsed) == 1  # read by `check`, handed to vcrpy, served from then on


def test_replay_matches_by_scenario_not_bytes(root: Path) -> None:
    # Another model name and extra knobs: still the text-basic recording (found from the decoded content).
    codec = registry.get("anthropic")
    request = codec.encode_request(
        SCENARIO.request_for("claude-x", stream=False).model_copy(update={"temperature": 0.3})
    )
    reply = Replayer(root, SCENARIOS).reply("anthropic", request)
    assert reply.scenario == "text-basic" and reply.status == 200


def _is_utf8(chunk: bytes) -> bool:
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("how", list(Rechunk))
def test_rechunked_replay_decodes_to_the_same_text(root: Path, how: Rechunk) -> None:
    status, chunks = _fetch(Replayer(root, SCENARIOS, rechunk_mode=how, seed=3), "anthropic", True)
    assert status == 200
    if how is Rechunk.BYTES:
        assert all(len(c) == 1 for c in chunks)
    if how is Rechunk.UTF8:
        assert any(not _is_utf8(c) for c in chunks)  # characters really are split across chunks
    decoder = registry.get("anthropic").stream_decoder()
    decoded = [e for c in chunks for e in decoder.feed(c)] + decoder.close()
    assert "".join(e.text for e in decoded if e.kind == "text_delta") == TEXT
    assert decoded[-1].kind == "done"


def test_missing_recording_names_the_nearest_ones(root: Path) -> None:
    with pytest.raises(ReplayMissError) as info:
        Replayer(root, SCENARIOS).reply(
            "ollama", registry.get("ollama").encode_request(SCENARIO.request_for("text-basic", stream=True))
        )
    message = str(info.value)
    assert "ollama/text-basic.stream" in message
    assert "recorded for: anthropic, openai" in message
    assert "conformance record --backend ollama --scenario text-basic" in message


def test_unknown_request_names_the_closest_scenarios(root: Path) -> None:
    from harness import ir

    odd = SCENARIO.request_for("nope").model_copy(
        update={"messages": [ir.Message(role="user", content=[ir.TextPart(text="Say hello")])]}
    )
    with pytest.raises(LookupError) as info:
        Replayer(root, SCENARIOS).reply("openai", registry.get("openai").encode_request(odd))
    assert "closest: text-basic (differs at messages[0].content[0].text)" in str(info.value)


def test_replay_in_none_mode_never_opens_a_socket(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("replay opened a socket")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for backend in ("openai", "anthropic"):
        for stream in (True, False):
            status, chunks = _fetch(Replayer(root, SCENARIOS), backend, stream)
            assert status == 200 and chunks


def test_once_keeps_an_existing_cassette_and_rewrite_replaces_it(root: Path) -> None:
    path = root / "openai" / "text-basic.stream.yaml"
    before = path.read_text()
    changed = SCENARIO.model_copy(
        update={
            "reply": SCENARIO.reply.model_copy(
                update={"usage": SCENARIO.reply.usage.model_copy(update={"output_tokens": 99})}
            )
        }
    )  # type: ignore[union-attr]
    source = reference_source([changed, OTHER])
    record_one("openai", changed, True, scenarios=[changed, OTHER], root=root, source=source, mode=RecordMode.ONCE)
    assert path.read_text() == before
    record_one("openai", changed, True, scenarios=[changed, OTHER], root=root, source=source, mode=RecordMode.REWRITE)
    assert '"completion_tokens":99' in path.read_text()


def test_none_mode_refuses_to_record(tmp_path: Path) -> None:
    from vcr.errors import CannotOverwriteExistingCassetteException

    with pytest.raises(CannotOverwriteExistingCassetteException):
        record_one(
            "openai",
            SCENARIO,
            True,
            scenarios=SCENARIOS,
            root=tmp_path,
            source=reference_source(SCENARIOS),
            mode=RecordMode.NONE,
        )
    assert not (tmp_path / "openai" / "text-basic.stream.yaml").exists()


def test_chunk_helpers() -> None:
    body = b"data: a\n\ndata: b\n\n"
    assert event_boundaries(body) == [9, 9]
    assert event_boundaries(b'{"a":1}\n{"b":2}\n') == [8, 8]
    assert split_by_lengths(body, [9, 9]) == [b"data: a\n\n", b"data: b\n\n"]
    assert split_by_lengths(body, [3]) == [body]  # lengths that do not add up are not trusted
    text = "é🌍".encode()
    pieces = rechunk([text], Rechunk.UTF8)
    assert pieces == [b"\xc3", b"\xa9\xf0", b"\x9f\x8c\x8d"]  # a cut inside each multi-byte character


def test_replay_sends_the_openai_usage_chunk_only_when_the_request_asks_for_it(root: Path) -> None:
    # OpenAI streams the usage chunk (`choices: []`) only for `stream_options.include_usage`; the cassette was
    # recorded asking. A gateway that forgets to ask must get what OpenAI would send it: no usage.
    replayer = Replayer(root, SCENARIOS)
    codec = registry.get("openai")
    asked = codec.encode_request(SCENARIO.request_for("text-basic", stream=True))
    assert json.loads(asked.body)["stream_options"] == {"include_usage": True}
    body = json.loads(asked.body)
    del body["stream_options"]
    unasked = dataclasses.replace(asked, body=json.dumps(body).encode())
    full = replayer.reply("openai", asked).chunks
    bare = replayer.reply("openai", unasked).chunks
    (usage_event,) = [e for e in b"".join(full).split(b"\n\n") if b'"choices":[]' in e]
    assert b'"usage":{' in usage_event
    assert b"".join(bare) == b"".join(full).replace(usage_event + b"\n\n", b"")
    assert len(bare) == len(full)  # the finish chunk and the usage chunk were sent together: one piece less long
    response = accumulate(decode_events(codec, bare))
    assert response.response.usage == ir.Usage() and response.terminated
    assert "".join(p.text for p in response.response.content if isinstance(p, ir.TextPart)) == TEXT
    with_usage = accumulate(decode_events(codec, full)).response.usage
    assert (with_usage.input_tokens, with_usage.output_tokens) == (5, 7)


def test_replay_drops_a_usage_chunk_cut_across_recorded_chunks() -> None:
    events = [b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n', b'data: {"choices":[],"usage":{"a":1}}\n\n']
    body = b"".join([*events, b"data: [DONE]\n\n"])
    chunks = [body[:10], body[10 : len(events[0]) + 7], body[len(events[0]) + 7 : -3], body[-3:]]
    out = usage_chunks_dropped(chunks)
    assert b"".join(out) == events[0] + b"data: [DONE]\n\n"
    assert [len(c) for c in out] == [10, len(events[0]) - 10, len(b"data: [DONE]\n\n") - 3, 3]


@settings(max_examples=40, deadline=None)
@given(
    backend=st.sampled_from(["openai", "anthropic"]),
    scenario=st.sampled_from(SCENARIOS),
    stream=st.booleans(),
    as_text=st.booleans(),
    method=st.sampled_from(["POST", "post", "Post"]),
)
def test_step_keys_are_the_keys_of_the_decoded_request(
    backend: str, scenario: Scenario, stream: bool, as_text: bool, method: str
) -> None:
    # StepKeys looks a request up by its method, URI and body without decoding it again: the key it gives, on
    # first sight and when asked again (body as text or bytes), is `step_key` of the request decoded afresh.
    codec = registry.get(backend)
    request = codec.encode_request(scenario.request_for("some-model", stream=stream))
    uri = f"http://replay.invalid{request.path}"
    body = request.body.decode("utf-8") if as_text else request.body
    vcr_request = VcrRequest(method, uri, body, dict(request.headers))
    expected = step_key(codec, SCENARIOS, http_request_of(vcr_request))
    keys = StepKeys(codec, SCENARIOS)
    assert keys(vcr_request) == expected == (scenario.id, stream, 0)
    again = VcrRequest(method.upper(), uri, request.body if as_text else request.body.decode("utf-8"), {})
    assert keys(again) == expected


def test_a_loaded_cassette_is_found_without_looking_at_the_disk_again(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replayer = Replayer(root, SCENARIOS)
    first = _fetch(replayer, "openai", True)
    looked: list[Path] = []
    is_file = Path.is_file
    monkeypatch.setattr(Path, "is_file", lambda self: looked.append(self) or is_file(self))
    assert _fetch(replayer, "openai", True) == first
    assert looked == []
    with pytest.raises(ReplayMissError):  # a recording never loaded is still looked for on disk
        replayer.reply("openai", registry.get("openai").encode_request(OTHER.request_for("m", stream=True)))
    assert looked == [root / "openai" / "other.stream.yaml"]


@pytest.mark.parametrize("stream", [True, False])
def test_a_stored_answer_is_served_alike_every_time(root: Path, stream: bool) -> None:
    # The answer is worked out once per stored response: later replies equal a fresh replayer's first one, and
    # each reply's chunks are its own list (a caller changing them changes no later reply).
    request = registry.get("openai").encode_request(SCENARIO.request_for("text-basic", stream=stream))
    replayer = Replayer(root, SCENARIOS)
    first = replayer.reply("openai", request)
    first.chunks.clear()
    first.headers.clear()
    again = replayer.reply("openai", request)
    assert again == Replayer(root, SCENARIOS).reply("openai", request)
    assert again.chunks and again.headers
