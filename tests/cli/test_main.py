"""The `conformance` command shell: help, version, and usage errors (run as `python -m harness`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import harness
from harness.cli import EXIT_USAGE, main
from tests.conftest import REPO


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )


def test_help() -> None:
    """--help exits 0 and lists the program name and the subcommands."""
    result = _run("--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: conformance ")
    assert "decode" in result.stdout
    assert "run" in result.stdout
    assert result.stderr == ""


def test_version() -> None:
    """--version exits 0 and prints the package version."""
    result = _run("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"conformance {harness.__version__}"
    assert result.stdout.split()[-1] == harness.__version__


def test_no_subcommand_is_a_usage_error() -> None:
    """With no subcommand the command prints usage on stderr and exits 2."""
    result = _run()
    assert result.returncode == 2
    assert result.stderr.startswith("usage: conformance ")
    assert result.stdout == ""


def test_unknown_subcommand() -> None:
    """An unknown subcommand is an argparse usage error (exit 2, message names it)."""
    result = _run("frobnicate")
    assert result.returncode == 2
    assert "invalid choice: 'frobnicate'" in result.stderr


def test_main_in_process_without_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    """main([]) returns the usage exit code rather than raising, for the console script."""
    assert main([]) == EXIT_USAGE == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("usage: conformance ")
    assert captured.out == ""
