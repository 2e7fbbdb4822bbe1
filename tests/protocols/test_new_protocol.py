"""A protocol is its package: a codec registered with its facts is served, recorded, scrubbed, chunked and named
by the rest of the harness without a change anywhere else (ARCHITECTURE.md, "Adding a protocol"); a gateway
that serves it says how it names it in its own table (`harness/gateways/names.py`).

The stand-in protocol `toyproto` is OpenAI Chat Completions under another name and other facts: its own route,
model list path, key shape, endpoint and chunking; a gateway's table names it where that gateway serves it.
Nothing outside this test mentions it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import httpx2
import pytest

from harness.backends.chunking import effective
from harness.gateways import configs, names
from harness.protocols import facts, registry
from harness.protocols.kit import ComposedCodec
from harness.record import scrub
from harness.record.real import resolve_endpoint
from harness.scenarios.model import Chunking
from tests.protocols import test_contract
from tests.proxy.client import proxy
from tests.proxy.upstreams import KEY_ENV, KEY_VALUE, ScriptedUpstream, config, text_reply

NAME = "toyproto"
KEY = "toy-0123456789abcdefghij"


def toy_codec() -> ComposedCodec:
    """OpenAI's parts under another name, posting to its own path: a new protocol's package composes its own
    module functions the same way (`harness.protocols.kit`), with no codec class to write."""
    base = registry.get("openai")
    assert isinstance(base, ComposedCodec)
    return ComposedCodec(
        name=NAME,
        capabilities=base.capabilities,
        losses=base.losses,
        decode_request=base.decode_request,
        encode_request=lambda request: dataclasses.replace(base.encode_request(request), path="/toy/v1/generate"),
        is_stream_request=base.is_stream_request,
        decode_response=base.decode_response,
        response_encoder=base.response_encoder,
        stream_decoder_factory=base.stream_decoder_factory,
        stream_encoder_factory=base.stream_encoder_factory,
        decode_error=base.decode_error,
        encode_error=base.encode_error,
    )


FACTS = facts.ProtocolFacts(
    frontend=facts.Frontend(routes=(facts.Route("/toy/v1/generate"),), model=facts.ModelInBody()),
    model_list=facts.ModelList(
        paths=("/toy/v1/models",),
        item_paths=(),
        entry=lambda m: {"toy": m.name},
        envelope=lambda entries: {"toys": entries},
        claims=None,
    ),
    sdk=None,
    real=facts.RealEndpoint("https://api.toy.example", ("TOY_API_KEY",), "toy-large"),
    upstream_model="toy-large",
    secrets=facts.Secrets(headers=frozenset({"x-toy-key"}), key_patterns=(r"toy-[a-z0-9]{20}",)),
    chunking=facts.TypicalChunking(text_chunk_size=2, arguments_chunk_size=3),
)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    registry.names()  # the built-ins first
    monkeypatch.setitem(registry._CODECS, NAME, toy_codec())
    monkeypatch.setitem(registry._FACTS, NAME, FACTS)
    scrub.rules.cache_clear()
    yield
    scrub.rules.cache_clear()


@pytest.mark.anyio
async def test_the_proxy_serves_a_new_protocols_routes_and_model_list(
    toy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY_VALUE)
    upstream = ScriptedUpstream("openai", text_reply("hi from openai"))
    async with proxy(config(("toy-model", "translate", "openai", "gpt-4o-mini")), upstream.transport()) as p:
        body = {"model": "toy-model", "messages": [{"role": "user", "content": "hello"}]}
        answer = await p.client.post("/toy/v1/generate", json=body)
        listing = (await p.client.get("/toy/v1/models")).json()
    assert answer.status_code == 200
    assert answer.json()["choices"][0]["message"]["content"] == "hi from openai"
    assert p.exchange.frontend_protocol == NAME and p.exchange.route == "POST /toy/v1/generate"
    assert listing == {"toys": [{"toy": "toy-model"}]}


def test_the_recorder_scrubber_backends_and_gateways_read_its_facts(toy: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOY_API_KEY", KEY)
    assert resolve_endpoint(NAME) == ("https://api.toy.example", KEY, "toy-large")
    assert scrub.is_secret_header("X-Toy-Key")
    assert scrub.find_secrets(f"leaked {KEY} here") == [KEY]
    assert effective(NAME, Chunking(text_chunk_size=9)) == Chunking(text_chunk_size=9, arguments_chunk_size=3)
    # A gateway's own table says how it names the new protocol (the gateway's knowledge, not the protocol's).
    toy_name = names.GatewayName("toy", appends="/v1/generate")
    monkeypatch.setattr(names, "NAMES", {**names.NAMES, "litellm": {**names.NAMES["litellm"], NAME: toy_name}})
    assert configs.naming("litellm", NAME) == toy_name
    assert configs.request_path(NAME) == "/toy/v1/generate"
    assert FACTS.model_list is not None and FACTS.model_list.entry(facts.ListedModel("m", "translate")) == {"toy": "m"}
    assert httpx2.URL(FACTS.real.base_url).host == "api.toy.example"  # type: ignore[union-attr]


def test_the_contract_suite_runs_on_a_new_protocol(toy: None) -> None:
    assert registry.get(NAME).family == NAME
    for check in (
        test_contract.test_the_codec_is_registered_whole,
        test_contract.test_plain_text_survives_the_wire,
        test_contract.test_a_streamed_text_answer_survives_the_wire,
        test_contract.test_every_truncation_of_a_stream_ends_with_one_terminal_event,
        test_contract.test_an_empty_body_is_a_malformed_stream,
        test_contract.test_invalid_utf8_in_a_stream_raises_decode_error_naming_the_protocol,
        test_contract.test_random_bytes_raise_only_wire_errors,
        test_contract.test_well_formed_json_of_the_wrong_shape_raises_only_wire_errors,
        test_contract.test_decode_error_never_raises,
    ):
        check(NAME)
