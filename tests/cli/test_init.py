"""`conformance init`: the scaffold of a team's repository, and its GitHub Actions workflow run here step by step
(every `run:` step but the pip install, in order, in the scaffolded folder) against the placeholder proxy it
starts (`conformance serve` on 127.0.0.1, free ports): the gate passes and leaves the report the upload takes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from harness import __version__
from harness.cli import main
from harness.runner.plan import default_backends, default_frontends
from tests.conftest import REPO
from tests.faults.test_sut import _free_port

WORKFLOW = Path(".github/workflows/conformance.yml")


def test_init_writes_the_scaffold_and_refuses_to_overwrite_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", str(tmp_path)]) == 0
    for rel in ("conformance/scenarios/team-example.yaml", "conformance/known.toml", str(WORKFLOW)):
        assert (tmp_path / rel).is_file()
    cassettes = sorted(
        p.relative_to(tmp_path / "conformance/cassettes").as_posix()
        for p in (tmp_path / "conformance/cassettes").rglob("*.yaml")
    )
    assert "openai/team-example.stream.yaml" in cassettes and "anthropic/team-example.nonstream.yaml" in cassettes
    capsys.readouterr()
    (tmp_path / "conformance/known.toml").write_text("# ours\n", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("conformance init: ") and err.rstrip().endswith(
        "exists (--force overwrites); nothing written"
    )
    assert (tmp_path / "conformance/known.toml").read_text(encoding="utf-8") == "# ours\n"
    assert main(["init", str(tmp_path), "--force"]) == 0
    assert (tmp_path / "conformance/known.toml").read_text(encoding="utf-8") != "# ours\n"


def _steps(root: Path) -> tuple[dict[str, str], list[dict[str, str]]]:
    doc = yaml.safe_load((root / WORKFLOW).read_text(encoding="utf-8"))
    (job,) = doc["jobs"].values()
    return {k: str(v) for k, v in job["env"].items()}, job["steps"]


def test_the_workflow_installs_starts_waits_gates_and_uploads(tmp_path: Path) -> None:
    assert main(["init", str(tmp_path)]) == 0
    _, steps = _steps(tmp_path)
    runs = [s.get("run", "") for s in steps]
    assert any(f'pip install "llm-conformance-harness=={__version__}"' in r for r in runs)
    start = next(s for s in steps if s.get("name") == "Start the proxy under test")
    assert "PLACEHOLDER" in start["run"]
    gate = next(r for r in runs if r.startswith("conformance run"))
    assert "--wait-for-sut" in gate and "--sut" in gate and "--known conformance/known.toml" in gate
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "reports/ci/"


def test_the_workflow_steps_run_here_and_the_gate_passes(tmp_path: Path) -> None:
    assert main(["init", str(tmp_path)]) == 0
    env_vars, steps = _steps(tmp_path)
    # As generated, every frontend and backend (the team narrows them: the step's marked EDIT); here one of each.
    assert env_vars["FRONTENDS"] == ",".join(default_frontends())
    assert env_vars["BACKENDS"] == ",".join(default_backends(REPO / "cassettes"))
    env_vars.update(SUT_PORT=str(_free_port()), REPLAY_PORT=str(_free_port()), FRONTENDS="anthropic", BACKENDS="openai")
    bin_dir = str(Path(sys.executable).parent)  # where this environment's `conformance` script is
    env = {**os.environ, **env_vars, "PYTHONPATH": str(REPO), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done: list[str] = []
    try:
        for step in steps:
            if "run" not in step or "pip install" in step["run"] or step.get("if") == "failure()":
                continue
            result = subprocess.run(
                ["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
            )
            log = (tmp_path / "proxy.log").read_text(errors="replace") if (tmp_path / "proxy.log").exists() else ""
            assert result.returncode == 0, f"{step.get('name')}: {result.stderr[-2000:]}\n{log[-2000:]}"
            done.append(str(step.get("name")))
    finally:
        pid_file = tmp_path / "proxy.pid"
        if pid_file.exists():  # the proxy the placeholder step started in the background
            pid = int(pid_file.read_text().strip())
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
                time.sleep(0.1)
    assert done == ["Write the proxy's routes", "Start the proxy under test", "Gate the proxy"]
    summary = json.loads((tmp_path / "reports" / "ci" / "summary.json").read_text(encoding="utf-8"))
    assert "team-example" in summary["scenarios"] and len(summary["scenarios"]) > 30
    assert (summary["frontends"], summary["backends"]) == (["anthropic"], ["openai"])
    assert summary["exit_code"] == 0 and summary["counts"]["pass"] > 0
    assert (tmp_path / "reports" / "ci" / "index.html").is_file()
