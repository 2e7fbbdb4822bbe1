"""The pytest plugin's option table and session-state key: what both the light plugin shell
(`harness.pytest_plugin`) and its engine side (`harness.pytest_plugin.items`) read. Imports only pytest."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from harness.pytest_plugin.items import ConformanceState

STATE_KEY: pytest.StashKey[ConformanceState] = pytest.StashKey()
"""Where the session's conformance state (settings, runner, cached runs) lives on `config.stash`."""

RECORD_MODES = ("none", "once", "new_episodes", "all", "rewrite")
STREAMING = ("both", "stream", "nonstream")

# (option suffix, help, CLI extras, ini type). CLI defaults are None so that an unset option falls back to the ini
# value (CLI over ini, as pytest-recording layers its configuration).
OPTIONS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    ("", "collect one item per conformance case", {"action": "store_true"}, "bool"),
    ("frontend", "frontend protocols (comma list; default: every SDK)", {"action": "append"}, "string"),
    ("backend", "backends (comma list; default: every recorded one)", {"action": "append"}, "string"),
    ("scenario", "only these scenario ids (comma list)", {"action": "append"}, "string"),
    ("streaming", "streaming modes (default both)", {"choices": STREAMING}, "string"),
    ("record-mode", "none (default): replay only; others record first", {"choices": RECORD_MODES}, "string"),
    ("scenarios", "scenario folder (default: <rootdir>/scenarios)", {"metavar": "DIR"}, "string"),
    ("cassettes", "cassette folder (default: <rootdir>/cassettes)", {"metavar": "DIR"}, "string"),
    ("known", "known-failures file (default: <rootdir>/conformance-known.toml)", {"metavar": "FILE"}, "string"),
    (
        "report",
        "write each case's trace to DIR/cases (then: conformance report --run DIR)",
        {"metavar": "DIR"},
        "string",
    ),
    ("socket", "serve the proxy on a loopback socket (default in-process)", {"action": "store_true"}, "bool"),
)


def option_name(suffix: str) -> str:
    """The ini key and `config.getoption` name of one option (`conformance_record_mode`)."""
    return "conformance" + ("_" + suffix.replace("-", "_") if suffix else "")
