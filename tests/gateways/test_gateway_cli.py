"""`conformance gateway` end to end, with the built-in proxy (`conformance serve`) standing in for a real gateway:
its config generated for a replay server on a free port, the process started and awaited, the matrix gated, the
process stopped by PID, its config and log kept in the report with the keys replaced; a gateway that cannot
start is exit 2 in one line."""

from __future__ import annotations

import json
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cli import main
from harness.gateways import specs
from harness.rig import PLANTED_KEY_ENV
from tests.conftest import REPO

PLANTED = "PLANTED-TEST-KEY-gatewaycli42"


@dataclass(frozen=True)
class BuiltIn(specs.GatewaySpec):
    """The built-in proxy as a gateway spec (the `conformance` config format)."""

    def frontends(self) -> list[str]:
        return ["openai", "anthropic"]

    def backends(self) -> list[str]:
        return ["openai", "anthropic"]


def _spec(ready_path: str = "/healthz") -> BuiltIn:
    return BuiltIn(
        name="conformance",
        package="conformance",
        version="0",
        config_file="sut.toml",
        argv=(sys.executable, "-m", "harness", "serve", "--config", "{config}", "--port", "{port}"),
        ready_path=ready_path,
        install_hint="it is this package",
        executable=Path(sys.executable).name,
        env={"PYTHONPATH": str(REPO)},
    )


def _args(tmp_path: Path, *extra: str) -> list[str]:
    return [
        "gateway",
        "conformance",
        "--home",
        str(tmp_path),
        "--scenarios",
        str(REPO / "scenarios"),
        "--cassettes",
        str(REPO / "cassettes"),
        "--reports",
        str(tmp_path / "reports"),
        "--scenario",
        "text-basic,system-prompt",
        "-q",
        *extra,
    ]


def test_a_gateway_is_started_gated_and_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PLANTED_KEY_ENV, PLANTED)
    monkeypatch.setitem(specs.GATEWAYS, "conformance", _spec())
    assert main(_args(tmp_path)) == 0
    report = tmp_path / "reports" / "gateway-conformance"
    summary = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    assert summary["counts"]["pass"] == summary["total"] == 2 * 2 * 2 * 2
    assert summary["sut"].startswith("http://127.0.0.1:")
    config = (report / "gateway" / "sut.toml").read_text(encoding="utf-8")
    assert "/openai/_s/system-prompt" in config and 'upstream_model = "gpt-4o-mini"' in config
    assert PLANTED not in config + (report / "gateway" / "conformance.log").read_text(encoding="utf-8")


def test_a_gateway_that_never_gets_ready_is_exit_2_with_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(specs.GATEWAYS, "conformance", _spec(ready_path="/no-such-path"))
    assert main([*_args(tmp_path), "--ready-seconds", "20"]) == 2
    err = capsys.readouterr().err
    assert "conformance gateway:" in err and "not ready at http://127.0.0.1:" in err and "(HTTP 404)" in err
    kept = tmp_path / "reports" / "gateway-conformance" / "gateway" / "conformance.log"
    assert f"log {kept}" in err and kept.is_file()


def test_an_unknown_gateway_or_frontend_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gateway", "no-such"]) == 2
    assert "no gateway named 'no-such' (known: litellm, litellm-responses, portkey, ccr, " in capsys.readouterr().err
    monkeypatch.setitem(specs.GATEWAYS, "conformance", _spec())
    assert main([*_args(tmp_path), "--frontend", "gemini"]) == 2
    assert "--frontend gemini: the gateway serves openai, anthropic" in capsys.readouterr().err


def test_a_taken_gateway_port_is_exit_2_and_the_other_server_is_never_gated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Something else already listens (and would answer the readiness probe): the gate must not run against it.
    monkeypatch.setitem(specs.GATEWAYS, "conformance", _spec())
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main([*_args(tmp_path), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"conformance gateway: http://127.0.0.1:{port}/healthz: the port is taken by another process" in err
    assert not (tmp_path / "reports" / "gateway-conformance" / "summary.json").exists()


def test_a_gateway_that_is_not_installed_is_exit_2_with_its_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = _spec()
    missing = BuiltIn(**{**missing.__dict__, "executable": "no-such-gateway-binary", "install_hint": "pip install x"})
    monkeypatch.setitem(specs.GATEWAYS, "conformance", missing)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(_args(tmp_path)) == 2
    assert "'no-such-gateway-binary' not found; pip install x" in capsys.readouterr().err


def test_an_unknown_gateway_is_exit_2_naming_every_gated_one(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.gateways.specs import GATEWAYS

    assert main(["gateway", "no-such"]) == 2
    err = capsys.readouterr().err
    assert "no gateway named 'no-such'" in err and all(name in err for name in GATEWAYS), err
