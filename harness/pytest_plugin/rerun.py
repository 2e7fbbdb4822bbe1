"""The commands a failure message offers to rerun exactly one case: the pytest command that selects it alone
(with this session's paths, conftest hooks and known-failures file), and, when no conftest hook shapes the
proxy, the `conformance run` command that reruns it for the HTML report."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harness.pytest_plugin.options import option_name
from harness.trace import Case, stream_mode

if TYPE_CHECKING:
    from harness.pytest_plugin.items import Settings

CARRIED: tuple[str, ...] = ("scenarios", "cassettes", "no-packaged", "known", "socket")
CARRIED += (
    "sut",
    "client-key-env",
    "sut-headers",
    "sut-unversioned",
    "replay-host",
    "replay-port",
    "upstream-model",
    "timeout",
)
"""Options of the session that change a case's outcome, carried over when they were given on the command line
(the ini file applies to the rerun by itself)."""
PLUGIN_MODULE = "harness.pytest_plugin"


def _flag(suffix: str) -> str:
    return "--" + option_name(suffix).replace("_", "-")


def pytest_command(config: pytest.Config, case: Case) -> str:
    """`pytest [paths] -m conformance --conformance ... --conformance-scenario=S ...`: this session's collection
    narrowed to the one case (`-m conformance` leaves out every other test)."""
    args = ["pytest"]
    if config.pluginmanager.has_plugin(PLUGIN_MODULE):  # named with -p (a source checkout), not an entry point
        args += ["-p", PLUGIN_MODULE]
    if config.args_source is pytest.Config.ArgsSource.ARGS:
        args += [str(a) for a in config.args]
    args += ["-m", "conformance", _flag("")]
    for suffix in CARRIED:
        value = config.getoption(option_name(suffix))
        if value is True:
            args.append(_flag(suffix))
        elif isinstance(value, list):  # a repeatable option, once per value
            args += [f"{_flag(suffix)}={v}" for v in value]
        elif value:
            args.append(f"{_flag(suffix)}={value}")
    args += [
        f"{_flag('scenario')}={case.scenario}",
        f"{_flag('frontend')}={case.frontend}",
        f"{_flag('backend')}={case.backend}",
        f"{_flag('streaming')}={stream_mode(case.stream)}",
    ]
    return shlex.join(args)


def _shown(path: Path, cwd: Path) -> str:
    """A path as a command line in `cwd` takes it: relative when it lies below, else absolute."""
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(cwd.resolve()))
    except ValueError:
        return str(resolved)


def run_command(settings: Settings, case: Case, cwd: Path) -> str:
    """`conformance run --scenario S --frontend F --backend B --streaming M` with the session's folders, socket
    mode and known-failures file: the same case through the same proxy, with the HTML report."""
    args = ["conformance", "run", "--scenario", case.scenario, "--frontend", case.frontend]
    args += ["--backend", case.backend, "--streaming", stream_mode(case.stream)]
    for flag, layers in (("--scenarios", settings.scenarios), ("--cassettes", settings.cassettes)):
        for path in layers.given if not layers.with_packaged else layers.added():
            args += [flag, _shown(path, cwd)]
    if not settings.scenarios.with_packaged:
        args.append("--no-packaged")
    if settings.sut is not None:  # the same proxy; key and header values stay out (they may be secrets)
        args += ["--sut", settings.sut.url]
        if (settings.sut.replay_host, settings.sut.replay_port) != ("127.0.0.1", 8790):
            args += ["--replay-host", settings.sut.replay_host, "--replay-port", str(settings.sut.replay_port)]
    if settings.known.is_file() and _shown(settings.known, cwd) != "conformance-known.toml":
        args += ["--known", _shown(settings.known, cwd)]
    if settings.socket:
        args.append("--socket")
    return shlex.join(args)


def rerun_lines(config: pytest.Config, settings: Settings, case: Case, *, hooks: bool) -> list[str]:
    """The rerun lines of a failure message (run from the folder pytest was started in)."""
    lines = [f"rerun this case: {pytest_command(config, case)}"]
    if hooks:
        lines.append("(`conformance run` cannot apply this session's pytest_conformance_translate_hooks)")
    else:
        lines.append(f"rerun for the HTML report: {run_command(settings, case, config.invocation_params.dir)}")
    return lines
