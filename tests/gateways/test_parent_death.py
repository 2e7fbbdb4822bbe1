"""A gateway never outlives the `conformance` process that started it (issue 22): SIGTERM to the parent stops it as
Ctrl-C does, and a parent killed outright (SIGKILL: no cleanup runs) takes it down through the parent-death
signal. Real processes: a parent running `running(launch)` and the stand-in gateway, a small HTTP server."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.gateways.launch import free_port

FAKE = Path(__file__).with_name("fake_gateway.py")

PARENT = """
import sys, time
from pathlib import Path
from harness.cli import Terminated, sigterm_raises
from harness.gateways.launch import Launch, running

port = int(sys.argv[1])
launch = Launch(argv=(sys.executable, sys.argv[2], str(port)), ready_url=f"http://127.0.0.1:{port}/health",
                log=Path(sys.argv[3]), ready_seconds=20)
try:
    with sigterm_raises(), running(launch) as process:
        print(process.pid, flush=True)
        time.sleep(60)
except Terminated:
    print("terminated", flush=True)
    sys.exit(143)
"""


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _parent(tmp_path: Path) -> tuple[subprocess.Popen[str], int, int]:
    port = free_port()
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(port), str(FAKE), str(tmp_path / "gateway.log")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    line = parent.stdout.readline()  # the gateway is ready once its PID is printed
    assert line.strip().isdigit(), line
    return parent, int(line), port


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, None), (signal.SIGKILL, -9)])
def test_the_gateway_dies_with_its_parent_however_the_parent_ends(
    tmp_path: Path, sig: signal.Signals, code: int | None
) -> None:
    parent, gateway, port = _parent(tmp_path)
    try:
        assert _listening(port)
        parent.send_signal(sig)
        parent.wait(timeout=30)
        assert _gone(gateway, 20), f"the gateway (pid {gateway}) outlived its parent's {sig.name}"
        assert not _listening(port)
        if code is not None:
            assert parent.returncode == code
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(timeout=10)
        assert parent.stdout is not None
        parent.stdout.close()
        with contextlib.suppress(ProcessLookupError):  # only when the test failed: the gateway is ours to stop
            os.kill(gateway, signal.SIGKILL)
