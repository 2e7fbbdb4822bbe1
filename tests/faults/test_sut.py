"""Gating a proxy in another process: `conformance serve` started as a subprocess from a `sut-config` file whose
upstreams point at the replay server the runner starts; clean it passes, with a fault switched on through its
config the runner finds the fault with the right verdict (from what the replay server received)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from harness.cli import main
from harness.rig import PLANTED_KEY_ENV
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions
from harness.trace.model import CaseResult
from tests.conftest import REPO

SCENARIOS = ["text-basic", "tool-call-single", "system-prompt"]
PAIRS = ["openai", "anthropic"]
PLANTED = "PLANTED-TEST-KEY-suttest42"
START_SECONDS = 30.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(config: Path, port: int) -> Iterator[str]:
    """`conformance serve` in its own process; bounded start, killed in teardown whatever happens."""
    env = {**os.environ, "PYTHONPATH": str(REPO), PLANTED_KEY_ENV: PLANTED}
    command = [sys.executable, "-m", "harness", "serve", "--config", str(config), "--port", str(port)]
    log = config.with_suffix(".log")
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [*command, "--log-level", "warning"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=sink
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                if httpx2.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass  # not listening yet
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"conformance serve did not start: {log.read_text(errors='replace')}")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _gate(tmp: Path, hooks: str) -> list[CaseResult]:
    replay_port, sut_port = _free_port(), _free_port()
    config = tmp / f"{hooks}.toml"
    args = ["sut-config", "--scenarios", str(REPO / "scenarios"), "--replay-url", f"http://127.0.0.1:{replay_port}"]
    args += ["--scenario", ",".join(SCENARIOS), "--backend", ",".join(PAIRS), "--hooks", hooks, "-o", str(config)]
    assert main(args) == 0
    with serve(config, sut_port) as url:
        options = MatrixOptions(
            scenarios=REPO / "scenarios",
            cassettes=REPO / "cassettes",
            reports=tmp / "reports",
            frontends=PAIRS,
            backends=PAIRS,
            only=SCENARIOS,
            known=tmp / "known.toml",
            run_id=hooks,
            jobs=2,
            sut=url,
            replay_port=replay_port,
            keep_traces="all",  # the test reads what the external proxy did back from the traces
        )
        engine = Engine(options)
        engine.run()
    return engine.results


def test_external_proxy_is_gated_clean_and_with_a_fault_switched_on(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(PLANTED_KEY_ENV, PLANTED)
    clean = _gate(tmp_path, "identity")
    assert len(clean) == 3 * 2 * 2 * 2
    assert {r.case_id: r.verdict for r in clean if r.verdict != "pass"} == {}
    translated = clean[0].runs["translated"]
    # What the external proxy did, rebuilt from both ends: its trace id, the request the replay server received.
    assert translated.trace_id and translated.upstream_request is not None
    # The route sent the backend's realistic model; the replay server found the scenario by the URL.
    assert translated.upstream_request.model == "claude-sonnet-4-5-20250929"
    assert [c.name for c in translated.checks if c.name == "frontend_wire"] == ["frontend_wire"]

    faulty = _gate(tmp_path, "system-prompt-dropped")
    bugs = {r.case_id: (r.verdict, r.first_divergence.path if r.first_divergence else None) for r in faulty}
    expected = {
        r.case_id: ("proxy_bug_request", "request.system") if r.scenario == "system-prompt" else ("pass", None)
        for r in faulty
    }
    assert bugs == expected
    first = next(r for r in faulty if r.verdict == "proxy_bug_request").first_divergence
    assert first is not None and first.left == "You are a pirate. Answer in one short sentence." and first.right is None


@pytest.mark.parametrize("fmt", ["litellm", "louter", "conformance"])
def test_sut_config_names_every_route(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"sut.{fmt}"
    args = ["sut-config", "--scenarios", str(REPO / "scenarios"), "--format", fmt, "--scenario", "text-basic"]
    assert main([*args, "--backend", "openai,gemini", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "text-basic--openai--translate" in text and "text-basic--gemini--translate" in text


def test_external_proxy_that_zeroes_input_at_message_start_turns_the_gate_red(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # What LiteLLM and claude-code-router do in front of an OpenAI-style upstream: message_start says
    # input_tokens 0, message_delta carries the real count (so the SDK's final usage is right). The faithful
    # Anthropic reference reports the count at start, so the gate sees it.
    monkeypatch.setenv(PLANTED_KEY_ENV, PLANTED)
    faulty = _gate(tmp_path, "zero-input-at-message-start")
    bugs = {r.case_id: (r.verdict, r.first_divergence.path if r.first_divergence else None) for r in faulty}
    expected = {
        r.case_id: ("proxy_bug_response", "events[0].start_input_tokens")
        if r.frontend == "anthropic" and r.stream
        else ("pass", None)
        for r in faulty
    }
    assert bugs == expected


@pytest.mark.parametrize("fmt", ["litellm", "louter"])
def test_sut_config_leaves_out_a_backend_the_gateway_cannot_name(tmp_path: Path, fmt: str) -> None:
    # No known gateway config names a Responses upstream (harness/gateways/names.py names none).
    out = tmp_path / f"sut.{fmt}"
    args = ["sut-config", "--scenarios", str(REPO / "scenarios"), "--format", fmt, "--scenario", "text-basic"]
    assert main([*args, "--backend", "openai,responses", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "text-basic--openai--translate" in text and "text-basic--responses--translate" not in text
    assert "# responses: " in text and "its routes are left out" in text


def test_sut_config_leaves_out_by_default_the_backends_a_gateway_does_not_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "litellm.yaml"
    args = ["sut-config", "--scenarios", str(REPO / "scenarios"), "--cassettes", str(REPO / "cassettes")]
    assert main([*args, "--format", "litellm", "--scenario", "text-basic", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "text-basic--openai--translate" in text and "text-basic--bedrock--translate" not in text
    left_out = "bedrock, cloudflare, responses, swink, vertex-anthropic, vertex-gemini"
    assert f"litellm serves no {left_out}: left out" in capsys.readouterr().err
