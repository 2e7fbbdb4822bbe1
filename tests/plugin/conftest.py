"""Helpers for driving the plugin with pytester: how to load it, and the repo's scenarios and cassettes."""

from __future__ import annotations

from importlib.metadata import entry_points

# pytester's in-process runs drop every module first imported during the run from sys.modules afterwards. The
# socket-mode run is the first to open a real connection, so without this import httpcore2 would be imported
# twice: httpx2 (imported before) then maps only the first copy's exceptions, and a later refused connection
# escapes as a raw httpcore2.ConnectError instead of httpx2.ConnectError (an order-dependent failure of
# tests/proxy/test_socket.py under xdist).
import httpcore2  # noqa: F401

from tests.conftest import REPO

SCENARIOS = REPO / "scenarios"
CASSETTES = REPO / "cassettes"

# Installed, the package's `pytest11` entry point loads the plugin in every run; from a source checkout it is
# named with -p. Both at once would register the module twice, which pluggy refuses.
# Named with -p, the already imported module cannot be assertion-rewritten, which pytest warns about; the plugin
# has no asserts to rewrite.
_INSTALLED = any(ep.name == "conformance" for ep in entry_points(group="pytest11"))
PLUGIN: tuple[str, ...] = (
    () if _INSTALLED else ("-p", "harness.pytest_plugin", "-W", "ignore::pytest.PytestAssertRewriteWarning")
)


def matrix(*scenarios: str, frontends: str = "openai", backends: str = "openai,anthropic") -> list[str]:
    """Command-line options for a small matrix on the repo's scenarios and cassettes (`=` forms, so that pytest
    does not take the paths for test arguments when it looks for the rootdir)."""
    return [
        *PLUGIN,
        "--conformance",
        f"--conformance-scenarios={SCENARIOS}",
        f"--conformance-cassettes={CASSETTES}",
        f"--conformance-scenario={','.join(scenarios)}",
        f"--conformance-frontend={frontends}",
        f"--conformance-backend={backends}",
    ]
