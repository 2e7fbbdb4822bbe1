"""Planning a matrix run: which cases there are (frontends x backends x scenarios x streaming, in a deterministic
order), which of them cannot run (the capability a party lacks, named), and the distinct runs the others need
(baselines shared between cases).

`plan(options)` is a function of the options alone (it reads the scenario files and the cassette folder names):
whoever plans the same options gets the same `Plan`, so a selftest, a pytest session or a worker process can plan
for themselves and agree with `conformance run`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.drivers.chain import can_chain
from harness.ir import Capability
from harness.protocols import registry
from harness.proxy import TranslateHooks
from harness.record import Rechunk
from harness.rig.clients import CLIENT_TIMEOUT_S
from harness.rig.sut_client import SutClient
from harness.runner import names
from harness.scenarios.layers import Layers
from harness.scenarios.loader import load_scenarios, select
from harness.scenarios.model import Scenario
from harness.trace import Case, Run, RunRole, Transport, matrix_order, stream_mode


@dataclass
class MatrixOptions:
    """What to run and how."""

    scenarios: Path | Layers = Path("scenarios")
    """A scenario folder, or layers of them (`harness.scenarios.layers`)."""
    cassettes: Path = Path("cassettes")
    reports: Path = Path("reports")
    frontends: Sequence[str] | None = None
    backends: Sequence[str] | None = None
    only: Sequence[str] | None = None
    streams: Sequence[bool] = (True, False)
    transports: Sequence[Transport] = ("http",)
    """`http`, and `ws`: the streamed cases again over the WebSocket mode of the frontends that have one
    (`conformance run` asks for both unless `--transport` says otherwise)."""
    jobs: int = 1
    socket: bool = False
    rechunk: Rechunk | None = None
    pace: float = 0.0
    """Seconds between the streamed chunks the replay server sends an external proxy (`--pace`; 0: back to back)."""
    known: Path = Path("conformance-known.toml")
    run_id: str | None = None
    hooks: TranslateHooks | None = None
    sut: str | None = None
    """URL of a proxy in another process for the translated runs (baselines stay on the built-in pass-through)."""
    replay_host: str = "127.0.0.1"
    """Interface of the replay server an external proxy's upstreams point at (`sut` only)."""
    replay_port: int = 8790
    """Port of that replay server (0: any free port, for tests that read it back)."""
    sut_client: SutClient | None = None
    """The client key and extra headers the SDKs send to the external proxy (`sut` only)."""
    upstream_models: Mapping[str, str] | None = None
    """Upstream model per backend, overriding its realistic default (`upstream_model` fact)."""
    timeout: float = CLIENT_TIMEOUT_S
    """Seconds an SDK client waits for an answer (connect, and between bytes) before the run is a harness error."""
    strict: bool = False
    """Wire deviations fail the gate too (exit 1), not only warn."""
    write_traces: bool = True
    keep_traces: str = "failing"
    """Which cases keep their whole trace: `failing` (those that need triage; a clean pass or an unsupported case is
    kept slim, `harness.trace.slim`) or `all`."""
    validate_traces: bool = False
    """Check every case trace against the JSON Schema too (slow: 10-1000 ms a case), besides the trace models'
    own strict check that every trace gets."""
    shard: tuple[int, int] | None = None
    """(K, N): run only shard K of N of the matrix (`harness.runner.units.shard`)."""
    steady: bool = False
    """Leave out what differs between two runs on the same bytes (timings, the proxy's trace ids, the run's
    duration), so that reports compare byte for byte."""
    stall_timeout: float = 300.0
    """Seconds a worker process may go without finishing a run before it is taken for hung and replaced."""
    on_progress: Callable[[str], None] | None = None
    rerun: Sequence[str] = ()
    """The command-line options that shape every case, for the reports' rerun commands."""


def default_frontends() -> list[str]:
    """Protocols the proxy serves as a frontend that have an SDK driver of their own (their facts say both)."""
    return [
        name
        for name in registry.names()
        if registry.facts(name).frontend is not None and registry.facts(name).sdk is not None
    ]


def default_backends(cassettes: Path) -> list[str]:
    """Backends that have recordings."""
    if not cassettes.is_dir():
        return []
    return sorted(p.name for p in cassettes.iterdir() if p.is_dir() and p.name in registry.names())


def capabilities(case: Case) -> dict[str, frozenset[Capability]]:
    """What each party of a case can do."""
    return dict(_parties(case.frontend, case.backend, case.transport))


def has_websocket(frontend: str) -> bool:
    """Whether the frontend has a WebSocket mode (its facts) that its SDK can speak (its SDK facts)."""
    facts = registry.facts(frontend).frontend
    return facts is not None and facts.websocket is not None and bool(registry.sdk(frontend).socket_capabilities)


@functools.cache  # the same few dozen (frontend, backend) pairs for every scenario of the matrix
def _parties(
    frontend: str, backend: str, transport: Transport = "http"
) -> tuple[tuple[str, frozenset[Capability]], ...]:
    """Each party of a case and what it can do, from the protocols' facts alone (no SDK is imported to plan)."""
    backend_client = registry.get(backend).family
    client = registry.sdk(frontend)
    if transport == "ws" and client.socket_capabilities:
        sdk = (f"{frontend} SDK over WebSocket", client.socket_capabilities)
    else:
        sdk = (f"{frontend} SDK", client.capabilities)
    return (
        sdk,
        (f"{frontend} frontend", frozenset(registry.get(frontend).capabilities)),
        (f"{backend} backend", frozenset(registry.get(backend).capabilities)),
        (f"{backend_client} SDK", registry.sdk(backend_client).capabilities),
    )


def missing_capabilities(scenario: Scenario, parties: Mapping[str, frozenset[Capability]]) -> str | None:
    """Which party lacks which required capability, in words; None when all have everything."""
    gaps = [
        f"{name} lacks {', '.join(sorted(set(scenario.requires) - caps))}"
        for name, caps in parties.items()
        if set(scenario.requires) - caps
    ]
    return "; ".join(gaps) or None


def streaming_gap(case: Case) -> str | None:
    """Which party has no form for a non-streamed case (its only answer is a stream), in words; None: no gap."""
    if case.stream:
        return None
    only = [name for name in dict.fromkeys((case.frontend, case.backend)) if registry.facts(name).stream_only]
    return "; ".join(f"{name} has no non-streamed form (its only answer is a stream)" for name in only) or None


def case_gap(scenario: Scenario, case: Case, *, builtin: bool = True) -> str | None:
    """Why a case cannot run, in words (a party lacks a capability, a streaming mode, what a WebSocket-mode turn
    cannot say, or the built-in proxy refuses a stored-response chain); None: it can. `builtin`: the system under
    test is the built-in proxy."""
    gaps = missing_capabilities(scenario, capabilities(case)) or streaming_gap(case)
    return gaps or (chain_gap(scenario, case) if builtin else None)


def chain_gap(scenario: Scenario, case: Case) -> str | None:
    """Why the built-in proxy cannot serve a case's stored-response chain: over HTTP it keeps no state, so it
    refuses a continuation before an upstream that does not keep it either (README, "the proxy";
    docs/responses.md). None: no chain, or an upstream that stores responses itself."""
    if not scenario.steps or scenario.compact or registry.facts(case.backend).stored_responses is not None:
        return None  # compaction needs no state: the built-in proxy answers it and expands its items
    return (
        f"the built-in proxy keeps no server state over HTTP: it refuses a {case.frontend} continuation "
        f"(previous_response_id) before the {case.backend} backend, which keeps none either (README, the proxy)"
    )


def runs_of(case: Case) -> dict[RunRole, Run]:
    """The case's three runs by role (its backend's baseline is driven by the backend family's SDK)."""
    return case.runs(registry.get(case.backend).family)


def wanted_runs(cases: Iterable[Case]) -> dict[Run, str]:
    """Every distinct run these cases need (baselines shared), in case order, with the id of the first case that
    needs it."""
    wanted: dict[Run, str] = {}
    for case in cases:
        for run in runs_of(case).values():
            wanted.setdefault(run, case.case_id)
    return wanted


def expand(
    scenarios: Sequence[Scenario],
    frontends: Iterable[str],
    backends: Iterable[str],
    *,
    streams: Iterable[bool] = (True, False),
    transports: Iterable[Transport] = ("http",),
) -> list[Case]:
    """Every case of the matrix, sorted by scenario (in the given order), frontend, backend, streaming (stream
    first), transport. A `ws` case is a streamed case of a frontend with a WebSocket mode (`has_websocket`)."""
    modes, ways = set(streams), set(transports)
    cases = [
        Case(s.id, f, b, st)
        for s in scenarios
        for f in frontends
        for b in backends
        for st in (True, False)
        if "http" in ways and st in modes and stream_mode(st) in s.streaming and (not s.steps or can_chain(f))
    ]
    if "ws" in ways and True in modes:
        sockets = [f for f in frontends if has_websocket(f)]
        cases += [
            Case(s.id, f, b, True, "ws")
            for s in scenarios
            if "stream" in s.streaming and not s.steps  # a chain's calls go over HTTP (drivers/chain.py)
            for f in sockets
            for b in backends
        ]
    return sorted(cases, key=matrix_order([s.id for s in scenarios]))


@dataclass(frozen=True)
class Plan:
    """A planned matrix: its axes, its cases in order, why some cannot run, and the runs the others need."""

    scenarios: tuple[Scenario, ...]
    """The scenarios, in file order."""
    frontends: tuple[str, ...]
    """Frontend protocols."""
    backends: tuple[str, ...]
    """Backend protocols and profiles."""
    cases: tuple[Case, ...]
    """Every case, in report order."""
    gaps: Mapping[Case, str | None]
    """Each case's missing capability in words (None: it can run)."""
    runs: Mapping[Run, str]
    """Every distinct run the runnable cases need, in case order, with the first case that needs it."""

    def runnable(self, case: Case) -> bool:
        """Whether the case is in this matrix and can run."""
        return case in self.gaps and self.gaps[case] is None

    @property
    def run_backends(self) -> list[str]:
        """Every backend a run talks to: the matrix's and the frontends' own (their baselines), sorted."""
        return sorted({run.backend for run in self.runs} | set(self.backends))


def plan(options: MatrixOptions) -> Plan:
    """The plan of the matrix these options describe; unknown scenario or protocol names fail here, before
    anything runs."""
    scenarios = select(load_scenarios(options.scenarios), options.only, folder=options.scenarios)
    frontends = list(options.frontends or default_frontends())
    backends = list(options.backends or default_backends(options.cassettes))
    names.check(frontends, backends, default_frontends())
    cases = expand(scenarios, frontends, backends, streams=options.streams, transports=options.transports)
    by_id = {s.id: s for s in scenarios}
    gaps = {case: case_gap(by_id[case.scenario], case, builtin=options.sut is None) for case in cases}
    runs = wanted_runs(case for case in cases if gaps[case] is None)
    return Plan(tuple(scenarios), tuple(frontends), tuple(backends), tuple(cases), gaps, runs)
