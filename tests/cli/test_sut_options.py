"""`run` and `fuzz` take the same `--sut` client options (`harness.cli._sut_options`), and both rerun lines carry
the variable or file that holds a secret, never the secret."""

from __future__ import annotations

import argparse

from harness.cli import build_parser
from harness.cli.fuzz import _sut_rerun
from harness.cli.run import rerun_options

CLIENT_OPTIONS = (
    "--replay-host",
    "--replay-port",
    "--client-key-env",
    "--client-key",
    "--sut-header",
    "--sut-headers",
    "--sut-unversioned",
)


def _options(command: str) -> dict[str, str | None]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        flag: action.help
        for action in sub.choices[command]._actions
        for flag in action.option_strings
        if flag in CLIENT_OPTIONS
    }


def test_run_and_fuzz_declare_the_same_client_options_with_the_same_help() -> None:
    run, fuzz = _options("run"), _options("fuzz")
    assert set(run) == set(CLIENT_OPTIONS)
    assert run == fuzz


def test_both_rerun_lines_keep_the_key_variable_and_the_replay_address_but_no_secret() -> None:
    argv = [
        "--sut", "http://127.0.0.1:4000", "--client-key-env", "GW_KEY", "--sut-header", "x-secret=hunter2hunter2",
        "--replay-port", "9001",
    ]  # fmt: skip
    wanted = ["--replay-host", "127.0.0.1", "--replay-port", "9001", "--client-key-env", "GW_KEY"]
    run = rerun_options(build_parser().parse_args(["run", *argv]))
    fuzz = _sut_rerun(build_parser().parse_args(["fuzz", "--frontend", "openai", "--backend", "anthropic", *argv]))
    for line in (run, fuzz):
        assert "hunter2hunter2" not in " ".join(line)
        assert line[line.index("--replay-host") :][: len(wanted)] == wanted
    assert fuzz == ["--sut", "http://127.0.0.1:4000", *wanted]
