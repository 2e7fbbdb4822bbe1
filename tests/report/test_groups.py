"""Groups follow the root cause: one cause is one group whatever the frontend, streaming mode, event index or
list of failed checks; a case with several defects is in the group of each, its headline's first; no group is
titled "(no divergence)". Built from real runs of the built-in proxy with catalogued faults switched on, and from
hand-built cases for what a fault cannot show."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.faults.catalog import by_name
from harness.proxy import HookContext, TranslateHooks
from harness.report.groups import causes, failing, groups_of
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions
from harness.trace.model import CaseResult, DivergenceJSON
from tests.conftest import REPO
from tests.report.factory import _three, case, run


def _run(tmp_path: Path, hooks: TranslateHooks, **kw: object) -> list[CaseResult]:
    opts = MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        reports=tmp_path / "reports",
        known=tmp_path / "known.toml",
        run_id="t",
        keep_traces="all",
        hooks=hooks,
        **kw,  # type: ignore[arg-type]
    )
    engine = Engine(opts)
    engine.run()
    return [r for r in engine.results if r.verdict not in ("pass", "unsupported")]


def _both(response_fault: str, bytes_fault: str) -> TranslateHooks:
    """Two catalogued faults at once: one that acts on upstream events and answers, one on the client's bytes."""
    events, wire = by_name(response_fault).hooks, by_name(bytes_fault).hooks

    def per_request(context: HookContext) -> TranslateHooks:
        a, b = events.bind(context), wire.bind(context)
        return TranslateHooks(
            on_upstream_event=a.on_upstream_event,
            on_upstream_response=a.on_upstream_response,
            on_frontend_bytes=b.on_frontend_bytes,
        )

    return TranslateHooks(per_request=per_request)


@pytest.fixture(scope="module")
def two_defects(tmp_path_factory: pytest.TempPathFactory) -> list[CaseResult]:
    hooks = _both("second-parallel-tool-call-dropped", "zero-input-at-message-start")
    tmp = tmp_path_factory.mktemp("two")
    return _run(tmp, hooks, frontends=["anthropic"], backends=["openai"], only=["tool-call-parallel", "text-basic"])


def test_a_case_with_two_defects_is_under_each_and_headed_by_the_lost_call(two_defects: list[CaseResult]) -> None:
    by_id = {c.case_id: c for c in two_defects}
    both = by_id["tool-call-parallel[anthropic->openai,stream]"]
    # Stream order puts message_start's zeroed count first; the headline is the lost second call.
    assert both.response_divergences[0].path == "events[0].start_input_tokens"
    assert both.first_divergence is not None and both.first_divergence.path == "events[3]"
    assert both.first_divergence.left["kind"] == "tool_call_start"
    groups = failing(two_defects)
    titles = {g.title: sorted(c.case_id for c in g.cases) for g in groups}
    assert titles == {
        "tool call differs at events[*]": [
            "tool-call-parallel[anthropic->openai,nonstream]",  # response.content[1] lost: the same cause
            "tool-call-parallel[anthropic->openai,stream]",
        ],
        "usage count differs at events[*].start_input_tokens": [
            "text-basic[anthropic->openai,stream]",
            "tool-call-parallel[anthropic->openai,stream]",  # not hidden behind the lost call
        ],
    }
    mine = groups_of(groups)[both.case_id]
    assert [g.title for g in mine] == [
        "tool call differs at events[*]",
        "usage count differs at events[*].start_input_tokens",
    ]
    usage = mine[1]
    assert usage.divergence is not None and (usage.divergence.left, usage.divergence.right) == ("<reported>", 0)


def test_one_max_tokens_bug_is_one_group_across_frontends_and_modes(tmp_path: Path) -> None:
    """`length-mapped-to-stop` shows at events[*].stop_reason.kind on a stream and response.stop_reason.kind on an
    answer, on two frontends: one cause, one group (two groups when groups followed the path)."""
    found = _run(
        tmp_path,
        by_name("length-mapped-to-stop").hooks,
        frontends=["openai", "anthropic"],
        backends=["openai"],
        only=["max-tokens-length"],
    )
    assert len(found) == 4
    assert {c.first_divergence.path.split("[")[0] for c in found if c.first_divergence} == {
        "events",
        "response.stop_reason.kind",
    }
    groups = failing(found)
    assert [(g.title.split(" at ")[0], len(g.cases)) for g in groups] == [("stop reason or error differs", 4)]


def test_what_follows_from_one_defect_is_no_cause_of_its_own(tmp_path: Path) -> None:
    """An upstream error turned into a normal stop changes the stop reason, the usage, the exception the SDK raises
    and the answer too, mid-stream (an error event) and before the first event (the answer's error): one group
    (8 when every divergence of another field was a cause)."""
    found = _run(
        tmp_path,
        by_name("midstream-error-as-stop").hooks,
        frontends=["openai", "anthropic"],
        backends=["openai", "gemini"],
        only=["midstream-error", "stream-error-first"],
    )
    heads = {c.first_divergence.path.split("[")[0] for c in found if c.first_divergence is not None}
    assert heads == {"events", "error"} and len(found) >= 8
    groups = failing(found)
    assert [(g.title.split(" at ")[0], len(g.cases)) for g in groups] == [("stop reason or error differs", len(found))]


def test_a_proxy_bug_no_divergence_decided_is_titled_by_its_check() -> None:
    failing_check = (("text_equals", True), ("frontend_wire", False))
    bad = run("translated", "text-basic", "anthropic", "openai", checks=failing_check)
    bug = case(
        "text-basic",
        "anthropic",
        "openai",
        "proxy_bug_response",
        "translated run fails (frontend_wire)",
        runs=_three("text-basic", "anthropic", "openai", bad),
    )
    (only,) = causes(bug)
    assert only.title.startswith("frontend_wire fails: ") and len(only.title) > len("frontend_wire fails: ") + 10
    (group,) = failing([bug])
    assert group.path is None and "no divergence" not in group.title


def test_a_failed_check_a_divergence_explains_is_no_second_cause() -> None:
    """text_equals fails because the text differs: one cause; a failed wire check beside it is a second."""
    checks = (("text_equals", False), ("frontend_wire", False))
    bad = run("translated", "text-basic", "anthropic", "openai", chunks=("Hel",), checks=checks)
    first = DivergenceJSON(
        path="events[2].text", left="Hello world", right="Hel", event_index=2, change="values_changed"
    )
    bug = case(
        "text-basic",
        "anthropic",
        "openai",
        "proxy_bug_response",
        "translated run fails (frontend_wire, text_equals)",
        first=first,
        runs=_three("text-basic", "anthropic", "openai", bad),
    )
    assert [c.title.split(":")[0] for c in causes(bug)] == ["text differs at events[*].text", "frontend_wire fails"]


def test_checks_a_baseline_fails_too_are_not_the_proxys() -> None:
    base = run("baseline_frontend", "text-basic", "anthropic", "anthropic", checks=(("frontend_wire", False),))
    bad = run(
        "translated", "text-basic", "anthropic", "openai", checks=(("frontend_wire", False), ("stop_reason", False))
    )
    runs = _three("text-basic", "anthropic", "openai", bad)
    runs["baseline_frontend"] = base
    bug = case(
        "text-basic", "anthropic", "openai", "proxy_bug_response", "translated run fails (stop_reason)", runs=runs
    )
    assert [c.key for c in causes(bug)] == ["check:stop_reason"]
