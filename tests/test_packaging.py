"""The wheel is enough: it carries the scenarios and cassettes (the repository's own folders, mapped as package
data through the `harness/_data` links), and `conformance run` works from an empty folder with only the wheel's
harness on the path, a team's own scenario beside the packaged ones in one command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

WHEEL_LIMIT = 10_000_000
"""Bytes a wheel may weigh (2.8 MB with 1,727 cassettes: YAML compresses well)."""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", str(REPO), "-w", str(out), "--no-deps", "-q"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=out)
    assert done.returncode == 0, done.stderr[-2000:]
    (found,) = out.glob("*.whl")
    return found


def test_the_wheel_carries_every_scenario_and_cassette(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for kind in ("scenarios", "cassettes"):
        ours = {p.relative_to(REPO / kind).as_posix() for p in (REPO / kind).rglob("*") if p.is_file()}
        shipped = {n.removeprefix(f"harness/_data/{kind}/") for n in names if n.startswith(f"harness/_data/{kind}/")}
        assert shipped == ours and len(ours) > 30
    assert wheel.stat().st_size < WHEEL_LIMIT


def _run(args: list[str], cwd: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    command = [sys.executable, "-m", "harness", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_a_team_scenario_and_the_packaged_ones_run_in_one_command_from_an_empty_folder(
    wheel: Path, tmp_path: Path
) -> None:
    site, here = tmp_path / "site", tmp_path / "team-repo"
    here.mkdir()
    install = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)]
    assert subprocess.run(install, capture_output=True, timeout=300).returncode == 0
    where = _run(["--version"], here, site)
    assert where.returncode == 0
    check = subprocess.run(
        [sys.executable, "-c", "import harness; print(harness.__file__)"],
        env={**os.environ, "PYTHONPATH": str(site)}, cwd=here, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert check.stdout.startswith(str(site))  # the wheel's copy, not the checkout
    (here / "scenarios").mkdir()
    text = (REPO / "scenarios" / "text-basic.yaml").read_text(encoding="utf-8")
    (here / "scenarios" / "my-own.yaml").write_text(text.replace("id: text-basic", "id: my-own"), encoding="utf-8")
    mine = ["--scenarios", "scenarios", "--cassettes", "cassettes"]
    recorded = _run(["record", "--backend", "anthropic,openai", *mine, "--scenario", "my-own"], here, site)
    assert recorded.returncode == 0, recorded.stderr
    listed = _run(["list", "scenarios", "--scenarios", "scenarios"], here, site).stdout.splitlines()
    assert [line.split()[0] for line in listed if "from=scenarios" in line] == ["my-own"]
    assert sum("from=packaged" in line for line in listed) == len(list((REPO / "scenarios").glob("*.yaml")))
    run = [*mine, "--backend", "anthropic,openai", "--frontend", "openai", "--scenario", "my-own,text-basic"]
    done = _run(["run", "-q", *run, "--run-id", "r"], here, site)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((here / "reports" / "r" / "summary.json").read_text(encoding="utf-8"))
    assert summary["scenarios"] == ["my-own", "text-basic"]
    assert {k: v for k, v in summary["counts"].items() if v} == {"pass": 8}
    # The packaged cassettes are the installed harness's: writing needs a folder of the team's.
    refused = _run(["record", "--backend", "openai", "--scenario", "text-basic"], here, site)
    assert refused.returncode == 2
    assert "--cassettes DIR: name the folder to write to" in refused.stderr
