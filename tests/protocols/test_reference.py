"""The reference backends answer as their real providers do: provider id forms, the fields only a provider
knows, headers, and the input count at stream start; deterministic, so re-recording changes no byte."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import ir
from harness.backends import WireReply, respond
from harness.protocols import registry
from harness.protocols.reference import (
    BASE62,
    PlainReference,
    error_reply,
    reference_of,
    stream_reply,
    strip_extras,
    token,
)
from harness.record.scrub import find_secrets
from harness.scenarios.loader import load_scenarios
from harness.scenarios.model import ReplyOk
from harness.scenarios.script import scripted_events, usage_at_start
from tests.conftest import REPO

SCENARIOS = load_scenarios(REPO / "scenarios")
TEXT = next(s for s in SCENARIOS if s.id == "text-basic")


def _answer(backend: str, stream: bool) -> WireReply:
    codec = registry.get(backend)
    request = codec.encode_request(TEXT.request_for(TEXT.id, stream=stream))
    return respond(codec, request, SCENARIOS)


@pytest.mark.parametrize("backend", registry.names())
@pytest.mark.parametrize("stream", [True, False])
def test_a_scripted_reply_records_the_same_bytes_every_time(backend: str, stream: bool) -> None:
    first, again = _answer(backend, stream), _answer(backend, stream)
    assert (first.status, first.headers, first.body) == (again.status, again.headers, again.body)
    text = first.body.decode("utf-8", "replace") + json.dumps(first.headers)
    assert not find_secrets(text)  # nothing that looks like a secret


@pytest.mark.parametrize(
    ("backend", "header", "prefix"),
    [
        ("anthropic", "request-id", "req_011C"),
        ("openai", "x-request-id", "req_"),
        ("openai", "openai-version", "2020-10-01"),
        ("ollama", "x-request-id", ""),
        ("gemini", "content-disposition", "attachment"),
    ],
)
def test_the_provider_headers_are_sent(backend: str, header: str, prefix: str) -> None:
    assert _answer(backend, True).headers[header].startswith(prefix)


def test_anthropic_reports_the_scripted_input_count_at_message_start_with_its_own_id() -> None:
    body = _answer("anthropic", True).body.decode()
    start = json.loads(body.split("data: ", 1)[1].split("\n", 1)[0])["message"]
    assert start["id"].startswith("msg_01") and len(start["id"]) == 28
    assert start["usage"]["input_tokens"] == 14  # text-basic's usage: real Anthropic knows the count here
    assert start["usage"]["service_tier"] == "standard"


def test_openai_chunks_carry_what_api_openai_com_sends() -> None:
    payloads = [json.loads(line[6:]) for line in _answer("openai", True).body.decode().splitlines() if line[6:7] == "{"]
    assert all(p["id"].startswith("chatcmpl-") and p["system_fingerprint"].startswith("fp_") for p in payloads)
    assert all(p["service_tier"] == "default" and "obfuscation" in p for p in payloads)
    assert payloads[-1]["choices"] == [] and payloads[-1]["usage"]["prompt_tokens"] == 14
    assert all(p["usage"] is None for p in payloads[:-1])


def test_gemini_reports_usage_on_every_chunk() -> None:
    chunks = [
        json.loads(line[6:]) for line in _answer("gemini", True).body.decode().splitlines() if line.startswith("data: ")
    ]
    assert len(chunks) > 1
    assert all(c["usageMetadata"]["promptTokenCount"] == 14 for c in chunks)
    assert chunks[-1]["usageMetadata"]["candidatesTokenCount"] == 9
    assert len({c["responseId"] for c in chunks}) == 1


def test_ollama_final_line_has_the_durations() -> None:
    final = json.loads(_answer("ollama", True).body.decode().splitlines()[-1])
    assert final["done"] is True
    assert {"total_duration", "load_duration", "prompt_eval_duration", "eval_duration"} <= set(final)


def test_error_bodies_carry_the_providers_request_id() -> None:
    error = ir.IRError.of(ir.ErrorKind.AUTH, "invalid x-api-key")
    out = error_reply(registry.get("anthropic"), error, seed="s")
    body = json.loads(out.body)
    assert body["request_id"] == out.headers["request-id"] and out.headers["x-should-retry"] == "false"
    gemini = json.loads(error_reply(registry.get("gemini"), error, seed="s").body)["error"]
    assert gemini["details"][0]["reason"] == "API_KEY_INVALID"


def test_usage_at_start_defaults_to_the_input_figures_and_can_say_nothing() -> None:
    reply = ReplyOk(usage=ir.Usage(input_tokens=20, output_tokens=5, cache_read_tokens=8))
    assert usage_at_start(reply) == ir.Usage(input_tokens=20, cache_read_tokens=8)
    start = scripted_events(reply)[0]
    assert isinstance(start, ir.MessageStart) and start.usage == ir.Usage(input_tokens=20, cache_read_tokens=8)
    silent = reply.model_copy(update={"usage_at_start": ir.Usage()})
    assert usage_at_start(silent) is None


def test_an_anthropic_translation_estimates_input_at_start_never_zero() -> None:
    # What the built-in proxy sends for an upstream that reports usage only at the end (OpenAI, Gemini, Ollama).
    request = TEXT.request_for("m", stream=True)
    events: list[ir.StreamEvent] = [
        ir.MessageStart(id="x", model="m"),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage(input_tokens=14, output_tokens=9)),
    ]
    body = registry.get("anthropic").stream_encoder(request=request)
    start = json.loads(body.encode(events[0]).decode().split("data: ", 1)[1])["message"]["usage"]
    assert start["input_tokens"] > 0
    delta = json.loads(body.encode(events[1]).decode().split("data: ", 1)[1].split("\n", 1)[0])
    assert delta["usage"]["input_tokens"] == 14  # the exact count follows, cumulative, in message_delta


def test_references_strip_nothing_the_ir_says_and_add_their_own_fields() -> None:
    events = [ir.MessageStart(id="a", model="m", extras={"openai": {"x": 1}}), ir.Done()]
    assert strip_extras(events) == [ir.MessageStart(id="a", model="m"), ir.Done()]
    reply = stream_reply(registry.get("openai"), TEXT.request_for("m", stream=True), events, seed="s")
    assert b'"service_tier":"default"' in reply.chunks[0]
    # A codec that declares no reference answers with its encoders' output alone.
    assert isinstance(reference_of(registry.get("qwen")), PlainReference)


@settings(max_examples=300, deadline=None)
@given(
    seed=st.text(),
    length=st.integers(0, 80),
    alphabet=st.sampled_from([BASE62, "0123456789", "0123456789abcdef", "abc", "äöü€", "x"]),
)
def test_token_is_each_digest_byte_taken_modulo_the_alphabet(seed: str, length: int, alphabet: str) -> None:
    # The byte-table fast path (ASCII alphabets) spells the same characters the per-byte join does.
    digest = b"".join(hashlib.sha256(f"{seed}\x1f{i}".encode()).digest() for i in range(length // 32 + 1))
    assert token(seed, length, alphabet) == "".join(alphabet[b % len(alphabet)] for b in digest[:length])
