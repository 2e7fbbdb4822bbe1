"""The `conformance run` line of a failure hint reruns exactly the case, with the session's folders and
known-failures file (the pytest line is run as printed in test_pytest_plugin.py)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from harness.pytest_plugin.items import Settings
from harness.pytest_plugin.rerun import run_command
from harness.scenarios.layers import Layers
from harness.trace import Case
from tests.conftest import REPO
from tests.plugin.conftest import CASSETTES, SCENARIOS


def _settings(tmp: Path, **changes: object) -> Settings:
    values: dict[str, object] = {
        "frontends": None,
        "backends": None,
        "only": None,
        "streaming": "both",
        "record_mode": "none",
        "scenarios": Layers.of("scenarios", [tmp / "my-scenarios"]),
        "cassettes": Layers.of("cassettes", [CASSETTES]),
        "known": tmp / "accepted.toml",
        "known_named": True,
        "report": None,
        "socket": False,
    }
    values.update(changes)
    return Settings(**values)  # type: ignore[arg-type]


def test_the_run_line_reruns_exactly_the_case_with_the_sessions_files(tmp_path: Path) -> None:
    (tmp_path / "my-scenarios").mkdir()
    for name in ("text-basic", "tool-call-single"):
        shutil.copy(SCENARIOS / f"{name}.yaml", tmp_path / "my-scenarios" / f"{name}.yaml")
    case = Case("tool-call-single", "openai", "anthropic", False)
    # The session accepts this case's request-side bug: the rerun must read the same file.
    (tmp_path / "accepted.toml").write_text(
        f'[[case]]\nid = "{case.case_id}"\nverdict = "proxy_bug_request"\nreason = "tracked"\n', encoding="utf-8"
    )
    command = run_command(_settings(tmp_path), case, tmp_path)
    assert command == (
        "conformance run --scenario tool-call-single --frontend openai --backend anthropic --streaming nonstream "
        "--scenarios my-scenarios --known accepted.toml"  # the packaged cassettes need no option
    )
    assert run_command(_settings(tmp_path, socket=True), case, tmp_path) == f"{command} --socket"
    # As a user runs it: its own process, in the folder pytest ran in (pytester's in-process runs leave modules
    # behind that a socket-mode run in this process would trip over).
    argv = [sys.executable, "-m", "harness", *shlex.split(command)[1:], "--reports", "out", "--run-id", "r", "-q"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "out" / "r" / "summary.json").read_text(encoding="utf-8"))
    assert [c["case_id"] for c in summary["cases"]] == [case.case_id]
    assert summary["cases"][0]["verdict"] == "pass"


def test_default_folders_are_left_out(tmp_path: Path) -> None:
    settings = _settings(tmp_path, scenarios=Layers.of("scenarios"), cassettes=Layers.of("cassettes"))
    command = run_command(settings, Case("text-basic", "gemini", "ollama", True), tmp_path)
    assert command == "conformance run --scenario text-basic --frontend gemini --backend ollama --streaming stream"
