"""`conformance fuzz` on the command line: bad input exits 2 with one line, a found fault exits 1 with its files and
report, `conformance run --hooks` takes the same fault names."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--frontend", "antrhopic", "--backend", "openai"], "did you mean 'anthropic'"),
        (["--frontend", "groq", "--backend", "openai"], "backend-only profile"),
        (["--frontend", "openai", "--backend", "anthropic", "--hooks", "no-such-fault"], "no fault named"),
        (["--frontend", "openai", "--backend", "swink", "--streaming", "nonstream"], "has no form"),
    ],
)
def test_bad_fuzz_input_exits_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fuzz", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-3"])
def test_a_deadline_must_be_a_positive_finite_number(value: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["fuzz", "--frontend", "openai", "--backend", "anthropic", "--deadline", value])
    assert exc.value.code == 2


def test_run_refuses_hooks_with_a_sut(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "-q", "--sut", "http://127.0.0.1:9", "--hooks", "second-parallel-tool-call-dropped"]) == 2
    assert "--hooks" in capsys.readouterr().err


def test_a_found_fault_exits_1_with_its_case_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "fuzz",
            "--frontend",
            "anthropic",
            "--backend",
            "openai",
            "--streaming",
            "stream",
            "--seed",
            "3",
            "--max-examples",
            "300",
            "--no-shrink",
            "--hooks",
            "second-parallel-tool-call-dropped",
            "--out",
            str(tmp_path / "out"),
            "--database",
            str(tmp_path / "db"),
            "--reports",
            str(tmp_path / "reports"),
            "--run-id",
            "found",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1, out
    assert "fuzz: FAIL (exit 1)" in out
    scenarios = list((tmp_path / "out" / "scenarios").glob("fuzz-anthropic-openai-stream-*.yaml"))
    assert len(scenarios) == 1
    assert (tmp_path / "reports" / "found" / "index.html").is_file()
