"""`write_known`: what changed (added, changed, removed, kept), earlier reasons kept, entries of cases outside the
run kept; the file it writes loads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.runner.known import Known, grown, load_known, matches, signature, write_known
from harness.trace import Verdict
from tests.report.factory import case, text_bug, tools_bug


def test_write_known_says_what_changed_and_keeps_what_it_did_not_run(tmp_path: Path) -> None:
    text, tools = text_bug(), tools_bug()
    passing = case("text-basic", "gemini", "openai", "pass", "all three runs agree")
    previous = {
        # Same case, same verdict: kept with the team's reason.
        text.case_id: Known(text.case_id, Verdict.PROXY_BUG_RESPONSE, "tracked in #1"),
        # Same case, another proxy-bug verdict now: changed, with the new reason.
        tools.case_id: Known(tools.case_id, Verdict.PROXY_BUG_RESPONSE, "old"),
        # Passes now: removed.
        passing.case_id: Known(passing.case_id, Verdict.PROXY_BUG_REQUEST, "fixed since"),
        # Not in this run: kept as it is.
        "other[ollama->gemini,stream]": Known("other[ollama->gemini,stream]", Verdict.PROXY_BUG_REQUEST, "elsewhere"),
    }
    fresh = case("long-output", "openai", "anthropic", "proxy_bug_response", "translated run fails (text_equals)")
    path = tmp_path / "known.toml"
    update = write_known(path, [text, tools, passing, fresh], previous)
    assert update.added == [fresh.case_id]
    assert update.changed == [tools.case_id]
    assert update.removed == [passing.case_id]
    assert update.kept == [text.case_id, "other[ollama->gemini,stream]"]
    assert update.summary(path) == f"{path}: 4 entries (1 added, 1 removed, 1 changed, 2 kept)"
    loaded = load_known(path)
    assert sorted(loaded) == sorted([text.case_id, tools.case_id, fresh.case_id, "other[ollama->gemini,stream]"])
    assert loaded[text.case_id].reason == "tracked in #1"
    assert (loaded[tools.case_id].verdict, loaded[tools.case_id].reason) == (Verdict.PROXY_BUG_REQUEST, tools.reason)
    assert loaded["other[ollama->gemini,stream]"].reason == "elsewhere"


def test_a_signature_is_made_of_failed_checks_and_divergence_paths_without_indices() -> None:
    bug = tools_bug()
    sig = signature(bug)
    assert sig == tuple(sorted(sig)) and len(sig) == len(set(sig))
    assert all(not any(ch.isdigit() for ch in part.split("[")[-1][:1]) for part in sig if "[" in part)
    entry = Known(bug.case_id, bug.verdict, "accepted", sig)
    assert matches(entry, bug)
    assert not grown(entry, bug)
    # An entry that accepted less than the case shows now: the rest is new.
    smaller = Known(bug.case_id, bug.verdict, "accepted", sig[:-1])
    assert not matches(smaller, bug) and grown(smaller, bug) == [sig[-1]]
    # An unsigned entry holds the verdict only (files written before signatures); another verdict never matches.
    assert matches(Known(bug.case_id, bug.verdict, "old"), bug)
    other = next(v for v in (Verdict.PROXY_BUG_REQUEST, Verdict.PROXY_BUG_RESPONSE) if v != bug.verdict)
    assert not matches(Known(bug.case_id, other, "old", sig), bug)


def test_signatures_round_trip_through_the_file(tmp_path: Path) -> None:
    bug = tools_bug()
    path = tmp_path / "known.toml"
    write_known(path, [bug], {})
    assert load_known(path)[bug.case_id].signature == signature(bug)
    assert "signature = [" in path.read_text(encoding="utf-8")


def test_a_second_bug_on_a_known_case_turns_the_gate_red(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An accepted zero `input_tokens` at message_start must not hide a lost tool call on the same case (a
    gateway cell and a team's own proxy both hit this)."""
    known = tmp_path / "known.toml"
    common = [
        "run",
        "-q",
        "-j",
        "1",
        "--frontend",
        "anthropic",
        "--backend",
        "openai",
        "--scenario",
        "tool-call-parallel",
        "--streaming",
        "stream",
        "--reports",
        str(tmp_path),
        "--known",
        str(known),
    ]
    assert main([*common, "--hooks", "zero-input-at-message-start", "--update-known"]) == 0
    entry = load_known(known)["tool-call-parallel[anthropic->openai,stream]"]
    assert entry.signature
    assert main([*common, "--hooks", "zero-input-at-message-start"]) == 0  # the accepted bug alone: still green
    capsys.readouterr()
    assert main([*common, "--hooks", "second-parallel-tool-call-dropped"]) == 1  # another bug on the case: red
    out = capsys.readouterr().out
    assert "gate: FAIL (exit 1): 1 new proxy bug" in out


def test_a_harness_error_is_never_known(tmp_path: Path) -> None:
    bug = tools_bug()
    error = bug.model_copy(update={"verdict": Verdict.HARNESS_ERROR})
    assert not matches(Known(bug.case_id, Verdict.PROXY_BUG_RESPONSE, "accepted"), error)
