"""`report --merge` joins only shards of one matrix: the same options that shape each case and the same scenario
content, both read from each shard's `plan.json` (issue 22)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.report import report_writers
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions
from tests.conftest import REPO


def _shard(tmp_path: Path, k: int, **kw: object) -> Path:
    base = MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        reports=tmp_path / "shards",
        frontends=["openai"],
        backends=["openai"],
        only=["text-basic"],
        known=tmp_path / "known.toml",
        run_id=f"s{k}",
        shard=(k, 2),
    )
    runner = Engine(dataclasses.replace(base, **kw))  # type: ignore[arg-type]
    runner.writers = report_writers(runner.folder)
    runner.run()
    return runner.folder


def _merge(shards: list[Path], out: Path) -> int:
    return main(["report", "--merge", *map(str, shards), "--run", str(out), "--quiet", "--gate"])


def test_the_plan_holds_each_scenarios_content_hash_and_the_join_keeps_it(tmp_path: Path) -> None:
    shards = [_shard(tmp_path, 1), _shard(tmp_path, 2)]
    plan = json.loads((shards[0] / "plan.json").read_text(encoding="utf-8"))
    assert set(plan["scenario_hashes"]) == {"text-basic"} and len(plan["scenario_hashes"]["text-basic"]) == 16
    out = tmp_path / "joined"
    assert _merge(shards, out) == 0
    joined = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert joined["scenario_hashes"] == plan["scenario_hashes"]
    assert len(joined["case_ids"]) == 2


def test_shards_run_with_different_options_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shards = [_shard(tmp_path, 1), _shard(tmp_path, 2, rerun=["--timeout", "5.0"])]
    assert _merge(shards, tmp_path / "joined") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "options differ (--timeout 5.0 vs none)" in err and "not shards of one matrix" in err


def test_shards_run_on_different_scenario_content_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited = tmp_path / "scenarios"
    shutil.copytree(REPO / "scenarios", edited)
    path = edited / "text-basic.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("description:", "description: EDITED", 1), "utf-8")
    shards = [_shard(tmp_path, 1), _shard(tmp_path, 2, scenarios=edited)]
    assert _merge(shards, tmp_path / "joined") == 2
    err = capsys.readouterr().err.strip()
    assert "scenario content differs (text-basic)" in err and "not shards of one matrix" in err


def test_a_shard_without_its_plan_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shards = [_shard(tmp_path, 1), _shard(tmp_path, 2)]
    (shards[1] / "plan.json").unlink()
    assert _merge(shards, tmp_path / "joined") == 2
    assert "cannot read the shard's plan" in capsys.readouterr().err
