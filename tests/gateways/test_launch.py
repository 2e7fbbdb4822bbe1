"""The gateway launcher against a stand-in gateway process: ready only once its URL answers 200, a start that
fails says why with its log, and the process is always stopped by its PID (SIGKILL when SIGTERM is ignored)."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from harness.gateways.launch import GatewayProcess, GatewayStartError, Launch, free_port, running

FAKE = Path(__file__).with_name("fake_gateway.py")


def _launch(tmp_path: Path, *extra: str, ready_seconds: float = 20.0) -> tuple[Launch, int]:
    port = free_port()
    launch = Launch(
        argv=(sys.executable, str(FAKE), str(port), *extra),
        ready_url=f"http://127.0.0.1:{port}/health",
        log=tmp_path / "gateway.log",
        ready_seconds=ready_seconds,
    )
    return launch, port


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_a_gateway_is_ready_once_it_answers_and_stopped_by_pid_afterwards(tmp_path: Path) -> None:
    launch, port = _launch(tmp_path, "--delay", "0.5")
    with running(launch) as process:
        assert process.pid is not None and _listening(port)
        assert "listening on 127.0.0.1" in (tmp_path / "gateway.log").read_text()
    assert process.proc is not None and process.proc.poll() is not None
    assert not _listening(port)


def test_a_gateway_that_exits_before_it_is_ready_is_an_error_quoting_its_log(tmp_path: Path) -> None:
    launch, _ = _launch(tmp_path, "--exit-after", "0.2")
    with pytest.raises(GatewayStartError, match=r"exited with 3 before it was ready(.|\n)*failing on purpose"):
        GatewayProcess(launch).start()


def test_a_gateway_that_never_gets_ready_is_stopped_after_the_bound(tmp_path: Path) -> None:
    launch, port = _launch(tmp_path, "--status", "503", ready_seconds=1.0)
    process = GatewayProcess(launch)
    with pytest.raises(GatewayStartError, match=r"not ready at .*/health after 1 s \(HTTP 503\)"):
        process.start()
    assert process.proc is not None and process.proc.poll() is not None
    assert not _listening(port)


def test_a_gateway_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    launch, _ = _launch(tmp_path, "--ignore-term")
    process = GatewayProcess(launch).start()
    assert process.stop(timeout=0.5) == -9


def test_a_missing_program_is_a_start_error(tmp_path: Path) -> None:
    launch = Launch(argv=(str(tmp_path / "no-such-gateway"),), ready_url="http://127.0.0.1:1/", log=tmp_path / "l")
    with pytest.raises(GatewayStartError, match="cannot start"):
        GatewayProcess(launch).start()
    assert GatewayProcess(launch).stop() is None
