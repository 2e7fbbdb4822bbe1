"""`selftest.html`: the catch matrix as a self-contained page, one row per fault with its cases (those that caught
it marked), the escaped fault flagged, the score, and catalog text kept as text."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.cli import main
from harness.faults import catalog
from harness.faults.catalog import Fault, Scope
from harness.proxy import TranslateHooks
from harness.trace import Case
from tests.conftest import REPO


@dataclass
class Element:
    """An element of the page with its text."""

    tag: str
    attrs: dict[str, str]
    text: str = ""
    children: list[Element] = field(default_factory=list)

    def all(self, tag: str) -> list[Element]:
        found = [c for c in self.children if c.tag == tag]
        return found + [d for c in self.children for d in c.all(tag)]


class _Tree(HTMLParser):
    VOID = {"meta", "col", "br", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.root = Element("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in self.VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        for element in self.stack[1:]:
            element.text += data


def parse(path: Path) -> Element:
    tree = _Tree()
    tree.feed(path.read_text(encoding="utf-8"))
    tree.close()
    assert tree.stack == [tree.root], "unclosed elements"
    return tree.root


def test_the_page_shows_the_catch_matrix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    noop = Fault(
        "noop",
        "changes <b>nothing</b> & escapes (test only)",
        "no bug",
        "nothing",
        TranslateHooks(),
        Scope(("text-basic",)),
        (Case("text-basic", "openai", "anthropic", True),),
    )
    monkeypatch.setattr(catalog, "FAULTS", (*catalog.FAULTS, noop))
    args = ["selftest", "--scenarios", str(REPO / "scenarios"), "--cassettes", str(REPO / "cassettes")]
    code = main(
        [*args, "--reports", str(tmp_path), "--run-id", "t", "-q", "--quick", "--fault", "noop,temperature-dropped"]
    )
    assert code == 1
    page = parse(tmp_path / "selftest-t" / "selftest.html")
    assert [t.text for t in page.all("title")] == ["selftest t (quick)"]
    assert not page.all("script") and not page.all("link")  # self-contained, opens from file://
    (score,) = [p for p in page.all("p") if p.attrs.get("id") == "score"]
    assert score.attrs["class"] == "score bad"
    assert score.text.startswith("caught 1/2 faults; clean run: 2 cases, 0 proxy bug(s); ")
    rows = {r.attrs["data-fault"]: r for r in page.all("tr") if "data-fault" in r.attrs}
    assert list(rows) == ["noop", "temperature-dropped"]
    caught, escaped = rows["temperature-dropped"], rows["noop"]
    assert (caught.attrs["class"], escaped.attrs["class"]) == ("caught", "escaped")
    (chip,) = caught.all("span")
    assert (chip.text, chip.attrs["class"], chip.attrs["data-verdict"]) == (
        "sampling-params[anthropic->openai,nonstream]",
        "chip v-caught",
        "proxy_bug_request",
    )
    assert "request.temperature: 0.3 -> null" in chip.attrs["title"]
    cells = caught.all("td")
    assert cells[1].text == "1/1" and "request.temperature: 0.3 -> null" in cells[3].text
    assert cells[4].text == "conformance selftest --fault temperature-dropped"
    assert "ESCAPED" in escaped.all("td")[1].text
    (missed,) = escaped.all("span")
    assert (missed.attrs["class"], missed.attrs["data-verdict"]) == ("chip v-missed", "pass")
    # Catalog text is text: the description's markup is shown, not rendered.
    description = escaped.all("div")[0]
    assert description.text == "changes <b>nothing</b> & escapes (test only)" and not description.all("b")
