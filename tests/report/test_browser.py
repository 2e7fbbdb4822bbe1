"""index.html in headless Chromium, driven over the DevTools pipe: the matrix, charts, filters, grouping and a case
view render; nothing is fetched but the page itself; provider markup stays text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from harness.report import emit, file_writers
from harness.report.browser import Browser, chromium
from tests.report.factory import big_matrix, dropped_call, sample_cases, sample_events

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    emit(sample_events([*sample_cases(), dropped_call()]), file_writers(out))
    return out / "index.html"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if chromium() is None:
        pytest.skip("chromium is not installed (apt-get install chromium); the HTML is checked statically elsewhere")
    with Browser() as opened:
        yield opened


def texts(browser: Browser, selector: str) -> list[str]:
    """textContent of every element matching a CSS selector."""
    found: list[str] = browser.evaluate(
        f"Array.from(document.querySelectorAll({json.dumps(selector)})).map(e => e.textContent)"
    )
    return found


def attr(browser: Browser, selector: str, name: str) -> Any:
    """An attribute of the first element matching a selector (None when absent)."""
    return browser.evaluate(
        f"(document.querySelector({json.dumps(selector)}) || {{getAttribute: () => null}})"
        f".getAttribute({json.dumps(name)})"
    )


def open_case(browser: Browser, index: Path, case_id: str) -> None:
    browser.open(index, "case=" + quote(case_id, safe=""))
    browser.wait_for(f"document.getElementById('case-view').dataset.loaded === {json.dumps(case_id)}")


def test_matrix_charts_and_groups_render_and_nothing_is_fetched(browser: Browser, index: Path) -> None:
    browser.open(index)
    assert texts(browser, "#matrix thead th") == ["backend \\ frontend", "anthropic", "openai"]
    assert texts(browser, "#matrix tbody th") == ["anthropic", "openai", "gemini"]  # 3 backends down the page
    cell = '#matrix td[data-frontend="anthropic"][data-backend="openai"]'
    assert attr(browser, cell, "data-total") == "3"
    assert texts(browser, cell + " .badge") == ["1 request bug", "2 response bug"]
    assert texts(browser, cell + " .count") == ["0/3"]
    assert (
        attr(browser, '#verdicts-chart rect[data-backend="openai"][data-verdict="proxy_bug_response"]', "data-count")
        == "2"
    )
    assert attr(browser, '#ttft td[data-frontend="anthropic"][data-backend="openai"]', "data-ms") is not None
    assert texts(browser, "#shown") == ["(showing 8 of 8)"]
    groups = texts(browser, "details.group > summary .group-count")
    assert len(groups) == 8 and groups[0] == "1 \u00d7"  # every case its own group here
    assert texts(browser, "details.group > summary .group-title")[:2] == [
        "upstream request: tool call lost at request.tools[*]",
        "text differs at events[*].text",
    ]
    assert "gate FAIL (exit 1)" in texts(browser, "#run-facts")[0]
    assert browser.requested() == [index.resolve().as_uri()]


def test_filters_and_flat_list_from_the_url(browser: Browser, index: Path) -> None:
    browser.open(index, "verdict=proxy_bug_request,proxy_bug_response&frontend=anthropic&view=list&sort=divergence")
    assert texts(browser, "#shown") == ["(showing 3 of 8)"]
    rows = browser.evaluate("Array.from(document.querySelectorAll('table.cases tbody tr')).map(r => r.dataset.case)")
    assert rows == [
        "text-basic[anthropic->openai,stream]",
        "tool-call-parallel[anthropic->openai,stream]",
        "tools-stream[anthropic->openai,stream]",
    ]
    assert browser.evaluate("document.querySelectorAll('input[name=verdict]:checked').length") == 2


def test_clicking_a_cell_and_a_group_filters_and_expands(browser: Browser, index: Path) -> None:
    browser.open(index)
    browser.evaluate('document.querySelector(\'#matrix td[data-frontend="openai"][data-backend="gemini"]\').click()')
    assert texts(browser, "#shown") == ["(showing 2 of 8)"]
    assert "frontend=openai" in browser.evaluate("location.hash")
    browser.evaluate("document.querySelector('details.group > summary').click()")
    browser.wait_for("document.querySelector('details.group table.cases')")
    assert texts(browser, "details.group table.cases td.case") == ["usage[openai->gemini,stream]"]


def test_case_view_shows_description_commands_event_diff_timeline_and_chunks(browser: Browser, index: Path) -> None:
    open_case(browser, index, "tool-call-parallel[anthropic->openai,stream]")
    assert texts(browser, "#case-view h2") == ["tool-call-parallel[anthropic->openai,stream]"]
    assert texts(browser, ".command code")[0] == (
        "conformance run --scenario tool-call-parallel --frontend anthropic --backend openai --streaming stream"
    )
    assert texts(browser, ".command code")[1].startswith("conformance diff ")
    # The dropped call is one removed block; the call after it is aligned, not shifted.
    ops = browser.evaluate("Array.from(document.querySelectorAll('.event-diff tbody tr')).map(r => r.dataset.op)")
    assert ops == ["same", "same", "removed", "same", "same"]
    assert "get_time" in texts(browser, ".event-diff tr[data-op=removed]")[0]
    assert "1 change(s)" in texts(browser, ".event-diff .meta")[0]
    # The timeline draws every event twice (at the proxy, at the client) for both runs.
    assert browser.evaluate("document.querySelectorAll('svg.timeline rect').length") == 2 * (11 + 8)
    assert "first token 2.50 ms" in texts(browser, ".timeline-box .meta")[0]
    translated = '.run[data-role="translated"]'
    assert texts(browser, translated + " ol.chunks .chunk-head")[:2] == [
        "#0 \u00b7 10 chars \u00b7 at 1.00 ms",
        "#1 \u00b7 10 chars \u00b7 at 2.00 ms (+1.00 ms)",
    ]
    assert browser.requested()[-1].startswith(index.resolve().as_uri())


def test_checks_keep_their_names_whole(browser: Browser, index: Path) -> None:
    open_case(browser, index, "text-basic[anthropic->openai,stream]")
    names = texts(browser, '.run[data-role="translated"] .check-name')
    assert names == ["text_equals", "stop_reason"]
    heights = browser.evaluate(
        "Array.from(document.querySelectorAll('.check-name')).map(e => e.getBoundingClientRect().height)"
    )
    line = browser.evaluate("parseFloat(getComputedStyle(document.querySelector('.check-name')).lineHeight) || 18")
    assert max(heights) <= line * 1.5  # one line each, never a character column
    marked = browser.evaluate(
        "document.querySelector('.run[data-role=translated] span[data-path=\"events[2].text\"]').className"
    )
    assert marked == "ln mark first"
    assert "text-basic: " in texts(browser, "#case-view .scenario")[0]


def test_provider_markup_renders_as_text(browser: Browser, index: Path) -> None:
    open_case(browser, index, "markup[anthropic->gemini,nonstream]")
    assert browser.evaluate("document.body.dataset.pwned === undefined")
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    reason = texts(browser, "#case-view .reason")[0]
    assert "</script><script>document.body.setAttribute('data-pwned','1')</script>" in reason
    assert browser.requested() == [
        index.resolve().as_uri() + "#case=" + quote("markup[anthropic->gemini,nonstream]", safe="")
    ] or all(url.startswith(index.resolve().as_uri()) for url in browser.requested())


def test_unknown_case_says_so(browser: Browser, index: Path) -> None:
    browser.open(index, "case=" + quote("nope[a->b,stream]", safe=""))
    assert texts(browser, "#case-view") == ["no case nope[a->b,stream] in this run"]


@pytest.mark.slow
def test_seven_hundred_cases_render_with_a_case_view(tmp_path: Path, browser: Browser) -> None:
    emit(sample_events(big_matrix(wire_chars=200, deltas=5)), file_writers(tmp_path))
    page = tmp_path / "index.html"
    open_case(browser, page, "scenario-03[gemini->qwen-xml,stream]")
    assert texts(browser, "#shown") == ["(showing 704 of 704)"]
    assert attr(browser, '#matrix td[data-frontend="gemini"][data-backend="qwen-xml"]', "data-total") == "22"
    roles = browser.evaluate("Array.from(document.querySelectorAll('#case-view .run')).map(e => e.dataset.role)")
    assert roles == ["baseline_frontend", "translated", "baseline_backend"]
    # A backend this harness does not register has unknown losses: the pane says why it cannot show the view.
    assert (
        "cannot compare as a verdict does: unknown protocol 'qwen-xml'"
        in texts(browser, '.run[data-role="translated"]')[0]
    )
