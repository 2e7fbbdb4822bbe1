"""`--pace MS` on `conformance run`, `conformance gateway` and `conformance replay-server`: checked before anything
runs, refused where it cannot act, and carried into a report's rerun command."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.cli import build_parser, main
from harness.cli.gateway import gateway_rerun
from harness.cli.run import rerun_options
from tests.conftest import REPO


def _args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def _run(capsys: pytest.CaptureFixture[str], tmp: Path, *extra: str) -> tuple[int, str]:
    base = ["run", "--scenarios", str(REPO / "scenarios"), "--cassettes", str(REPO / "cassettes")]
    code = main([*base, "--reports", str(tmp), "-q", "--scenario", "text-basic", *extra])
    return code, capsys.readouterr().err


def test_pace_without_a_sut_is_refused_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(capsys, tmp_path, "--pace", "20")
    assert code == 2
    assert (
        err
        == "conformance run: --pace paces the replay server of a --sut run (the built-in proxy replays in-process)\n"
    )
    assert not any(tmp_path.iterdir())


def test_pace_out_of_range_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(capsys, tmp_path, "--sut", "http://127.0.0.1:9", "--pace", "500")
    assert (code, err) == (2, "conformance run: --pace 500: milliseconds between streamed chunks, from 0 to 200\n")


def test_gateway_and_replay_server_check_the_pace_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay-server", "--pace", "-5"]) == 2
    assert capsys.readouterr().err == (
        "conformance replay-server: --pace -5: milliseconds between streamed chunks, from 0 to 200\n"
    )


def test_the_rerun_command_keeps_the_pace() -> None:
    assert rerun_options(_args("run", "--sut", "http://127.0.0.1:4000", "--pace", "20")) == [
        "--sut", "http://127.0.0.1:4000", "--pace", "20",
    ]  # fmt: skip
    assert "--pace" not in rerun_options(_args("run", "--sut", "http://127.0.0.1:4000"))
    assert gateway_rerun(_args("gateway", "litellm", "--pace", "20")) == ["gateway", "litellm", "--pace", "20"]
    assert gateway_rerun(_args("gateway", "litellm")) == ["gateway", "litellm"]
