"""A run killed by SIGTERM or SIGINT before it finished never re-renders as a gate (issue 22): its `plan.json`
lists cases that have no trace, so `conformance report --run DIR --gate` exits 2 with one line."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.trace import trace_files
from tests.conftest import REPO

WAIT_S = 60.0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_killed_run_is_refused_by_the_gate(tmp_path: Path, sig: signal.Signals) -> None:
    folder = tmp_path / "reports" / "k"
    # A matrix that takes many seconds, so the signal always lands mid-run.
    command = [
        sys.executable,
        "-m",
        "harness",
        "run",
        "--frontend",
        "openai,anthropic,gemini",
        "--backend",
        "openai,anthropic",
    ]
    command += ["-j", "1", "--reports", str(tmp_path / "reports"), "--run-id", "k"]
    run = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + WAIT_S
        while not trace_files(folder / "cases") and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.05)
        assert run.poll() is None, "the run ended before it could be killed"
        run.send_signal(sig)
        assert run.wait(WAIT_S) != 0
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(WAIT_S)
    assert (folder / "plan.json").is_file()
    report = [sys.executable, "-m", "harness", "report", "--run", str(folder), "--gate", "--quiet"]
    done = subprocess.run(report, cwd=REPO, capture_output=True, text=True, timeout=WAIT_S, check=False)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "planned cases have no trace" in done.stderr
