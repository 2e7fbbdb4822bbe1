"""pytest plugin (`pytest11` entry point `conformance`): one test item per conformance case.

Inert unless enabled: it only registers its options, ini keys, a hook and a fixture. Everything heavy (the
runner, the SDKs, vcrpy) is imported by `harness.pytest_plugin.items` once `--conformance` (or the
`conformance` ini key) is on, or when the `conformance_case` fixture is used. Both import the option table from
`harness.pytest_plugin.options`, so neither imports the other at load.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import pytest

from harness.pytest_plugin.options import OPTIONS, STATE_KEY, option_name

if TYPE_CHECKING:
    from harness.proxy import TranslateHooks
    from harness.trace.model import CaseResult


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
    for suffix, help_text, extras, ini_type in OPTIONS:
        name = option_name(suffix)
        flag = "--" + name.replace("_", "-")
        group.addoption(flag, dest=name, default=None, help=help_text, **extras)
        default: Any = {"bool": False, "args": [], "linelist": []}.get(ini_type, "")
        parser.addini(name, f"{help_text} ({flag})", type=ini_type, default=default)  # type: ignore[arg-type]


def enabled(config: pytest.Config) -> bool:
    """Whether conformance items are collected: `--conformance`, else the `conformance` ini key."""
    cli = config.getoption("conformance")
    return bool(cli if cli is not None else config.getini("conformance"))


def pytest_configure(config: pytest.Config) -> None:
    """Register the per-provider markers (only when enabled: naming them needs the protocol registry)."""
    if enabled(config):
        from harness.pytest_plugin.items import register_markers

        register_markers(config)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """Attach the `conformance` collector to the session, so its items go through normal collection
    (collection reports, `-m`/`-k` selection, `--lf`, xdist)."""
    report = yield
    if isinstance(collector, pytest.Session) and report.passed and enabled(collector.config):
        from harness.pytest_plugin.items import ConformanceCollector

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
    from harness.pytest_plugin.items import state_of

    return state_of(request.config).result_for
