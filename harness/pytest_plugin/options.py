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
    (
        "scenarios",
        "a scenario folder over the packaged ones (repeatable)",
        {"metavar": "DIR", "action": "append"},
        "args",
    ),
    (
        "cassettes",
        "a cassette folder over the packaged ones (repeatable)",
        {"metavar": "DIR", "action": "append"},
        "args",
    ),
    ("no-packaged", "read only the folders given, not the packaged ones", {"action": "store_true"}, "bool"),
    ("known", "known-failures file (default: <rootdir>/conformance-known.toml)", {"metavar": "FILE"}, "string"),
    (
        "report",
        "write each case's trace to DIR/cases (then: conformance report --run DIR)",
        {"metavar": "DIR"},
        "string",
    ),
    ("socket", "serve the proxy on a loopback socket (default in-process)", {"action": "store_true"}, "bool"),
    # Gating a proxy that runs elsewhere, as `conformance run --sut` does (the same option names after the prefix).
    (
        "sut",
        "gate the proxy running at URL (its upstreams at the replay server: `conformance sut-config`)",
        {"metavar": "URL"},
        "string",
    ),
    (
        "wait-for-sut",
        "poll the --conformance-sut URL until it answers, at most SECONDS",
        {"metavar": "SECONDS"},
        "string",
    ),
    ("client-key-env", "send the key in environment variable VAR to the proxy", {"metavar": "VAR"}, "string"),
    ("client-key", "the same, given inline", {"metavar": "KEY"}, "string"),
    (
        "sut-header",
        "an extra request header (repeatable)",
        {"metavar": "[BACKEND:]NAME=VALUE", "action": "append"},
        "linelist",
    ),
    ("sut-headers", "extra headers from a TOML file ([headers], [headers.<backend>])", {"metavar": "FILE"}, "string"),
    (
        "sut-unversioned",
        "send these frontends' requests without the leading /v1 of their path (a gateway reached at its root)",
        {"metavar": "FRONTEND[,FRONTEND]"},
        "string",
    ),
    ("replay-host", "the replay server's interface (default 127.0.0.1)", {"metavar": "HOST"}, "string"),
    ("replay-port", "the replay server's port (default 8790; 0: any free one)", {"metavar": "PORT"}, "string"),
    (
        "upstream-model",
        "the model routes send upstream for BACKEND (repeatable)",
        {"metavar": "BACKEND=MODEL", "action": "append"},
        "linelist",
    ),
    ("timeout", "per-request timeout of the SDK clients in seconds (default 60)", {"metavar": "SECONDS"}, "string"),
)


def option_name(suffix: str) -> str:
    """The ini key and `config.getoption` name of one option (`conformance_record_mode`)."""
    return "conformance" + ("_" + suffix.replace("-", "_") if suffix else "")
