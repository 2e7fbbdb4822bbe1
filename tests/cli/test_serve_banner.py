"""`conformance serve` in a real process on a config of a hundred models (what `sut-config` writes): the banner
summarizes the routes by upstream, names the port it really bound (`--port 0`), and `/api/diagnostics` reports
that port, not the config's default."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest

from harness.cli import main
from harness.cli._proxy_banner import UPSTREAM_LINES
from tests.conftest import REPO

LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)$")


def _lines_until_listening(process: subprocess.Popen[bytes], seconds: float = 90) -> tuple[list[str], int]:
    """stderr lines up to `listening on`, read from the pipe's descriptor (a buffered reader would hold lines
    that select() no longer sees)."""
    assert process.stderr is not None
    fd = process.stderr.fileno()
    lines: list[str] = []
    pending = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            if process.poll() is not None:
                break
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            lines.append(line.decode("utf-8", "replace"))
            found = LISTENING.search(lines[-1])
            if found:
                return lines, int(found[1])
    raise AssertionError(f"no 'listening on' line within {seconds} s: {lines[-20:]}")


def test_banner_by_upstream_and_diagnostics_report_the_bound_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "proxy.toml"
    args = ["sut-config", "--scenarios", str(REPO / "scenarios"), "--cassettes", str(REPO / "cassettes")]
    assert main([*args, "--backend", "openai,anthropic,gemini", "-o", str(config)]) == 0
    capsys.readouterr()
    models = config.read_text(encoding="utf-8").count("\n[models.")
    assert models > 90
    command = [sys.executable, "-m", "harness", "serve", "--config", str(config), "--port", "0"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(command, cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        lines, port = _lines_until_listening(process)
        diagnostics = httpx2.get(f"http://127.0.0.1:{port}/api/diagnostics?reachability=0", timeout=10).json()
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate(timeout=5)
    assert port not in (0, 8787)
    assert (diagnostics["config"]["host"], diagnostics["config"]["port"]) == ("127.0.0.1", port)
    ours = [line.split("harness.proxy: ", 1)[1] for line in lines if "harness.proxy: " in line]
    # Each route has its own upstream URL, naming its scenario (`<replay>/<backend>/_s/<scenario>`), inline.
    upstreams = models
    assert ours[0] == f"config {config}: {models} models through {upstreams} upstream(s)"
    by_upstream = ours[1 : 1 + UPSTREAM_LINES]
    shape = re.compile(r"  model:[a-z0-9-]+ \((openai|anthropic|gemini) at http://127\.0\.0\.1:8790/\1/_s/"
                       r"[a-z0-9-]+\): (1) model\(s\), (1) translate; e\.g\. [a-z0-9-]+--\1--translate$")  # fmt: skip
    for line in by_upstream:
        found = shape.match(line)
        assert found is not None and found[2] == found[3], line
    assert ours[1 + UPSTREAM_LINES] == f"  ... and {upstreams - UPSTREAM_LINES} more upstreams (GET /api/diagnostics)"
    assert ours[2 + UPSTREAM_LINES] == f"listening on http://127.0.0.1:{port}"
    assert max(len(line) for line in lines) < 300, max(lines, key=len)  # no line lists every model name
    assert "text-basic--gemini--translate" not in "\n".join(lines)
