"""`write_known`: what changed (added, changed, removed, kept), earlier reasons kept, entries of cases outside the
run kept; the file it writes loads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.runner.known import Known, grown, load_known, matches, signature, unsigned_notice, write_known
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


def test_a_shrunk_signature_stays_known() -> None:
    """Part of an accepted bug fixed: what is left is still the accepted bug (docs/ci.md says why)."""
    bug = tools_bug()
    sig = signature(bug)
    assert sig
    wider = Known(bug.case_id, bug.verdict, "accepted", (*sig, "check:text_equals"))
    assert matches(wider, bug) and not grown(wider, bug)


def test_an_old_file_without_signatures_loads_with_a_notice_and_update_adds_them(tmp_path: Path) -> None:
    bug = tools_bug()
    path = tmp_path / "known.toml"
    header = "# Known bugs of gateway X, verified by hand.\n# Evidence: docs/gateways.md.\n"
    body = f'[[case]]\nid = "{bug.case_id}"\nverdict = "{bug.verdict}"\nreason = "G7: drops a call"\n'
    path.write_text(f"{header}\n{body}", encoding="utf-8")
    old = load_known(path)
    assert old[bug.case_id].signature is None
    note = unsigned_notice("run", path, old)
    assert note is not None and "1 of 1 entries have no signature" in note and bug.case_id in note
    update = write_known(path, [bug], old)
    assert update.kept == [bug.case_id]
    text = path.read_text(encoding="utf-8")
    assert text.startswith(header)  # the person's notes stay
    new = load_known(path)[bug.case_id]
    assert (new.verdict, new.reason, new.signature) == (bug.verdict, "G7: drops a call", signature(bug))
    assert unsigned_notice("run", path, load_known(path)) is None


def test_an_accepted_message_start_usage_bug_does_not_hide_a_lost_tool_call_on_the_same_case(tmp_path: Path) -> None:
    """Both faults at once on one case: the entry accepted only the zero `input_tokens` at message_start."""
    import dataclasses

    from harness.faults import hooks as h
    from harness.proxy.models import HookContext, TranslateHooks
    from harness.runner.engine import Engine
    from harness.runner.plan import MatrixOptions

    def both(context: HookContext) -> TranslateHooks:
        zero, second = h.ZERO_INPUT_AT_MESSAGE_START.per_request, h.SECOND_PARALLEL_CALL_DROPPED.per_request
        assert zero is not None and second is not None
        return dataclasses.replace(second(context), on_frontend_bytes=zero(context).on_frontend_bytes)

    known = tmp_path / "known.toml"
    case_id = "tool-call-parallel[anthropic->openai,stream]"
    matrix = ["-q", "-j", "1", "--frontend", "anthropic", "--backend", "openai", "--scenario", "tool-call-parallel"]
    accept = ["run", *matrix, "--streaming", "stream", "--reports", str(tmp_path), "--known", str(known)]
    assert main([*accept, "--hooks", "zero-input-at-message-start", "--update-known"]) == 0
    entry = load_known(known)[case_id]
    assert entry.signature and not any("tool_calls" in part for part in entry.signature)
    options = MatrixOptions(
        frontends=["anthropic"], backends=["openai"], only=["tool-call-parallel"], streams=(True,), known=known,
        reports=tmp_path, run_id="both", hooks=TranslateHooks(per_request=both),
    )  # fmt: skip
    engine = Engine(options)
    finished = engine.run()
    assert finished.exit_code == 1 and list(finished.new_proxy_bugs) == [case_id]
    (result,) = engine.results
    assert result.verdict == entry.verdict and result.known is None  # same verdict as the entry: before, a pass
    assert "new beyond its known-failures entry" in result.reason and "check:tool_calls" in result.reason


def test_update_keeps_the_files_order_so_a_review_diff_shows_only_what_changed(tmp_path: Path) -> None:
    text, tools = text_bug(), tools_bug()
    path = tmp_path / "known.toml"
    later = sorted([text.case_id, tools.case_id])[::-1]  # not sorted: the order a person wrote
    previous = {i: Known(i, Verdict.PROXY_BUG_RESPONSE if i == text.case_id else tools.verdict, "r") for i in later}
    fresh = case("long-output", "openai", "anthropic", "proxy_bug_response", "translated run fails (text_equals)")
    write_known(path, [fresh, text, tools], previous)
    assert list(load_known(path)) == [*later, fresh.case_id]
