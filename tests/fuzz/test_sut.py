"""`conformance fuzz --sut`: a proxy in another process (`conformance serve`), configured by `conformance sut-config`
for the gate and nothing else, is fuzzed through the route it already has; the replay server it points at answers
each generated example on the fly. With a fault switched on in its config, the fault is found, shrunk and
reproduced through it; clean, it stays green for the same seed."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from harness.cli import main
from harness.rig import PLANTED_KEY_ENV
from harness.scenarios.loader import load_scenario
from tests.faults.test_sut import PLANTED, serve

DROPPED = "second-parallel-tool-call-dropped"
ROUTE = "text-basic"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _fuzz(tmp: Path, hooks: str, capsys: pytest.CaptureFixture[str], examples: int = 40) -> tuple[int, str]:
    replay_port, sut_port = _free_port(), _free_port()
    config = tmp / f"{hooks}.toml"
    args = ["sut-config", "--replay-url", f"http://127.0.0.1:{replay_port}", "--scenario", ROUTE]
    assert main([*args, "--backend", "openai,anthropic", "--hooks", hooks, "-o", str(config)]) == 0
    capsys.readouterr()
    with serve(config, sut_port) as url:
        code = main(
            [
                "fuzz",
                "--frontend",
                "anthropic",
                "--backend",
                "openai",
                "--streaming",
                "stream",
                "--max-examples",
                str(examples),
                "--seed",
                "3",
                "--sut",
                url,
                "--replay-port",
                str(replay_port),
                "--out",
                str(tmp / hooks / "found"),
                "--reports",
                str(tmp / hooks / "reports"),
                "--database",
                str(tmp / hooks / "db"),
            ]
        )
    return code, capsys.readouterr().out


def test_a_served_proxy_is_fuzzed_through_the_route_it_already_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(PLANTED_KEY_ENV, PLANTED)
    code, out = _fuzz(tmp_path, DROPPED, capsys)
    assert code == 1, out
    assert "fuzz: FAIL (exit 1): text-basic[anthropic->openai,stream]: proxy_bug_response" in out
    found = tmp_path / DROPPED / "found"
    # The regression case under its own id, and its copy on the gateway's route, which reproduced through it.
    (case,) = (found / "scenarios").glob("fuzz-anthropic-openai-stream-*.yaml")
    routed = load_scenario(found / "sut" / "scenarios" / f"{ROUTE}.yaml")
    assert routed.reply == load_scenario(case).reply
    assert [p.kind for p in routed.reply.content] == ["tool_call", "tool_call"]  # type: ignore[union-attr]
    assert sorted(p.name for p in (found / "sut" / "cassettes").iterdir()) == ["anthropic", "openai"]
    rerun = next(line for line in out.splitlines() if line.strip().startswith("rerun:"))
    assert f"--scenario {ROUTE}" in rerun and "--sut http://127.0.0.1:" in rerun and "--no-packaged" in rerun

    # The same seeded draw, past the example that failed above (the 8th), passes on the proxy without the fault.
    code, out = _fuzz(tmp_path, "identity", capsys, examples=12)
    assert code == 0, out
    assert "fuzz: PASS (exit 0)" in out, out


def test_hooks_cannot_act_on_a_sut(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["fuzz", "--frontend", "anthropic", "--backend", "openai", "--hooks", DROPPED, "--sut", "http://127.0.0.1:9"]
    assert main(args) == 2
    assert "--hooks switches a fault on in the built-in proxy" in capsys.readouterr().err


def test_a_sut_that_does_not_answer_is_an_infrastructure_failure(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["fuzz", "--frontend", "anthropic", "--backend", "openai", "--streaming", "nonstream"]
    args += ["--sut", f"http://127.0.0.1:{_free_port()}", "--replay-port", str(_free_port()), "--max-examples", "1"]
    assert main(args) == 2
    assert "conformance fuzz:" in capsys.readouterr().err
