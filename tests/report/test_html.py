"""index.html without a browser: self-contained, data blob escaped and complete, shared runs stored once."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from harness.report import emit, file_writers
from harness.report.html import embed_json
from tests.report.factory import XSS, big_matrix, sample_events


class _Scan(HTMLParser):
    """Collects tags, their attributes, and the text of the JSON data element."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.data = ""
        self._in_data = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_data = tag == "script" and dict(attrs).get("id") == "report-data"

    def handle_endtag(self, tag: str) -> None:
        self._in_data = False

    def handle_data(self, data: str) -> None:
        if self._in_data:
            self.data += data


@pytest.fixture(scope="module")
def page(report_dir: Path) -> str:
    return (report_dir / "index.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def scan(page: str) -> _Scan:
    parser = _Scan()
    parser.feed(page)
    return parser


def test_no_external_url_in_any_src_or_href(scan: _Scan) -> None:
    for tag, attrs in scan.tags:
        for name in ("src", "href", "action", "data"):
            value = attrs.get(name) or ""
            assert not re.match(r"\s*(https?:)?//", value, re.I), (tag, name, value)
    assert not any(tag == "link" and attrs.get("rel") == "stylesheet" for tag, attrs in scan.tags)
    assert [attrs.get("src") for tag, attrs in scan.tags if tag == "script"] == [None, None]


def test_nothing_can_fetch_from_the_network(page: str) -> None:
    assert "http://" not in page and "https://" not in page
    assert "default-src 'none'" in page  # the CSP forbids any fetch even if data ever carried a URL


def test_markup_in_provider_data_cannot_leave_the_data_element(page: str, scan: _Scan) -> None:
    # Exactly the two script elements of the template: the blob's `</script><script>` stayed text.
    assert page.count("<script") == 2
    assert "onerror=alert" not in page.replace("\\u003c", "<").split("<script", 1)[0]
    data = json.loads(scan.data)
    markup = next(c for c in data["cases"] if c["scenario"] == "markup")
    assert markup["reason"] == f"the frontend's own baseline fails ({XSS})"


def test_embed_json_escapes_every_script_breaker() -> None:
    text = embed_json({"a": "</script><!-- & \u2028 \ud800"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028 \ud800"}


def test_blob_holds_run_facts_cases_and_runs(scan: _Scan) -> None:
    data: dict[str, Any] = json.loads(scan.data)
    run = data["run"]
    assert run["run_id"] == "20250101-120000-abc"
    assert run["frontends"] == ["anthropic", "openai"]
    assert run["backends"] == ["anthropic", "openai", "gemini"]
    assert run["counts"]["proxy_bug_response"] == 2
    assert len(data["cases"]) == 7
    bug = next(c for c in data["cases"] if c["case_id"] == "text-basic[anthropic->openai,stream]")
    assert bug["first_divergence"]["path"] == "events[2].text"
    translated = data["runs"][bug["runs"]["translated"]]
    assert [k["name"] for k in translated["checks"] if not k["passed"]] == ["text_equals"]
    # The view the diff compares, as the verdict compared it: deltas coalesced, ids and models blanked.
    compared_events = data["views"][bug["compared"]["translated"]]["events"]
    assert compared_events[2] == {"kind": "text_delta", "index": 0, "text": "Hello wor"}
    assert compared_events[0]["id"] == "<id>"
    assert translated["wire"]["cassette"] == "openai/text-basic.yaml"


def test_a_baseline_shared_by_two_cases_is_stored_once(scan: _Scan) -> None:
    data = json.loads(scan.data)
    cases = {c["case_id"]: c for c in data["cases"]}
    one = cases["text-basic[openai->anthropic,stream]"]["runs"]
    two = cases["text-basic[anthropic->openai,stream]"]["runs"]
    # openai's own text-basic baseline is the frontend baseline of one case and the backend baseline of the other.
    assert one["baseline_frontend"] == two["baseline_backend"]
    assert one["baseline_backend"] == two["baseline_frontend"]
    assert cases["thinking[openai->gemini,nonstream]"]["runs"] == {}


def test_seven_hundred_cases_stay_a_reasonable_size(tmp_path: Path) -> None:
    cases = big_matrix(wire_chars=4000, deltas=40)
    emit(sample_events(cases), file_writers(tmp_path))
    size = (tmp_path / "index.html").stat().st_size
    data = json.loads(_data_of(tmp_path / "index.html"))
    assert len(data["cases"]) == 704
    # 704 translated runs + 176 backend baselines; the 88 frontend baselines are backend baselines too.
    assert len(data["runs"]) == 704 + 88 + 176 - 88
    assert size < 16_000_000, size


def _data_of(path: Path) -> str:
    parser = _Scan()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.data
