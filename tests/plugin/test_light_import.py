"""Loading the plugin (as the `pytest11` entry point does for every pytest run) imports nothing heavy, and a run
without `--conformance` neither collects conformance items nor imports the engine."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.plugin.conftest import PLUGIN

pytest_plugins = ["pytester"]

HEAVY = ("openai", "anthropic", "google.genai", "vcr", "starlette", "harness.runner", "harness.protocols")
"""SDKs, vcrpy, the proxy's framework and the engine: what loading the plugin must not pull in."""


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    ).stdout
    loaded: list[str] = json.loads(out.strip().splitlines()[-1])
    return loaded


def test_importing_the_plugin_imports_nothing_heavy() -> None:
    assert _loaded_after("import harness.pytest_plugin") == []


def test_the_probe_sees_heavy_imports_when_they_happen() -> None:
    # Guards the test above against a probe that could never fail: the engine side does load the engine.
    loaded = _loaded_after("import harness.pytest_plugin.items")
    assert {"harness.runner", "harness.protocols", "starlette"} <= set(loaded)


def test_a_pytest_run_without_conformance_stays_inert(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    pytester.makepyfile(
        test_plain=f"""
        import sys

        def test_plain():
            assert True

        def test_nothing_heavy_was_imported():
            heavy = {HEAVY!r}
            assert [m for m in heavy if m in sys.modules] == []
        """
    )
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=2)
    assert "conformance::" not in result.stdout.str()
