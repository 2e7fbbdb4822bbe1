"""`pytest --conformance-sut URL` gates a proxy running in another process (`conformance serve` from a
`sut-config` file, a fault switched on), and the rerun lines of a failure reproduce it on the same proxy."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from harness import drivers
from harness.cli import main
from harness.protocols import registry
from harness.rig import PLANTED_KEY_ENV
from tests.conftest import REPO
from tests.faults.test_sut import PLANTED, _free_port, serve
from tests.plugin.conftest import PLUGIN

pytest_plugins = ["pytester"]

# As in test_pytest_plugin.py: load every protocol and driver outside pytester's in-process runs.
registry.names()
for _name in drivers.names():
    drivers.get(_name)

CASE = "system-prompt[openai->anthropic,nonstream]"


def _config(tmp: Path, replay_port: int) -> Path:
    config = tmp / "sut.toml"
    args = ["sut-config", "--replay-url", f"http://127.0.0.1:{replay_port}", "--scenario", "text-basic,system-prompt"]
    assert main([*args, "--backend", "anthropic", "--hooks", "system-prompt-dropped", "-o", str(config)]) == 0
    return config


def test_pytest_gates_a_running_proxy_and_the_rerun_lines_reproduce_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PLANTED_KEY_ENV, PLANTED)
    monkeypatch.setenv("TEAM_PROXY_KEY", "sk-team-not-a-secret")
    replay_port, sut_port = _free_port(), _free_port()
    with serve(_config(pytester.path, replay_port), sut_port) as url:
        args = [*PLUGIN, "--conformance", f"--conformance-sut={url}", f"--conformance-replay-port={replay_port}"]
        args += ["--conformance-scenario=text-basic,system-prompt", "--conformance-frontend=openai"]
        args += ["--conformance-backend=anthropic", "--conformance-wait-for-sut=10", "-rf"]
        args += ["--conformance-client-key-env=TEAM_PROXY_KEY", "--conformance-sut-header=x-team=on"]
        result = pytester.runpytest(*args)
        result.assert_outcomes(passed=2, failed=2)
        result.stdout.fnmatch_lines(["*proxy_bug_request*", "*first divergence at request.system*"])
        out = result.stdout.str()
        assert "sk-team-not-a-secret" not in out and "x-team=on" not in out  # values may be secrets
        rerun = next(line for line in result.outlines if "rerun this case: pytest" in line and "nonstream" in line)
        again = pytester.runpytest(*shlex.split(rerun.split(": ", 1)[1])[1:])
        again.assert_outcomes(failed=1)
        assert f"--conformance-sut={url}" in rerun and f"--conformance-replay-port={replay_port}" in rerun
        assert "--conformance-client-key-env=TEAM_PROXY_KEY" in rerun
        report = next(line for line in result.outlines if "rerun for the HTML report:" in line and "nonstream" in line)
        command = shlex.split(report.split(": ", 1)[1])
        assert command[command.index("--sut") + 1] == url
        argv = [sys.executable, "-m", "harness", *command[1:], "--reports", "out", "--run-id", "r", "-q"]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        done = subprocess.run(argv, cwd=pytester.path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr[-2000:]
    summary = json.loads((pytester.path / "out" / "r" / "summary.json").read_text(encoding="utf-8"))
    assert {c["case_id"]: c["verdict"] for c in summary["cases"]} == {CASE: "proxy_bug_request"}


def test_a_proxy_that_never_answers_is_one_collection_error_after_the_wait(pytester: pytest.Pytester) -> None:
    dead = _free_port()
    args = [*PLUGIN, "--conformance", f"--conformance-sut=http://127.0.0.1:{dead}", "--conformance-wait-for-sut=1"]
    result = pytester.runpytest(*args, "--conformance-scenario=text-basic", "--conformance-backend=anthropic")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"conformance: --wait-for-sut 1: nothing answered within 1 s; cannot reach*{dead}*"])


def test_sut_options_need_the_sut_and_the_key_variable_must_be_set(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*PLUGIN, "--conformance", "--conformance-client-key-env=X", "--collect-only")
    result.stdout.fnmatch_lines(["*conformance_client_key_env needs conformance_sut (--conformance-sut URL)*"])
    args = [*PLUGIN, "--conformance", "--conformance-sut=http://127.0.0.1:9", "--conformance-client-key-env=NOPE_X"]
    result = pytester.runpytest(*args, "--collect-only")
    result.stdout.fnmatch_lines(["*conformance_client_key_env NOPE_X: the variable is not set*"])


def test_sut_unversioned_needs_the_sut_and_names_frontend_protocols(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*PLUGIN, "--conformance", "--conformance-sut-unversioned=responses", "--collect-only")
    result.stdout.fnmatch_lines(["*conformance_sut_unversioned needs conformance_sut (--conformance-sut URL)*"])
    args = [*PLUGIN, "--conformance", "--conformance-sut=http://127.0.0.1:9", "--conformance-sut-unversioned=nope"]
    result = pytester.runpytest(*args, "--collect-only")
    result.stdout.fnmatch_lines(["*--sut-unversioned 'nope': not frontend protocols: nope*"])
