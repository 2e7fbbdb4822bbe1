"""`conformance run --hooks FAULT` works at the default `-j` (worker processes): the catalogue's hooks are closures
and lambdas that do not pickle, so the CLI hands the workers the fault by name (it said "run with -j 1")."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from harness.cli import main
from harness.faults.catalog import by_name, portable_hooks
from harness.proxy import HookContext


def test_a_fault_by_name_pickles_and_binds_to_the_faults_own_hooks() -> None:
    hooks = pickle.loads(pickle.dumps(portable_hooks("system-prompt-dropped")))
    context = HookContext(frontend_protocol="anthropic", upstream_protocol="openai", stream=False)
    bound = hooks.bind(context)
    assert bound.on_upstream_request is by_name("system-prompt-dropped").hooks.on_upstream_request


def test_an_unknown_fault_is_refused_by_name() -> None:
    with pytest.raises(KeyError, match="no fault named 'nope'"):
        portable_hooks("nope")


def test_hooks_run_in_two_workers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "-q", "-j", "2", "--frontend", "anthropic,openai", "--backend", "openai", "--scenario"]
    args += [
        "tool-call-parallel,text-basic",
        "--reports",
        str(tmp_path),
        "--hooks",
        "second-parallel-tool-call-dropped",
    ]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "gate: FAIL (exit 1): 4 new proxy bugs" in out  # the dropped call, stream and not, both frontends
