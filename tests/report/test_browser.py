"""index.html in headless Chromium: the matrix, filters and a case view render, and provider markup stays text."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pytest

from harness.report import emit, file_writers
from tests.report.factory import big_matrix, sample_events

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Node:
    """An element of the dumped DOM."""

    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    def find_all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        """Descendants with `tag` whose attributes include `attrs` (underscores in names read as dashes)."""
        wanted = {k.replace("_", "-"): v for k, v in attrs.items()}
        found: list[Node] = []
        for child in self.children:
            if isinstance(child, Node):
                if (tag is None or child.tag == tag) and all(child.attrs.get(k) == v for k, v in wanted.items()):
                    found.append(child)
                found.extend(child.find_all(tag, **attrs))
        return found

    def find(self, tag: str | None = None, **attrs: str) -> Node:
        """The first matching descendant (fails the test when there is none)."""
        found = self.find_all(tag, **attrs)
        assert found, f"no <{tag} {attrs}> in the DOM"
        return found[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def dump_dom(page: Path, fragment: str, profile: Path) -> Node:
    """Load `page#fragment` in headless Chromium, let its script run, and parse the serialized DOM."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium); the HTML is checked statically elsewhere")
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    result = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    builder = _Builder()
    builder.feed(result.stdout)
    body = builder.root.find("body")
    assert body.attrs.get("data-ready") == "true", "the page script did not finish"
    return body


def case_fragment(case_id: str) -> str:
    return "case=" + quote(case_id, safe="")


@pytest.fixture(scope="module")
def index(report_dir: Path) -> Path:
    return report_dir / "index.html"


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    return tmp_path / "chromium-profile"


def test_matrix_and_case_list_render(index: Path, profile: Path) -> None:
    body = dump_dom(index, "", profile)
    matrix = body.find("table", id="matrix")
    assert [th.text for th in matrix.find("thead").find_all("th")] == [
        "frontend \\ backend",
        "anthropic",
        "openai",
        "gemini",
    ]
    cell = matrix.find("td", data_frontend="anthropic", data_backend="openai")
    assert [b.text for b in cell.find_all("span")] == ["1 request bug", "1 response bug"]
    assert cell.find("span", data_verdict="proxy_bug_request").attrs["title"] == "1 proxy bug (request)"
    assert matrix.find("td", data_frontend="openai", data_backend="anthropic").text == "1 pass1 backend"
    assert matrix.find("td", data_frontend="anthropic", data_backend="anthropic").text == "\u2014"
    assert body.find("small", id="shown").text == "(showing 7 of 7)"
    rows = body.find("table", id="cases").find("tbody").find_all("tr")
    assert [r.attrs["data-case"] for r in rows][:2] == [
        "text-basic[openai->anthropic,stream]",
        "text-basic[anthropic->openai,stream]",
    ]
    assert body.find("section", id="case-view").attrs.get("hidden") is not None
    assert "gate FAIL" in body.find("div", id="run-facts").text


def test_case_view_shows_first_divergence_runs_and_checks(index: Path, profile: Path) -> None:
    body = dump_dom(index, case_fragment("text-basic[anthropic->openai,stream]"), profile)
    view = body.find("section", id="case-view")
    assert "hidden" not in view.attrs
    assert view.find("h2").text == "text-basic[anthropic->openai,stream]"
    first = view.find("div", **{"class": "first-divergence"})
    assert first.find("code").text == "events[2].text"
    assert [p.text for p in first.find_all("pre")] == ['"Hello world"', '"Hello wor"']
    columns = [d.attrs["data-role"] for d in view.find_all("div") if "data-role" in d.attrs]
    assert columns == ["baseline_frontend", "translated", "baseline_backend"]
    translated = view.find("div", data_role="translated")
    check = translated.find("tr", data_check="text_equals")
    assert check.find("td").text == "\u2717 fail"
    assert view.find("div", data_role="baseline_frontend").find("tr", data_check="text_equals").find("td").text == (
        "\u2713 pass"
    )
    marked = translated.find("span", data_path="events[2].text")
    assert marked.attrs["class"] == "ln mark first"
    assert marked.text.strip() == '"text": "Hello wor"'
    assert "openai/text-basic.yaml #0" in translated.text
    # The compared pane holds what the verdict compared: baseline (frontend) and translated, not baseline (backend).
    assert "SDK saw (as compared)" in view.find("div", data_role="baseline_frontend").text
    assert "not compared: the verdict compares" in view.find("div", data_role="baseline_backend").text
    # The open case is highlighted in the list as well.
    assert body.find("tr", data_case="text-basic[anthropic->openai,stream]").attrs["class"] == "open"


def test_request_side_bug_marks_the_dropped_tools(index: Path, profile: Path) -> None:
    body = dump_dom(index, case_fragment("tools-stream[anthropic->openai,stream]"), profile)
    translated = body.find("div", data_role="translated")
    marked = translated.find_all("span", data_path="request.tools[0]")
    # Marked in the client request (where the tool is); the upstream request has no tools[0] line at all.
    assert marked and all("mark" in m.attrs["class"] for m in marked)
    assert translated.find("span", data_path="request.tools").text.strip() == '"tools": [],'
    client_request = next(d for d in translated.find_all("details") if "client request" in d.find("summary").text)
    assert "open" in client_request.attrs  # opened because the request side diverged


def test_provider_markup_renders_as_text(index: Path, profile: Path) -> None:
    body = dump_dom(index, case_fragment("markup[anthropic->gemini,nonstream]"), profile)
    assert "data-pwned" not in body.attrs
    assert not body.find_all("img")
    reason = body.find("p", **{"class": "reason"})
    assert "</script><script>document.body.setAttribute('data-pwned','1')</script>" in reason.text


def test_filters_from_the_url(index: Path, profile: Path) -> None:
    body = dump_dom(index, "verdict=proxy_bug_request,proxy_bug_response&frontend=anthropic", profile)
    assert body.find("small", id="shown").text == "(showing 2 of 7)"
    rows = body.find("table", id="cases").find("tbody").find_all("tr")
    assert [r.attrs["data-case"] for r in rows] == [
        "text-basic[anthropic->openai,stream]",
        "tools-stream[anthropic->openai,stream]",
    ]
    assert len(body.find_all("input", name="verdict")) == 7  # one checkbox per verdict


def test_matrix_cell_filter_from_the_url_is_highlighted(index: Path, profile: Path) -> None:
    body = dump_dom(index, "frontend=openai&backend=gemini", profile)
    assert body.find("td", data_frontend="openai", data_backend="gemini").attrs["class"] == "cell selected"
    rows = body.find("table", id="cases").find("tbody").find_all("tr")
    assert [r.attrs["data-case"] for r in rows] == [
        "thinking[openai->gemini,nonstream]",
        "usage[openai->gemini,stream]",
    ]


def test_unknown_case_says_so(index: Path, profile: Path) -> None:
    body = dump_dom(index, case_fragment("nope[a->b,stream]"), profile)
    assert body.find("section", id="case-view").text == "no case nope[a->b,stream] in this run"


@pytest.mark.slow
def test_seven_hundred_cases_render_with_a_case_view(tmp_path: Path, profile: Path) -> None:
    # Small runs: the point is 704 rows and a case view; page size is measured in test_html.
    cases = big_matrix(wire_chars=200, deltas=5)
    emit(sample_events(cases), file_writers(tmp_path))
    body = dump_dom(tmp_path / "index.html", case_fragment("scenario-03[gemini->qwen-xml,stream]"), profile)
    assert body.find("small", id="shown").text == "(showing 704 of 704)"
    assert len(body.find("table", id="cases").find("tbody").find_all("tr")) == 704
    cell = body.find("td", data_frontend="gemini", data_backend="qwen-xml")
    assert int(cell.attrs["data-total"]) == 22
    view = body.find("section", id="case-view")
    assert view.find("h2").text == "scenario-03[gemini->qwen-xml,stream]"
    assert [d.attrs["data-role"] for d in view.find_all("div") if "data-role" in d.attrs] == [
        "baseline_frontend",
        "translated",
        "baseline_backend",
    ]
    # A backend this harness does not register has unknown losses: the pane says why it cannot show the view.
    assert (
        "cannot compare as a verdict does: unknown protocol 'qwen-xml'" in view.find("div", data_role="translated").text
    )
