"""`conformance run --wait-for-sut SECONDS`: a run started before its proxy waits for it, bounded; a proxy that
never comes is one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from harness.cli import main
from harness.rig import PLANTED_KEY_ENV
from tests.conftest import REPO
from tests.faults.test_sut import PLANTED, _free_port, serve


def test_a_run_started_before_its_proxy_waits_for_it(tmp_path: Path) -> None:
    replay_port, sut_port = _free_port(), _free_port()
    config = tmp_path / "sut.toml"
    args = ["sut-config", "--replay-url", f"http://127.0.0.1:{replay_port}", "--scenario", "text-basic"]
    assert main([*args, "--backend", "anthropic", "-o", str(config)]) == 0
    url = f"http://127.0.0.1:{sut_port}"
    command = [sys.executable, "-m", "harness", "run", "--sut", url, "--wait-for-sut", "60", "-q", "-j", "1"]
    command += ["--replay-port", str(replay_port), "--scenario", "text-basic", "--backend", "anthropic"]
    command += ["--frontend", "openai", "--reports", str(tmp_path / "r"), "--run-id", "w"]
    env = {**os.environ, "PYTHONPATH": str(REPO), PLANTED_KEY_ENV: PLANTED}
    with subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as run:
        time.sleep(1.5)  # the run is polling by now; the proxy starts after it
        assert run.poll() is None
        with serve(config, sut_port):
            _out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err.decode()[-2000:]
    summary = json.loads((tmp_path / "r" / "w" / "summary.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in summary["counts"].items() if v} == {"pass": 2} and summary["sut"] == url


def test_a_proxy_that_never_comes_is_one_line_and_exit_2(tmp_path: Path) -> None:
    dead = _free_port()
    command = [sys.executable, "-m", "harness", "run", "--sut", f"http://127.0.0.1:{dead}", "--wait-for-sut", "1"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.monotonic()
    done = subprocess.run(
        [*command, "--reports", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert time.monotonic() - started >= 1.0
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"conformance run: --wait-for-sut 1: nothing answered within 1 s; cannot reach the system under test at "
        f"http://127.0.0.1:{dead}: [Errno 111] Connection refused (is it running, and is --sut its root URL?)"
    ]


def test_wait_for_sut_needs_a_sut(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["run", "--wait-for-sut", "5", "--scenario", "text-basic"]) == 2
    assert capsys.readouterr().err == "conformance run: --wait-for-sut needs --sut\n"
