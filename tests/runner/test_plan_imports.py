"""Planning a matrix imports no SDK (they take ~1.5 s of CPU to import, and the parent of `-j N` only plans): what
each SDK can do is declared in its protocol's SDK facts, which its driver reads too."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness import drivers
from harness.drivers.base import SocketDriver
from harness.protocols import registry

SDK_MODULES = ("anthropic", "openai", "google.genai", "ollama", "boto3", "botocore.client")
"""The SDKs (vcrpy imports some of botocore to patch it: its client is the SDK's cost)."""


@pytest.mark.parametrize("name", drivers.names())
def test_a_driver_can_do_what_its_sdk_facts_say(name: str) -> None:
    driver = drivers.get(name)
    sdk = registry.sdk(name)
    assert driver.capabilities == sdk.capabilities
    assert sdk.capabilities, f"{name}: an SDK that can do nothing"
    assert isinstance(driver, SocketDriver) == bool(sdk.socket_capabilities)
    if isinstance(driver, SocketDriver):
        assert driver.socket_capabilities == sdk.socket_capabilities


def test_planning_the_whole_matrix_imports_no_sdk() -> None:
    code = (
        "import sys\n"
        "from harness.runner.plan import MatrixOptions, plan\n"
        "p = plan(MatrixOptions(transports=('http', 'ws')))\n"
        "assert len(p.cases) > 1000 and any(p.gaps.values()), len(p.cases)\n"
        f"print(sorted(m for m in {SDK_MODULES!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
