"""A run that judged nothing never passes: no recordings, a filter that matches no case, a matrix of unsupported
cases, an empty filter and a timeout that is no number all exit 2 with one line naming the cause; a reused
`--run-id` starts from an empty folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.runner.run_events import gate_code
from tests.cli.test_gate_failures import conformance, one_line
from tests.conftest import REPO

SCENARIOS = str(REPO / "scenarios")


def test_a_mistyped_or_missing_cassette_folder_is_refused(tmp_path: Path) -> None:
    line = one_line(conformance("--scenarios", SCENARIOS, "--cassettes", str(tmp_path / "casettes")))
    assert line == f"conformance run: --cassettes {tmp_path / 'casettes'}: the folder does not exist"


def test_an_empty_cassette_folder_alone_judges_nothing(tmp_path: Path) -> None:
    (tmp_path / "cassettes").mkdir()
    only = ("--no-packaged", "--scenarios", SCENARIOS, "--cassettes", str(tmp_path / "cassettes"))
    line = one_line(conformance(*only))
    assert "holds no backend's recordings" in line
    line = one_line(conformance("--no-packaged", "--scenarios", SCENARIOS))  # nothing to read instead
    assert line == "conformance run: --no-packaged needs --cassettes: the folders to read instead"


def test_a_working_directory_without_cassettes_runs_the_packaged_ones(tmp_path: Path) -> None:
    args = ["--scenario", "text-basic", "--frontend", "openai", "--backend", "openai", "--run-id", "x"]
    done = conformance(*args, "--reports", str(tmp_path / "r"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "r" / "x" / "summary.json").read_text(encoding="utf-8"))
    assert summary["counts"]["pass"] == 2


def test_a_filter_that_matches_no_case_judges_nothing(tmp_path: Path) -> None:
    line = one_line(conformance("--scenario", "models-list", "--streaming", "stream", "--reports", str(tmp_path)))
    assert line == "conformance run: nothing to judge: no case matches --scenario models-list --streaming stream"


def test_a_matrix_of_unsupported_cases_judges_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # swink answers only with a stream: every non-streamed case of it is unsupported.
    args = ["run", "-q", "--frontend", "swink", "--backend", "openai", "--streaming", "nonstream"]
    assert main([*args, "--reports", str(tmp_path), "--run-id", "x", "-j", "1"]) == 2
    out = capsys.readouterr().out
    assert "gate: ERROR (exit 2): nothing was judged: all" in out and "are unsupported" in out
    summary = json.loads((tmp_path / "x" / "summary.json").read_text(encoding="utf-8"))
    assert summary["exit_code"] == 2


@pytest.mark.parametrize("flag", ["--scenario", "--frontend", "--backend"])
def test_an_empty_filter_is_not_all(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "-q", flag, ""]) == 2
    assert f"{flag}: an empty list" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_a_timeout_must_be_a_positive_finite_number(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "-q", "--timeout", value]) == 2
    assert "--timeout" in capsys.readouterr().err


def test_no_judged_case_is_exit_2_whatever_else() -> None:
    assert gate_code([], [], [], strict=False, judged=0) == 2
    assert gate_code([], [], [], strict=False, judged=1) == 0
    assert gate_code([], [], [], strict=False) == 0


def test_a_reused_run_id_starts_from_an_empty_folder(tmp_path: Path) -> None:
    common = ["run", "-q", "-j", "1", "--frontend", "openai", "--backend", "anthropic", "--reports", str(tmp_path)]
    assert main([*common, "--scenario", "text-basic", "--run-id", "same"]) == 0
    stale = tmp_path / "same" / "cases" / "stale-case.json"
    stale.write_text("{}", encoding="utf-8")
    assert main([*common, "--scenario", "system-prompt", "--run-id", "same"]) == 0
    traces = sorted(p.name for p in (tmp_path / "same" / "cases").iterdir())
    assert traces and all(name.startswith("system-prompt") for name in traces), traces
    summary = json.loads((tmp_path / "same" / "summary.json").read_text(encoding="utf-8"))
    assert {c["scenario"] for c in summary["cases"]} == {"system-prompt"}
