"""The fuzz loop on the built-in proxy: green when clean, a catalogued fault found and shrunk, the shrunk case
written as a scenario and cassettes that reproduce under `conformance run`, earlier failures replayed first."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.cli import main
from harness.faults.catalog import by_name
from harness.fuzz import FuzzOptions, FuzzResult, fuzz, write_finding
from harness.scenarios.loader import load_scenario

DROPPED = "second-parallel-tool-call-dropped"


def _options(database: Path, *, max_examples: int = 300, seed: int = 3) -> FuzzOptions:
    return FuzzOptions(
        "anthropic",
        "openai",
        True,
        max_examples=max_examples,
        seed=seed,
        hooks=by_name(DROPPED).hooks,
        database=database,
    )


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-db")


@pytest.fixture(scope="module")
def found(database: Path) -> FuzzResult:
    """One session with a parallel call dropped by the proxy: the fault must be found within 300 examples."""
    return fuzz(_options(database))


def test_the_clean_proxy_stays_green() -> None:
    outcome = fuzz(FuzzOptions("anthropic", "openai", True, max_examples=20, seed=11))
    assert outcome.finding is None
    assert outcome.examples == 20
    assert set(outcome.verdicts) == {"pass"}


def test_a_catalogued_fault_is_found_and_shrunk(found: FuzzResult) -> None:
    assert found.finding is not None, dict(found.verdicts)
    assert found.finding.result.verdict == "proxy_bug_response"
    reply = found.finding.scenario.reply
    # Shrunk: the least that shows a dropped second call is two calls, no text, no thinking.
    assert reply.kind == "ok"
    assert [p.kind for p in reply.content] == ["tool_call", "tool_call"]
    assert len(found.finding.scenario.request.messages) == 1


def test_the_shrunk_case_reproduces_under_conformance_run(found: FuzzResult, tmp_path: Path) -> None:
    assert found.finding is not None
    written = write_finding(found.finding, _options(tmp_path).case, tmp_path / "found", hooks=DROPPED)
    scenario = load_scenario(written.scenario)
    assert scenario.id == written.case.scenario and scenario.id.startswith("fuzz-anthropic-openai-stream-")
    assert sorted(p.name for p in written.cassettes.iterdir()) == ["anthropic", "openai"]
    assert "--hooks second-parallel-tool-call-dropped" in written.command
    common = [
        "run",
        "-q",
        "--scenarios",
        str(written.scenario.parent),
        "--cassettes",
        str(written.cassettes),
        "--reports",
        str(tmp_path / "reports"),
        "--frontend",
        "anthropic",
        "--backend",
        "openai",
        "-j",
        "1",
    ]
    assert main([*common, "--hooks", DROPPED]) == 1
    assert main(common) == 0


def test_the_database_replays_an_earlier_failure_first(found: FuzzResult, database: Path, tmp_path: Path) -> None:
    assert found.finding is not None
    # One new example cannot find the fault (seed 5 draws no parallel calls first: checked against an empty
    # database), but the stored failure is replayed before any new example.
    assert fuzz(_options(tmp_path / "empty", max_examples=1, seed=5)).finding is None
    again = fuzz(_options(database, max_examples=1, seed=5))
    assert again.finding is not None
    assert [p.kind for p in again.finding.scenario.reply.content] == ["tool_call", "tool_call"]


def test_an_example_failing_as_a_known_bug_is_explored_past(found: FuzzResult, tmp_path: Path) -> None:
    from harness.fuzz.engine import is_known, known_for
    from harness.runner.known import Known, signature
    from harness.trace import Verdict

    assert found.finding is not None
    result = found.finding.result
    case = _options(tmp_path).case
    entries = [
        # Another scenario's entry on the same pair and mode: a fuzzed example is recognised by verdict and signature.
        Known("tool-call-parallel[anthropic->openai,stream]", result.verdict, "dropped call", signature(result)),
        Known("tool-call-parallel[anthropic->openai,nonstream]", result.verdict, "other mode", ("check:x",)),
    ]
    known = known_for(entries, case)
    assert [k.id for k in known] == ["tool-call-parallel[anthropic->openai,stream]"]
    # Two accepted bugs seen at once: each part known from some entry, whatever that entry's verdict.
    parts = signature(result)
    assert len(parts) >= 2, parts
    split = [
        Known("a[anthropic->openai,stream]", Verdict.PROXY_BUG_REQUEST, "one", parts[:1]),
        Known("b[anthropic->openai,stream]", result.verdict, "two", parts[1:]),
    ]
    assert is_known(result, split) and not is_known(result, split[1:])
    # Unshrunk (shrinking would cost ~40 s here): the first failing example drawn is accepted, so the same draw
    # goes on past it and reports the next one, the same fault seen another way with a signature of its own.
    first = fuzz(dataclasses.replace(_options(tmp_path / "first", max_examples=60), shrink=False))
    assert first.finding is not None
    seen = signature(first.finding.result)
    accepted = (Known("tool-call-parallel[anthropic->openai,stream]", result.verdict, "seen", seen),)
    again = fuzz(dataclasses.replace(_options(tmp_path / "again", max_examples=60), known=accepted, shrink=False))
    assert again.verdicts["known"] > 0, dict(again.verdicts)
    assert again.finding is not None
    assert again.examples > first.examples
    assert not set(signature(again.finding.result)) <= set(seen)


def test_without_shrinking_the_first_failing_example_drawn_is_the_finding(found: FuzzResult, tmp_path: Path) -> None:
    shrunk = found
    drawn = fuzz(dataclasses.replace(_options(tmp_path), shrink=False))
    assert shrunk.finding is not None and drawn.finding is not None
    # The same draw up to the first failure; then only hypothesis's one replay of it, no shrink attempts.
    assert drawn.verdicts["proxy_bug_response"] == 2, dict(drawn.verdicts)
    assert drawn.verdicts["pass"] == drawn.examples - 2
    assert shrunk.verdicts["proxy_bug_response"] > 2, dict(shrunk.verdicts)
    assert drawn.finding.result.verdict == "proxy_bug_response"


def test_a_headers_file_for_the_whole_gate_keeps_only_this_pairs_upstreams(tmp_path: Path) -> None:
    # `sut-config --format portkey` scopes a header to each upstream; fuzzing anthropic->openai must not refuse it.
    from harness.fuzz.engine import backends_of
    from harness.rig.sut_client import SutClient, SutHeader, scoped_to

    headers = tuple(SutHeader("x-cfg", b, b) for b in ("openai", "anthropic", "gemini", "typo"))
    every = SutClient(key="k", headers=(SutHeader("x-all", "v"), *headers))
    client = scoped_to(every, backends_of(_options(tmp_path).case))
    assert client is not None and client.key == "k"
    assert [(h.name, h.backend) for h in client.headers] == [
        ("x-all", None),
        ("x-cfg", "openai"),
        ("x-cfg", "anthropic"),
        ("x-cfg", "typo"),
    ]
