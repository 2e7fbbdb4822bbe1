"""The fuzz loop: hypothesis draws scenarios for one (frontend, backend) pair, each example gets the matrix's three
runs against the reference backends (recorded on the fly, no committed cassette needed) and the same judge, and a
failure is shrunk to its smallest form.

An example fails when its case is a proxy bug or a harness error; backend and baseline issues are the reference
backends' business and are only counted. The last failing example hypothesis replays is the shrunk one.
"""

from __future__ import annotations

import functools
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import HypothesisException

from harness.proxy import TranslateHooks
from harness.record import RecordMode, record_one, reference_source
from harness.rig.environment import Environment
from harness.rig.sut_client import SutClient, scoped_to
from harness.runner.engine import CaseRunner
from harness.runner.known import Known, signature
from harness.runner.plan import MatrixOptions, capabilities, runs_of, streaming_gap
from harness.scenarios.model import Scenario
from harness.trace import Case, CaseResult, Verdict

from .strategies import FUZZ_ID, Space, scenarios

FAILING = frozenset({Verdict.PROXY_BUG_REQUEST, Verdict.PROXY_BUG_RESPONSE, Verdict.HARNESS_ERROR})
"""Verdicts that make an example fail: what the gate would fail on."""


class ExampleFailed(AssertionError):
    """Raised inside the property so that hypothesis shrinks the example."""


@dataclass(frozen=True)
class FuzzOptions:
    """One fuzz session: the pair, the streaming mode, the budget and the proxy it judges."""

    frontend: str
    backend: str
    stream: bool
    max_examples: int = 100
    seed: int | None = None
    database: Path | None = None
    """Hypothesis's example database: earlier failures are replayed first (None: no database)."""
    hooks: TranslateHooks | None = None
    """Faults switched on in the built-in proxy's translate path."""
    timeout: float = 30.0
    """Seconds an SDK client waits between bytes."""
    stop_at: float | None = None
    """`time.monotonic()` after which no further example is run (the session's wall-clock budget)."""
    sut: str | None = None
    """An external proxy to fuzz instead of the built-in one: a gateway configured with `conformance sut-config`'s
    output, its upstreams at the replay server on `replay_host:replay_port`."""
    replay_host: str = "127.0.0.1"
    replay_port: int = 8790
    sut_client: SutClient | None = None
    """The client key and extra headers the SDKs send to `sut`."""
    known: tuple[Known, ...] = ()
    """Accepted bugs of the pair and mode (a gateway's known-failures entries, `known_for`): an example failing
    only as they do is counted `known` and explored past (`is_known`)."""
    shrink: bool = True
    """Whether a failing example is shrunk to the least that still fails (False: the first one drawn is the finding,
    larger but found sooner, for a slow gateway or a CI budget)."""
    route: str = "text-basic"
    """With `sut`: the scenario id the examples run under, so that they travel a route the gateway already has
    (`<route>--<backend>--translate`, upstream `<replay>/<backend>/_s/<route>`)."""

    @property
    def case(self) -> Case:
        """The case every example of the session runs as."""
        return Case(self.route if self.sut else FUZZ_ID, self.frontend, self.backend, self.stream)


@dataclass
class Finding:
    """The shrunk failing example and its verdict."""

    scenario: Scenario
    result: CaseResult


@dataclass
class FuzzResult:
    """What a session saw: verdict counts over every example run, and the shrunk failure, if any."""

    verdicts: Counter[str] = field(default_factory=Counter)
    examples: int = 0
    finding: Finding | None = None


def space_of(frontend: str, backend: str, stream: bool) -> Space:
    """The capabilities every party of the pair has (the SDKs, the frontend and the backend protocols), and
    whether its runs carry lone surrogates."""
    parties = capabilities(Case(FUZZ_ID, frontend, backend, stream)).values()
    common = frozenset.intersection(*parties)
    return Space(capabilities=common, stream=stream, lone_surrogates=carries_lone_surrogates(frontend, backend, stream))


SURROGATE_PROBE = Scenario.model_validate(
    {
        "id": FUZZ_ID,
        "description": "Probe: does every run of the pair carry a lone surrogate in the reply text?",
        "request": {"messages": [{"role": "user", "content": [{"kind": "text", "text": "Say it."}]}]},
        "reply": {"kind": "ok", "content": [{"kind": "text", "text": "a\ud800b"}], "usage": {"input_tokens": 3}},
        "expect": {"text_equals": "a\ud800b"},
    }
)
"""Reply text holding a lone surrogate, judged on the clean built-in proxy before any example draws one."""


@functools.cache
def carries_lone_surrogates(frontend: str, backend: str, stream: bool) -> bool:
    """Whether a lone surrogate in the reply passes the pair's three runs on the clean built-in proxy (the reference
    backends write it as a JSON escape, every SDK reads it back, the judge compares it). A pair that cannot carry
    one never draws one: a failure there would be the harness's, not the proxy's."""
    case = Case(FUZZ_ID, frontend, backend, stream)
    scenario = SURROGATE_PROBE.model_copy(update={"streaming": ["stream" if stream else "nonstream"]})
    with _workdir() as work:
        try:
            return judge_example(scenario, case, work, FuzzOptions(frontend, backend, stream)).verdict == Verdict.PASS
        except (UnicodeError, ValueError):  # an encoder on the way has no form for it (UTF-8 without escapes)
            return False


def check_pair(frontend: str, backend: str, stream: bool) -> str | None:
    """Why the pair cannot be fuzzed in this mode (a party has no form for it), None when it can."""
    return streaming_gap(Case(FUZZ_ID, frontend, backend, stream))


def backends_of(case: Case) -> list[str]:
    """Every backend the case's three runs talk to (the frontend's own, for its baseline, and the backend)."""
    return sorted({run.backend for run in runs_of(case).values()})


def record(scenario: Scenario, case: Case, root: Path) -> None:
    """The reference backends' answers to `scenario` for every backend of the case, in its streaming mode."""
    source = reference_source([scenario])
    for backend in backends_of(case):
        record_one(
            backend, scenario, case.stream, scenarios=[scenario], root=root, source=source, mode=RecordMode.REWRITE
        )


def _run_options(options: FuzzOptions, work: Path) -> MatrixOptions:
    return MatrixOptions(
        scenarios=work,
        cassettes=work,
        hooks=options.hooks,
        write_traces=False,
        timeout=options.timeout,
        sut=options.sut,
        replay_host=options.replay_host,
        replay_port=options.replay_port,
        sut_client=scoped_to(options.sut_client, backends_of(options.case)),
    )


def judge_example(scenario: Scenario, case: Case, work: Path, options: FuzzOptions) -> CaseResult:
    """The case's verdict for one example: its cassettes recorded into `work`, its three runs, the judge."""
    record(scenario, case, work)
    runner = CaseRunner(_run_options(options, work), [scenario], backends_of(case))
    try:
        return runner.run_case(case)
    finally:
        runner.close()


class _OnShared(CaseRunner):
    """A case runner on the session's environment (one replay server for every example), which it leaves open."""

    def __init__(self, options: MatrixOptions, scenario: Scenario, backends: list[str], env: Environment) -> None:
        super().__init__(options, [scenario], backends)
        self._shared = env

    def _build(self) -> Environment:
        return self._shared

    def close(self) -> None:
        self._env = None  # the session closes it
        super().close()


class Session:
    """One environment for the whole session (the built-in proxy and the replayed backends, and with `sut` the
    replay server the gateway's routes point at), which answers each example with that example's scripted reply,
    recorded just before it runs: no proxy or server is built per example."""

    def __init__(self, options: FuzzOptions, work: Path) -> None:
        self.options, self.work, self.case = options, work, options.case
        self.run_options = _run_options(options, work)
        self.backends = backends_of(self.case)
        # The routes are built for the session's id once; each example then takes the placeholder's place.
        placeholder = SURROGATE_PROBE.model_copy(update={"id": self.case.scenario})
        self.host = CaseRunner(self.run_options, [placeholder], self.backends)
        self.env = self.host.env  # SetupError: the replay port cannot be bound, or the gateway does not answer

    def judge(self, scenario: Scenario) -> CaseResult:
        """Record the example under the session's id, serve it, run and judge the case."""
        scenario = scenario.model_copy(update={"id": self.case.scenario})
        record(scenario, self.case, self.work)
        self.env.retarget([scenario])
        runner = _OnShared(self.run_options, scenario, self.backends, self.env)
        try:
            return runner.run_case(self.case)
        finally:
            runner.close()

    def close(self) -> None:
        """Stop the environment (and the replay server)."""
        self.host.close()


@contextmanager
def _workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="conformance-fuzz-") as tmp:
        yield Path(tmp)


@contextmanager
def _judge(options: FuzzOptions, work: Path) -> Iterator[Callable[[Scenario], CaseResult]]:
    """How each example is judged: on the built-in proxy in-process, or through the external one."""
    session = Session(options, work)
    try:
        yield session.judge
    finally:
        session.close()


def fuzz(options: FuzzOptions, on_example: Callable[[CaseResult], None] | None = None) -> FuzzResult:
    """Run the session; the result holds the shrunk failure, if one was found."""
    case = options.case
    space = space_of(options.frontend, options.backend, options.stream)
    outcome = FuzzResult()
    failing: list[tuple[Scenario, CaseResult]] = []
    with _workdir() as work, _judge(options, work) as judge_one:

        def prop(scenario: Scenario) -> None:
            if options.stop_at is not None and time.monotonic() > options.stop_at and not failing:
                reject()  # out of time: hypothesis winds down without running more examples
            result = judge_one(scenario)
            known = result.verdict in FAILING and is_known(result, options.known)
            outcome.examples += 1
            outcome.verdicts["known" if known else str(result.verdict)] += 1
            if on_example is not None:
                on_example(result)
            if result.verdict in FAILING and not known:
                failing.append((scenario, result))
                raise ExampleFailed(f"{result.verdict}: {result.reason}")

        database = DirectoryBasedExampleDatabase(str(options.database)) if options.database else None
        test = given(scenarios(space))(prop)
        test = settings(
            max_examples=options.max_examples,
            database=database,
            deadline=None,
            derandomize=False,
            phases=tuple(p for p in Phase if options.shrink or p is not Phase.shrink),
            suppress_health_check=list(HealthCheck),
            print_blob=False,
            report_multiple_bugs=False,
        )(test)
        if options.seed is not None:
            # What `hypothesis.seed` sets, without the `database=None` it also sets: CI wants both a fixed draw
            # and its earlier failures replayed first (tests/fuzz/test_engine.py holds this to hypothesis's
            # behaviour).
            test._hypothesis_internal_use_seed = options.seed  # type: ignore[attr-defined]
        # One database key per pair and mode, so each session replays its own earlier failures first.
        # (hypothesis's own key would be the digest of `prop`, the same for every pair).
        key = f"conformance-fuzz:{case.frontend}->{case.backend}:{'stream' if case.stream else 'nonstream'}"
        test._hypothesis_internal_database_key = key.encode()  # type: ignore[attr-defined]
        try:
            test()
        except ExampleFailed:
            pass
        except HypothesisException as exc:
            raise RuntimeError(f"hypothesis could not run the session: {exc}") from exc
    if failing:
        # Hypothesis replays the shrunk example last, right before it re-raises.
        scenario, result = failing[-1]
        outcome.finding = Finding(scenario, result)
    return outcome


def known_for(entries: Sequence[Known], case: Case) -> tuple[Known, ...]:
    """The entries of a known-failures file about the case's pair and mode, whatever their scenario: a fuzzed
    example is a new scenario, so an accepted bug is recognised by its verdict and signature alone."""
    suffix = case.case_id[len(case.scenario) :]
    return tuple(e for e in entries if e.id.endswith(suffix) and e.signature)


def is_known(result: CaseResult, entries: Sequence[Known]) -> bool:
    """Whether a failing example shows only accepted bugs: a proxy bug, and nothing in its signature that the
    entries do not hold between them (a generated example often shows two known bugs at once, say an image
    dropped and a Retry-After lost, each accepted on a scenario of its own and so with a verdict of its own)."""
    accepted = {part for e in entries for part in e.signature or ()}
    return result.verdict.is_proxy_bug and bool(accepted) and set(signature(result)) <= accepted


def stream_modes(frontend: str, backend: str, wanted: Sequence[bool]) -> list[bool]:
    """The modes of `wanted` the pair has a form for."""
    return [s for s in wanted if check_pair(frontend, backend, s) is None]
