"""`conformance run` as a CI log shows it: its own process, no TTY, no COLUMNS. Every line fits 80 columns, progress
counts cases (not runs) on stderr, and `-q` still ends with the report path and the gate line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

MATRIX = [
    *("--scenario", "text-basic", "--scenario", "tool-call-parallel"),
    *("--frontend", "openai", "--frontend", "anthropic", "--backend", "anthropic", "--backend", "gemini"),
]
CASES = 2 * 2 * 2 * 2  # scenarios x frontends x backends x (stream, nonstream)


def conformance_run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    base = ["run", "--scenarios", str(REPO / "scenarios"), "--cassettes", str(REPO / "cassettes")]
    return subprocess.run(
        [sys.executable, "-m", "harness", *base, "--reports", str(tmp), "--run-id", "r", *MATRIX, *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
        check=False,
    )


def test_ci_log_fits_80_columns_with_case_progress(tmp_path: Path) -> None:
    result = conformance_run(tmp_path)
    assert result.returncode == 0, result.stderr
    page = tmp_path / "r" / "index.html"
    out = result.stdout.splitlines()
    assert out[-2:] == [f"report: {page}", "gate: PASS (exit 0): no new proxy bugs"]
    assert f"{CASES} cases in " in result.stdout and f": {CASES} pass" in result.stdout
    header = next(line for line in out if line.startswith("backend \\ frontend"))
    assert header.split()[3:] == ["openai", "anthropic"]
    assert [line.split()[0] for line in out if line.startswith(("anthropic ", "gemini "))] == ["anthropic", "gemini"]
    assert all(len(line) <= 80 for line in out[:-2] + result.stderr.splitlines()), result.stdout + result.stderr
    err = result.stderr.splitlines()
    assert err[0] == f"running {CASES} cases"
    assert err[-1].endswith(f"{CASES}/{CASES} cases (100%): {CASES} pass")  # cases, not 3 runs each
    assert "\x1b" not in result.stdout + result.stderr  # no colour codes or cursor moves in a log
    assert page.stat().st_size > 0


def test_quiet_still_prints_the_report_path_and_the_gate_line(tmp_path: Path) -> None:
    result = conformance_run(tmp_path, "-q")
    assert (result.returncode, result.stderr) == (0, "")
    page = tmp_path / "r" / "index.html"
    assert result.stdout.splitlines() == [f"report: {page}", "gate: PASS (exit 0): no new proxy bugs"]
    assert page.is_file()
