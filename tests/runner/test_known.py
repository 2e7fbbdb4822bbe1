"""`write_known`: what changed (added, changed, removed, kept), earlier reasons kept, entries of cases outside the
run kept; the file it writes loads back."""

from __future__ import annotations

from pathlib import Path

from harness.runner.known import Known, load_known, write_known
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
