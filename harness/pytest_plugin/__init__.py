"""pytest plugin (`pytest11` entry point `conformance`): one test item per conformance case.

Inert unless enabled: it only registers its options, ini keys, a hook and a fixture. Everything heavy (the
runner, the SDKs, vcrpy) is imported by `harness.runner.pytest_support` once `--conformance` (or the
`conformance` ini key) is on, or when the `conformance_case` fixture is used.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from harness.proxy import TranslateHooks
    from harness.runner.pytest_support import ConformanceState
    from harness.trace.model import CaseResult

STATE_KEY: pytest.StashKey[ConformanceState] = pytest.StashKey()
"""Where the session's conformance state (settings, runner, cached runs) lives on `config.stash`."""

RECORD_MODES = ("none", "once", "new_episodes", "all", "rewrite")
STREAMING = ("both", "stream", "nonstream")

# (option suffix, help, CLI extras, ini type). CLI defaults are None so that an unset option falls back to the ini
# value (CLI over ini, as pytest-recording layers its configuration).
_OPTIONS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
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


class ConformanceHookspecs:
    """Hooks a conftest may implement to shape the conformance runs."""

    @pytest.hookspec(firstresult=True)
    def pytest_conformance_translate_hooks(self, config: pytest.Config) -> TranslateHooks | None:
        """TranslateHooks for the proxy's translate path (fault injection); the first non-None answer wins."""


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Register the plugin's own hook."""
    pluginmanager.add_hookspecs(ConformanceHookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    """The `conformance` option group and the ini keys mirroring it."""
    group = parser.getgroup("conformance", "LLM protocol conformance cases")
    for suffix, help_text, extras, ini_type in _OPTIONS:
        name = option_name(suffix)
        flag = "--" + name.replace("_", "-")
        group.addoption(flag, dest=name, default=None, help=help_text, **extras)
        parser.addini(name, f"{help_text} ({flag})", type=ini_type, default=False if ini_type == "bool" else "")  # type: ignore[arg-type]


def enabled(config: pytest.Config) -> bool:
    """Whether conformance items are collected: `--conformance`, else the `conformance` ini key."""
    cli = config.getoption("conformance")
    return bool(cli if cli is not None else config.getini("conformance"))


def pytest_configure(config: pytest.Config) -> None:
    """Register the per-provider markers (only when enabled: naming them needs the protocol registry)."""
    if enabled(config):
        from harness.runner.pytest_support import register_markers

        register_markers(config)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """Attach the `conformance` collector to the session, so its items go through normal collection
    (collection reports, `-m`/`-k` selection, `--lf`, xdist)."""
    report = yield
    if isinstance(collector, pytest.Session) and report.passed and enabled(collector.config):
        from harness.runner.pytest_support import ConformanceCollector

        # Its id is the bare `conformance` (not `::conformance` under the session root), like a file's.
        report.result.append(ConformanceCollector.from_parent(collector, name="conformance", nodeid="conformance"))
    return report


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """One line of verdict counts after a run that ran conformance cases."""
    state = config.stash.get(STATE_KEY, None)
    if state is not None and state.results:
        terminalreporter.write_line(state.summary_line())


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the shared environment (proxy, event loop, server) if one was built."""
    state = config.stash.get(STATE_KEY, None)
    if state is not None:
        state.close()


@pytest.fixture(scope="session")
def conformance_case(request: pytest.FixtureRequest) -> Callable[[str], CaseResult]:
    """Run one case of the configured matrix by id (`text-basic[openai->anthropic,stream]`) and return its
    CaseResult; runs are shared with the session's conformance items."""
    from harness.runner.pytest_support import state_of

    return state_of(request.config).result_for
