"""`conformance serve`: a bad config exits 2 naming the key; a real server process forwards to a real upstream
socket, with sync SDK clients, the key from the environment and nothing secret in its logs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx2
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from harness.cli import main
from harness.protocols import HttpRequest, registry
from harness.proxy import TRACE_HEADER, ServerThread
from tests.conftest import REPO
from tests.proxy.upstreams import KEY_ENV, KEY_VALUE, text_reply


def test_bad_config_exits_2_naming_file_and_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[models.m]\nmode = 'mirror'\nupstream = 'u'\n", encoding="utf-8")
    assert main(["serve", "--config", str(path)]) == 2
    assert (
        f"conformance serve: {path}: models.m.mode: expected one of passthrough, translate" in capsys.readouterr().err
    )


def test_serve_help_names_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "127.0.0.1" in capsys.readouterr().out


async def anthropic_upstream(request: Request) -> Response:
    """A real upstream socket speaking Anthropic, produced by the codec's encoder; it insists on the key."""
    codec = registry.get("anthropic")
    if request.headers.get("x-api-key") != KEY_VALUE:
        return Response(b'{"type":"error","error":{"type":"authentication_error","message":"bad key"}}', 401)
    body = await request.body()
    decoded = codec.decode_request(HttpRequest("POST", request.url.path, headers=dict(request.headers), body=body))
    assert not decoded.stream
    reply = codec.encode_response(text_reply(f"{decoded.model} says hello"))
    return Response(reply.body, reply.status, headers=reply.headers)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def upstream_server() -> Iterator[ServerThread]:
    app = Starlette(routes=[Route("/v1/messages", anthropic_upstream, methods=["POST"])])
    with ServerThread(app) as server:
        yield server


def wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {process.stderr.read() if process.stderr else b''!r}")
        try:
            if httpx2.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx2.TransportError:
            time.sleep(0.1)
    raise AssertionError("server did not become healthy within 20 s")


def test_served_process_forwards_to_configured_upstream_only(tmp_path: Path, upstream_server: ServerThread) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(
        f"""
[upstreams.claude]
protocol = "anthropic"
base_url = "{upstream_server.url}"
api_key_env = "{KEY_ENV}"
read_timeout = 10

[models.claude-e2e]
mode = "passthrough"
upstream = "claude"
upstream_model = "claude-real"

[models.gpt-e2e]
mode = "translate"
upstream = "claude"
upstream_model = "claude-translated"
""",
        encoding="utf-8",
    )
    port = free_port()
    env = {**os.environ, KEY_ENV: KEY_VALUE, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "harness", "serve", "--config", str(path), "--port", str(port)]
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        with httpx2.Client(timeout=10) as http:
            claude = anthropic.Anthropic(api_key="client-key", base_url=url, http_client=http, max_retries=0)
            message = claude.messages.create(
                model="claude-e2e", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
            )
            gpt = openai.OpenAI(api_key="client-key", base_url=f"{url}/v1", http_client=http, max_retries=0)
            completion = gpt.chat.completions.create(model="gpt-e2e", messages=[{"role": "user", "content": "hi"}])
            unknown = http.post(f"{url}/v1/chat/completions", json={"model": "gpt-4o", "messages": []})
            trace_id = unknown.headers[TRACE_HEADER]
    finally:
        process.send_signal(signal.SIGINT)
        try:
            _, err = process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate(timeout=5)
    assert message.content[0].type == "text" and message.content[0].text == "claude-real says hello"
    assert completion.choices[0].message.content == "claude-translated says hello"
    assert unknown.status_code == 404 and "gpt-4o" in unknown.json()["error"]["message"]
    log = err.decode()
    assert f"exchange trace_id={trace_id}" in log
    assert KEY_VALUE not in log and "client-key" not in log
    assert process.returncode == 0, log[-2000:]
