"""A scenario whose expectations contradict its own scripted reply is a scenario error (exit 2, naming the scenario
and the check), not a silent `backend_issue` on every case; a real provider's recording that fails the same check
keeps its verdict (issue 22)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.runner.contradiction import cassette_source
from harness.trace import read_trace_bytes
from tests.conftest import REPO

SCENARIO = "text-basic"


def _contradicting(tmp_path: Path) -> tuple[Path, Path]:
    """A scenario folder whose text-basic expects other text than it scripts, and its reference recordings."""
    scenarios, cassettes = tmp_path / "scenarios", tmp_path / "cassettes"
    scenarios.mkdir()
    text = (REPO / "scenarios" / f"{SCENARIO}.yaml").read_text(encoding="utf-8")
    wrong = text.replace('text_equals: "Hello! How can I help you today?"', 'text_equals: "Goodbye."')
    assert wrong != text
    (scenarios / f"{SCENARIO}.yaml").write_text(wrong, encoding="utf-8")
    args = ["record", "--backend", "openai,anthropic", "--scenario", SCENARIO, "--streaming", "nonstream"]
    assert main([*args, "--scenarios", str(scenarios), "--cassettes", str(cassettes)]) == 0
    return scenarios, cassettes


def _run(tmp_path: Path, scenarios: Path, cassettes: Path) -> int:
    args = ["run", "-q", "-j", "1", "--scenario", SCENARIO, "--frontend", "openai", "--backend", "anthropic"]
    args += ["--streaming", "nonstream", "--scenarios", str(scenarios), "--cassettes", str(cassettes)]
    return main([*args, "--reports", str(tmp_path / "reports"), "--run-id", "r"])


def _verdicts(tmp_path: Path) -> set[str]:
    summary = json.loads((tmp_path / "reports" / "r" / "summary.json").read_text(encoding="utf-8"))
    return {c["verdict"] for c in summary["cases"]}


def test_a_scenario_that_contradicts_its_reply_is_exit_2_naming_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios, cassettes = _contradicting(tmp_path)
    assert cassette_source(cassettes / "anthropic" / f"{SCENARIO}.nonstream.yaml") == "reference"
    capsys.readouterr()
    assert _run(tmp_path, scenarios, cassettes) == 2
    err = capsys.readouterr().err
    assert "scenario error: text-basic contradicts itself" in err and "text_equals" in err, err
    assert _verdicts(tmp_path) == {"harness_error"}


def test_a_real_recording_failing_the_same_check_keeps_its_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios, cassettes = _contradicting(tmp_path)
    for path in cassettes.rglob("*.yaml"):  # as `conformance import` or `record --source real` marks them
        path.write_text(path.read_text(encoding="utf-8").replace("source: reference", "source: real"), "utf-8")
    cassette_source.cache_clear()
    assert _run(tmp_path, scenarios, cassettes) == 0
    assert _verdicts(tmp_path) == {"backend_issue"}
    assert "scenario error" not in capsys.readouterr().err


def test_a_profile_whose_reference_backend_emulates_a_real_deviation_keeps_its_verdict(tmp_path: Path) -> None:
    """qwen answers tool calls as XML text, on purpose: the OpenAI SDK's baseline on it fails `tool_calls`, a
    backend issue of that provider, not a contradiction of the scenario (the committed recordings)."""
    args = ["run", "-q", "-j", "1", "--scenario", "tool-call-single", "--frontend", "anthropic", "--backend", "qwen"]
    assert main([*args, "--streaming", "nonstream", "--reports", str(tmp_path / "reports"), "--run-id", "r"]) == 0
    summary = json.loads((tmp_path / "reports" / "r" / "summary.json").read_text(encoding="utf-8"))
    (case,) = summary["cases"]
    assert case["verdict"] != "harness_error"
    trace = json.loads(read_trace_bytes(tmp_path / "reports" / "r" / case["trace"]))
    baseline = trace["runs"]["baseline_backend"]
    assert baseline["client"] != baseline["upstream"] and any(not c["passed"] for c in baseline["checks"])
