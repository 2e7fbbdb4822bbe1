"""What recording and replay take from a protocol's facts beyond its codec: a signature that covers the host
(SigV4), the provider's rejection of a badly signed request, binary event-stream bodies cut at frames, account
placeholders in request paths, and the planted key in the shape a protocol's keys take."""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path

import httpx2
import pytest
import yaml

from harness import ir
from harness.protocols import HttpRequest, registry
from harness.proxy.config import UpstreamConfig
from harness.proxy.upstream import authorized
from harness.record import Replayer, ReplayTransport, Source, record_one
from harness.record.chunks import event_boundaries
from harness.record.real import MissingKeyError, placeholder_values
from harness.rig.keys import PLANTED_KEY_ENV, planted_key, planted_key_env
from harness.scenarios.loader import load_scenarios
from harness.wire import eventstream
from tests.conftest import REPO

SCENARIOS = load_scenarios(REPO / "scenarios")
TEXT_BASIC = next(s for s in SCENARIOS if s.id == "text-basic")
BEDROCK = registry.get("bedrock")
KEY = "AKIDEXAMPLEKEY:secret-never-sent:eu-west-1"


def _stream_body() -> bytes:
    encoder = BEDROCK.stream_encoder()
    events = [
        ir.MessageStart(),
        ir.TextStart(index=0),
        ir.TextDelta(index=0, text="Hello"),
        ir.TextEnd(index=0),
        ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage(input_tokens=3, output_tokens=1)),
    ]
    return b"".join(encoder.encode(e) for e in events) + encoder.close()


def test_a_real_event_stream_recording_is_cut_at_frame_boundaries_and_signed_for_its_host(tmp_path: Path) -> None:
    body = _stream_body()
    seen: list[httpx2.Request] = []

    def provider(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, headers={"content-type": eventstream.MEDIA_TYPE}, content=body)

    source = Source(
        kind="real",
        base_url="https://bedrock-runtime.eu-west-1.amazonaws.com",
        api_key=KEY,
        model="us.amazon.nova-micro-v1:0",
        transport=httpx2.MockTransport(provider),
    )
    path = record_one("bedrock", TEXT_BASIC, True, scenarios=SCENARIOS, root=tmp_path, source=source)
    (request,) = seen
    authorization = request.headers["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLEKEY/")
    assert "/eu-west-1/bedrock/aws4_request" in authorization and "secret-never-sent" not in authorization
    assert request.headers["host"] == "bedrock-runtime.eu-west-1.amazonaws.com"
    assert "SignedHeaders=content-type;host;x-amz-date" in authorization
    assert request.url.raw_path == b"/model/us.amazon.nova-micro-v1%3A0/converse-stream"
    doc = yaml.safe_load(path.read_text())
    (interaction,) = doc["interactions"]
    assert "authorization" not in interaction["request"]["headers"]
    stored = interaction["response"]["body"]
    assert base64.b64decode(stored["base64"]) == body
    assert stored["chunks"] == eventstream.frame_lengths(body) and len(stored["chunks"]) == 5
    assert "AKIDEXAMPLEKEY" not in path.read_text()


def test_event_boundaries_go_by_media_type() -> None:
    body = _stream_body()
    assert event_boundaries(body, f"{eventstream.MEDIA_TYPE}; charset=binary") == eventstream.frame_lengths(body)
    assert event_boundaries(b"data: a\n\ndata: b\n\n", "text/event-stream") == [9, 9]
    assert event_boundaries(b'{"a":1}\n{"b":2}\n', None) == [8, 8]


def test_account_placeholders_are_filled_for_the_provider_and_put_back_in_the_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    account = "4f1c2a0b9d8e7f6a5b4c3d2e1f0a9b8c"
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", account)
    values = placeholder_values("cloudflare")
    assert values == {"0" * 32: account}
    reply = b'{"result":{"response":"Hello!","usage":{"prompt_tokens":3,"completion_tokens":1}},"success":true}'
    seen: list[str] = []

    def provider(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(200, headers={"content-type": "application/json"}, content=reply)

    source = Source(
        kind="real",
        base_url="https://api.cloudflare.com",
        api_key="cf-token-0123456789abcdef",
        model="@cf/meta/llama-3.1-8b-instruct",
        transport=httpx2.MockTransport(provider),
        placeholders=values,
    )
    path = record_one("cloudflare", TEXT_BASIC, False, scenarios=SCENARIOS, root=tmp_path, source=source)
    assert seen == [f"https://api.cloudflare.com/client/v4/accounts/{account}/ai/run/@cf/meta/llama-3.1-8b-instruct"]
    text = path.read_text()
    assert account not in text and "cf-token" not in text
    uri = yaml.safe_load(text)["interactions"][0]["request"]["uri"]
    assert uri == f"https://api.cloudflare.com/client/v4/accounts/{'0' * 32}/ai/run/@cf/meta/llama-3.1-8b-instruct"
    monkeypatch.delenv("CLOUDFLARE_ACCOUNT_ID")
    with pytest.raises(MissingKeyError, match="needs CLOUDFLARE_ACCOUNT_ID"):
        placeholder_values("cloudflare")
    assert placeholder_values("openai") == {}


def _replay(request: HttpRequest) -> httpx2.Response:
    replayer = Replayer(REPO / "cassettes", SCENARIOS)

    async def go() -> httpx2.Response:
        async with httpx2.AsyncClient(transport=ReplayTransport(replayer)) as client:
            response = await client.post(
                f"http://replay.invalid/bedrock{request.path}", content=request.body, headers=request.headers
            )
            await response.aread()
            return response

    return asyncio.run(go())


def test_the_replay_answers_a_badly_signed_bedrock_request_as_bedrock_does() -> None:
    unsigned = BEDROCK.encode_request(TEXT_BASIC.request_for("text-basic", stream=False))
    refused = _replay(unsigned)
    assert refused.status_code == 403
    assert refused.headers["x-amzn-errortype"].startswith("InvalidSignatureException:")
    assert "no authorization header" in refused.json()["message"]
    forged = HttpRequest(
        "POST",
        unsigned.path,
        headers={
            **unsigned.headers,
            "authorization": "AWS4-HMAC-SHA256 Credential=K/20250101/us-east-1/s3/aws4_request",
        },
        body=unsigned.body,
    )
    assert _replay(forged).status_code == 403
    signed = BEDROCK.with_auth(
        HttpRequest(
            unsigned.method, unsigned.path, headers={**unsigned.headers, "host": "replay.invalid"}, body=unsigned.body
        ),
        KEY,
    )
    answered = _replay(signed)
    assert answered.status_code == 200 and answered.json()["stopReason"] == "end_turn"
    assert _replay(BEDROCK.with_auth(unsigned, "ABSKbedrockapikey0123456789abcdef")).status_code == 200  # bearer


def test_the_proxy_names_the_upstream_host_before_it_signs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BEDROCK_TEST_KEY", KEY)
    upstream = UpstreamConfig(
        name="b", protocol="bedrock", base_url="http://127.0.0.1:8790/bedrock", api_key_env="BEDROCK_TEST_KEY"
    )
    request = BEDROCK.encode_request(TEXT_BASIC.request_for("m", stream=True))
    signed = authorized(BEDROCK, request, upstream)
    assert signed.headers["host"] == "127.0.0.1:8790"
    check = registry.facts("bedrock").secrets.check
    assert check is not None and check(signed) is None  # the replay server's signature-shape check passes
    assert "/eu-west-1/bedrock/aws4_request" in signed.headers["authorization"]


def test_the_planted_key_takes_the_shape_of_a_protocols_keys() -> None:
    planted = planted_key()
    assert planted_key_env("openai") == PLANTED_KEY_ENV
    name = planted_key_env("bedrock")
    assert name == f"{PLANTED_KEY_ENV}_BEDROCK"
    access, secret = os.environ[name].split(":")
    assert secret == planted and access == "CONFORMANCEPLANTEDKEY"
    signed = BEDROCK.with_auth(BEDROCK.encode_request(TEXT_BASIC.request_for("m", stream=True)), os.environ[name])
    assert signed.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=CONFORMANCEPLANTEDKEY/")
    assert planted not in str(signed.headers)  # the secret signs, it is never sent
