"""The engine side of the pytest plugin: settings (CLI over ini), the session state that runs cases through one
shared CaseRunner, the `conformance` collector and one item per case. Imported only when the plugin is enabled
(or its fixture is used), so loading the plugin stays light."""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.protocols import registry
from harness.protocols.registry import UnknownProtocolError
from harness.pytest_plugin.options import RECORD_MODES, STATE_KEY, STREAMING, option_name
from harness.pytest_plugin.rerun import rerun_lines
from harness.rig.clients import CLIENT_TIMEOUT_S
from harness.rig.routes import parse_model_overrides
from harness.rig.sut import wait_until_up
from harness.rig.sut_client import SutClient, SutClientError, load_headers, parse_header, parse_unversioned
from harness.runner.engine import CaseRunner, Engine
from harness.runner.known import Known, KnownFileError, load_known, matches
from harness.runner.plan import MatrixOptions, default_frontends
from harness.scenarios.layers import Layers, cassette_view, scenario_sources
from harness.scenarios.loader import ScenarioError
from harness.trace import Case, CaseResult, DivergenceJSON, Verdict

STREAMS = {"both": (True, False), "stream": (True,), "nonstream": (False,)}
CONFIG_ERRORS = (ScenarioError, KnownFileError, UnknownProtocolError, ValueError, pytest.UsageError)
"""What a wrong setting raises; reported as a collection error in one line, without a traceback."""
SUT_OPTIONS = (
    "wait-for-sut",
    "client-key-env",
    "client-key",
    "sut-header",
    "sut-headers",
    "sut-unversioned",
    "replay-host",
    "replay-port",
)
"""Options that only mean something with `sut` (as `conformance run` refuses them without --sut)."""
VALUE_LIMIT = 300
"""Characters of a diverging value shown in a failure message (the trace holds the whole value)."""


def marker_name(kind: str, protocol: str) -> str:
    """`conformance_backend_gemini`: the marker of one party (names made valid for `-m` expressions)."""
    return f"conformance_{kind}_{protocol.replace('-', '_').replace('.', '_')}"


def register_markers(config: pytest.Config) -> None:
    """Register every marker the items may carry, so `--strict-markers` accepts them: a frontend marker for each
    protocol that can be a frontend (a backend-only profile cannot), a backend marker for each protocol."""
    lines = ["conformance: a conformance case collected by the harness plugin"]
    lines += [f"conformance_{m}: a {m} conformance case" for m in ("stream", "nonstream")]
    lines.append("xdist_group(name): pytest-xdist's group (`--dist loadgroup` keeps a group on one worker)")
    for name in default_frontends():
        lines.append(f"{marker_name('frontend', name)}: conformance case whose SDK and proxy frontend speak {name}")
    for name in registry.names():
        lines.append(f"{marker_name('backend', name)}: conformance case whose backend is {name}")
    for line in lines:
        config.addinivalue_line("markers", line)


def _layered(config: pytest.Config, suffix: str) -> tuple[Any, Path]:
    """An option's value and the folder relative paths in it start from: the command line's (relative to the
    invocation folder) over the ini file's (relative to the ini file)."""
    name = option_name(suffix)
    cli = config.getoption(name)
    if cli is not None:
        return cli, config.invocation_params.dir
    base = config.inipath.parent if config.inipath else config.rootpath
    return config.getini(name), base


def _names(config: pytest.Config, suffix: str) -> list[str] | None:
    value, _ = _layered(config, suffix)
    text = ",".join(value) if isinstance(value, list) else str(value)
    names = [n.strip() for n in text.split(",") if n.strip()]
    return names or None


def _paths(config: pytest.Config, suffix: str) -> list[Path]:
    """A repeatable folder option: the command line's folders, else the ini file's (whitespace-separated)."""
    value, base = _layered(config, suffix)
    items = value.split() if isinstance(value, str) else list(value or ())
    return [base / str(item) for item in items]


def _strings(config: pytest.Config, suffix: str) -> list[str]:
    value, _ = _layered(config, suffix)
    return [str(v).strip() for v in (value if isinstance(value, list) else str(value or "").splitlines()) if v]


def _number(config: pytest.Config, suffix: str, default: float | None) -> float | None:
    value, _ = _layered(config, suffix)
    if value in (None, ""):
        return default
    try:
        return float(value)
    except ValueError:
        raise pytest.UsageError(f"{option_name(suffix)} = {value!r}: not a number") from None


def _text(config: pytest.Config, suffix: str) -> str | None:
    value, _ = _layered(config, suffix)
    return str(value) if value else None


def _path(config: pytest.Config, suffix: str, default: str) -> Path:
    value, base = _layered(config, suffix)
    return base / str(value) if value else config.rootpath / default


def _optional_path(config: pytest.Config, suffix: str) -> Path | None:
    value, base = _layered(config, suffix)
    return base / str(value) if value else None


def _choice(config: pytest.Config, suffix: str, choices: tuple[str, ...], default: str) -> str:
    value, _ = _layered(config, suffix)
    value = str(value or default)
    if value not in choices:
        raise pytest.UsageError(f"{option_name(suffix)} = {value!r}: choose one of {', '.join(choices)}")
    return value


@dataclass(frozen=True)
class Settings:
    """The plugin's configuration, resolved once per session."""

    frontends: list[str] | None
    """Frontend protocols; None: every one with an SDK driver."""
    backends: list[str] | None
    """Backends; None: every folder of the cassettes."""
    only: list[str] | None
    """Scenario ids; None: all."""
    streaming: str
    """both, stream or nonstream."""
    record_mode: str
    """none (replay only) or the mode to record missing or stale cassettes in before the first case."""
    scenarios: Layers
    """Scenario folders (a team's over the packaged ones)."""
    cassettes: Layers
    """Cassette folders."""
    known: Path
    """Known-failures file (absent: none, unless it was named)."""
    known_named: bool
    """Whether the command line or ini file named the known-failures file (then it must exist)."""
    report: Path | None
    """Folder to write case traces to, if any."""
    socket: bool
    """Serve the proxy on a loopback socket instead of in-process."""
    sut: SutSettings | None = None
    """A proxy running elsewhere to gate instead of the built-in one."""

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        """Read the options, the command line over the ini file."""
        socket, _ = _layered(config, "socket")
        return cls(
            frontends=_names(config, "frontend"),
            backends=_names(config, "backend"),
            only=_names(config, "scenario"),
            streaming=_choice(config, "streaming", STREAMING, "both"),
            record_mode=_choice(config, "record-mode", RECORD_MODES, "none"),
            scenarios=_layers(config, "scenarios"),
            cassettes=_layers(config, "cassettes"),
            known=_path(config, "known", "conformance-known.toml"),
            known_named=_optional_path(config, "known") is not None,
            report=_optional_path(config, "report"),
            socket=bool(socket),
            sut=SutSettings.from_config(config),
        )

    def scenario_file(self, scenario_id: str) -> Path | None:
        """The file a scenario id comes from (the first layer holding it)."""
        return self._scenario_files.get(scenario_id)

    @functools.cached_property
    def _scenario_files(self) -> dict[str, Path]:
        return {s.id: s.path for s in scenario_sources(self.scenarios)}  # once: every item asks for its location


def _layers(config: pytest.Config, kind: str) -> Layers:
    packaged, _ = _layered(config, "no-packaged")
    given = _paths(config, kind)
    if packaged and not given:
        raise pytest.UsageError(f"conformance_no_packaged needs conformance_{kind}: the folders to read instead")
    return Layers.of(kind, given, with_packaged=not packaged)


@dataclass(frozen=True)
class SutSettings:
    """`--conformance-sut URL` and the options that mirror `conformance run --sut`'s."""

    url: str
    wait: float | None
    client: SutClient
    replay_host: str
    replay_port: int
    models: dict[str, str]
    timeout: float

    @classmethod
    def from_config(cls, config: pytest.Config) -> SutSettings | None:
        """None without `--conformance-sut` (then none of its options may be given)."""
        url = _text(config, "sut")
        given = [s for s in SUT_OPTIONS if _layered(config, s)[0]]
        if url is None:
            if given:
                raise pytest.UsageError(f"{option_name(given[0])} needs conformance_sut (--conformance-sut URL)")
            return None
        key = _text(config, "client-key")
        env = _text(config, "client-key-env")
        if env is not None:
            if key is not None:
                raise pytest.UsageError("conformance_client_key and conformance_client_key_env exclude each other")
            key = os.environ.get(env)
            if not key:
                raise pytest.UsageError(f"conformance_client_key_env {env}: the variable is not set")
        file = _optional_path(config, "sut-headers")
        try:
            headers = load_headers(file) if file is not None else ()
            headers += tuple(parse_header(h) for h in _strings(config, "sut-header"))
            unversioned_option = _text(config, "sut-unversioned")
            unversioned = parse_unversioned(unversioned_option) if unversioned_option else frozenset()
            models = parse_model_overrides(_strings(config, "upstream-model"))
        except (SutClientError, ValueError) as exc:
            raise pytest.UsageError(str(exc)) from None
        port = _number(config, "replay-port", 8790)
        timeout = _number(config, "timeout", CLIENT_TIMEOUT_S)
        wait = _number(config, "wait-for-sut", None)
        if timeout is None or timeout <= 0 or (wait is not None and wait <= 0):
            raise pytest.UsageError("conformance_timeout and conformance_wait_for_sut are positive seconds")
        return cls(
            url=url,
            wait=wait,
            client=SutClient(key=key, headers=headers, unversioned=unversioned),
            replay_host=_text(config, "replay-host") or "127.0.0.1",
            replay_port=int(port or 0),
            models=dict(models),
            timeout=timeout,
        )

    def run_options(self) -> dict[str, Any]:
        """The MatrixOptions fields of the external proxy."""
        return {
            "sut": self.url,
            "sut_client": self.client,
            "replay_host": self.replay_host,
            "replay_port": self.replay_port,
            "upstream_models": self.models or None,
            "timeout": self.timeout,
        }


class ConformanceState:
    """One session's conformance runs: the matrix (built on first use), the shared CaseRunner with its cached
    runs (baselines are shared between items, as in `conformance run`), and the results so far."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings = Settings.from_config(config)
        self.results: dict[str, CaseResult] = {}
        """Results of the cases run so far, by case id."""
        self._runner: Engine | None = None
        self._cases: CaseRunner | None = None
        self._known: dict[str, Known] | None = None
        self._recorded = False
        self.hooked = False
        """Whether a conftest's pytest_conformance_translate_hooks shapes the proxy (`conformance run` has none)."""

    @property
    def runner(self) -> Engine:
        """The matrix as `conformance run` would expand it from these settings."""
        if self._runner is None:
            s = self.settings
            hooks = self.config.hook.pytest_conformance_translate_hooks(config=self.config)
            self.hooked = hooks is not None
            sut = s.sut
            if s.record_mode != "none" and len(s.cassettes.folders) > 1:
                raise pytest.UsageError(
                    "conformance_record_mode records into one cassette folder: set conformance_no_packaged, or "
                    "record first (`conformance record --cassettes DIR`)"
                )
            if sut is not None and sut.wait is not None:
                problem = wait_until_up(sut.url, sut.wait)
                if problem:
                    raise pytest.UsageError(problem)
            options = MatrixOptions(
                scenarios=s.scenarios,
                cassettes=cassette_view(s.cassettes),
                frontends=s.frontends,
                backends=s.backends,
                only=s.only,
                streams=STREAMS[s.streaming],
                jobs=1,
                socket=s.socket,
                known=s.known,
                hooks=hooks,
                write_traces=False,
                **(sut.run_options() if sut is not None else {}),
            )
            self._runner = Engine(options)
        return self._runner

    @property
    def known(self) -> dict[str, Known]:
        """The known-failures file's entries by case id."""
        if self._known is None:
            self._known = load_known(self.settings.known, required=self.settings.known_named)
        return self._known

    def result(self, case: Case) -> CaseResult:
        """Run (what is not cached yet of) one case and judge it; the first call records per the record mode."""
        cached = self.results.get(case.case_id)
        if cached is not None:
            return cached
        if not self._recorded:
            if self.settings.record_mode != "none":
                from harness.runner.record_missing import record_missing

                # A failed recording fails this item and is tried again (and fails again) for the next ones.
                record_missing(self.runner, self.settings.record_mode)
            self._recorded = True
        if self._cases is None:
            self._cases = self.runner.case_runner()
        result = self._cases.run_case(case)
        entry = self.known.get(case.case_id)
        if entry is not None and matches(entry, result):  # a harness error, or a new bug on the case, is never known
            result = result.model_copy(update={"known": entry.reason})
        if self.settings.report is not None:
            from harness.trace.writer import write_case

            write_case(result, self.settings.report / "cases")
        self.results[case.case_id] = result
        return result

    def result_for(self, case_id: str) -> CaseResult:
        """The result of a case of the matrix given by id; LookupError names the matrix when it is not in it."""
        case = next((c for c in self.runner.cases if c.case_id == case_id), None)
        if case is None:
            raise LookupError(f"{case_id!r} is not a case of the configured matrix ({len(self.runner.cases)} cases)")
        return self.result(case)

    def summary_line(self) -> str:
        """`conformance: 12 cases: 10 pass, 2 unsupported`."""
        counts: dict[str, int] = {}
        for result in self.results.values():
            counts[result.verdict] = counts.get(result.verdict, 0) + 1
        parts = ", ".join(f"{counts[v]} {v}" for v in Verdict if v in counts)
        return f"conformance: {len(self.results)} cases: {parts}"

    def close(self) -> None:
        """Stop the shared environment, if one was built."""
        if self._cases is not None:
            self._cases.close()
            self._cases = None


def state_of(config: pytest.Config) -> ConformanceState:
    """The session's conformance state, created on first use."""
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        state = config.stash[STATE_KEY] = ConformanceState(config)
    return state


class ProxyBug(Exception):
    """A case whose verdict fails the gate (a proxy bug, or a harness error: nothing judged); carries the result
    for the failure message."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(f"{result.verdict}: {result.reason}")
        self.result = result


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= VALUE_LIMIT else text[:VALUE_LIMIT] + f"... ({len(text)} chars)"


def _run_line(result: CaseResult) -> str:
    parts = []
    for role, run in result.runs.items():
        failed = [c.name for c in run.checks if not c.passed] + run.grammar
        detail = f" ({', '.join(failed)})" if failed else ""
        error = f" ({run.error})" if run.error else ""
        parts.append(f"{role} {run.status}{detail}{error}")
    return "runs: " + "; ".join(parts)


def describe_failure(result: CaseResult, rerun: list[str]) -> str:
    """The failure message of a proxy bug or harness error: verdict, reason, the first divergence with both values,
    the runs, and the commands that rerun the case."""
    lines = [f"{result.verdict}: {result.reason}"]
    if result.verdict.is_harness_error:
        lines.append("nothing was judged (a harness or setup failure): `conformance run` exits 2 on it")
    first: DivergenceJSON | None = result.first_divergence
    if first is not None:
        request_side = result.verdict == Verdict.PROXY_BUG_REQUEST
        left, right = ("client request", "upstream request") if request_side else ("baseline", "translated")
        where = f" (stream event {first.event_index})" if first.event_index is not None else ""
        lines += [
            f"first divergence at {first.path}{where}{': ' + first.change if first.change else ''}",
            f"  {left + ':':<18}{_value(first.left)}",
            f"  {right + ':':<18}{_value(first.right)}",
        ]
    lines.append(_run_line(result))
    lines += rerun
    if result.known:
        lines.append(f"known-failures entry (other verdict): {result.known}")
    return "\n".join(lines)


def _skip(reason: str) -> BaseException:
    # `pytest.skip()` would report this module's line as the skip location; the item's location (the scenario
    # file) is what a reader needs, and the skip exception's item-location flag (as skip markers use) gives it.
    return pytest.skip.Exception(reason, _use_item_location=True)


class ConformanceItem(pytest.Item):
    """One case: its three runs (baselines shared across items) and the verdict as the test outcome."""

    def __init__(self, *, case: Case, state: ConformanceState, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.state = state
        self.add_marker("conformance")
        self.add_marker("conformance_stream" if case.stream else "conformance_nonstream")
        self.add_marker(marker_name("frontend", case.frontend))
        self.add_marker(marker_name("backend", case.backend))
        # The cases of one scenario and streaming mode share their baselines (`harness.runner.units`): under
        # `pytest -n N --dist loadgroup` they go to one worker, which runs each baseline once.
        self.add_marker(pytest.mark.xdist_group(f"{case.scenario}-{'stream' if case.stream else 'nonstream'}"))

    def runtest(self) -> None:
        """Pass; skip when unsupported or when the fault is not the proxy's; xfail a known proxy bug; else fail (a
        harness error always fails)."""
        result = self.state.result(self.case)
        # Plain strings: xdist sends reports between processes with execnet, which serializes no enum.
        self.user_properties += [("verdict", result.verdict.value), ("reason", result.reason)]
        verdict = result.verdict
        if verdict is Verdict.PASS:
            return
        if verdict is Verdict.UNSUPPORTED:
            raise _skip(result.reason)
        if verdict.is_harness_error:
            raise ProxyBug(result)  # never skipped or xfailed: the case could not be judged
        if verdict in (Verdict.BACKEND_ISSUE, Verdict.BASELINE_ISSUE):
            # Not the proxy's fault, and not a gate failure in `conformance run` either.
            raise _skip(f"{verdict}: {result.reason}")
        entry = self.state.known.get(self.case.case_id)
        if entry is not None and matches(entry, result):
            pytest.xfail(f"known {verdict}: {entry.reason}")
        raise ProxyBug(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """The verdict, reason and first divergence for a proxy bug; pytest's usual report otherwise."""
        if isinstance(excinfo.value, ProxyBug):
            rerun = rerun_lines(self.config, self.state.settings, self.case, hooks=self.state.hooked)
            return describe_failure(excinfo.value.result, rerun)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        """Point at the scenario file (when it is named after the scenario id)."""
        scenario = self.state.settings.scenario_file(self.case.scenario)
        return (scenario or self.state.settings.scenarios.top), 0, self.name


class ConformanceCollector(pytest.Collector):
    """The `conformance` node under the session: the configured matrix, one item per case, in matrix order."""

    def collect(self) -> list[pytest.Item]:
        """Expand the matrix (a wrong setting becomes a collection error naming it)."""
        state = state_of(self.config)
        state.known  # noqa: B018 -- a malformed known-failures file is a collection error, not 1764 failures
        if state.settings.record_mode != "none" and hasattr(self.config, "workerinput"):
            # xdist workers would record the same cassettes at once; recording is a one-process job.
            raise pytest.UsageError("conformance_record_mode other than none cannot run under xdist (-n): drop -n")
        # Ids read like a parametrized test's, `conformance::<scenario>[<frontend>-><backend>,<stream>]`, so that a
        # stored id (--lf, xdist, junit) parses back to the same node id.
        return [
            ConformanceItem.from_parent(
                self, name=case.case_id, nodeid=f"{self.nodeid}::{case.case_id}", case=case, state=state
            )
            for case in state.runner.cases
        ]

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        """A configuration error in one line."""
        if isinstance(excinfo.value, CONFIG_ERRORS):
            return f"conformance: {excinfo.value}"
        return super().repr_failure(excinfo)
