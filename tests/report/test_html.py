"""index.html without a browser: self-contained, the index escaped and complete, case details in compressed packs
(decoded here as the page decodes them), shared runs stored once per pack, and small for a big matrix."""

from __future__ import annotations

import base64
import gzip
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from harness.report import emit, file_writers
from harness.report.html import embed_json
from harness.report.html_case import Pack, compared_payload, json_text
from harness.report.timeline import timeline
from tests.report.factory import XSS, big_matrix, dropped_call, sample_events


class _Scan(HTMLParser):
    """Collects tags, their attributes, and the text of the JSON data element."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.data = ""
        self.packs: dict[str, str] = {}
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = dict(attrs).get("id") if tag == "script" else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "report-data":
            self.data += data
        elif self._in is not None and self._in.startswith("pack-"):
            self.packs[self._in] = self.packs.get(self._in, "") + data

    def pack(self, number: int) -> dict[str, Any]:
        """A pack decoded as the page decodes it (base64, then gzip, then JSON)."""
        data: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(self.packs[f"pack-{number}"])))
        return data

    def case(self, case_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """A case's details and the pack that holds them, found through the index's row."""
        index = json.loads(self.data)
        row = next(r for r in index["cases"] if r[0] == case_id)
        pack = self.pack(row[12])
        return pack["cases"][case_id], pack


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
    assert all(attrs.get("src") is None for tag, attrs in scan.tags if tag == "script")


def test_nothing_can_fetch_from_the_network(page: str) -> None:
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page
    assert "default-src 'none'" in page  # the CSP forbids any fetch even if data ever carried a URL
    assert "fetch(" not in page and "XMLHttpRequest" not in page


def test_markup_in_provider_data_cannot_leave_the_data_elements(page: str, scan: _Scan) -> None:
    # The template's script elements only: the index JSON and one inert element per pack, then the code.
    scripts = [attrs for tag, attrs in scan.tags if tag == "script"]
    assert [a.get("id") for a in scripts] == ["report-data", *sorted(scan.packs, key=lambda k: int(k[5:])), None]
    assert all(re.fullmatch(r"[A-Za-z0-9+/=\s]*", text) for text in scan.packs.values())  # base64 only
    assert "<img" not in page and "</script><script>" not in page  # escaped as \\u003c inside the JSON
    index = json.loads(scan.data)
    assert f"the frontend's own baseline fails ({XSS})" in index["strings"]
    detail, _ = scan.case("markup[anthropic->gemini,nonstream]")
    assert detail["reason"] == f"the frontend's own baseline fails ({XSS})"


def test_embed_json_escapes_every_script_breaker() -> None:
    text = embed_json({"a": "</script><!-- & \u2028 \ud800"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028 \ud800"}


def test_index_holds_run_facts_verdicts_axes_and_one_row_per_case(scan: _Scan) -> None:
    index: dict[str, Any] = json.loads(scan.data)
    assert index["run"]["run_id"] == "20250101-120000-abc"
    assert index["run"]["new_proxy_bugs"] == 2
    assert index["frontends"] == ["anthropic", "openai"]
    assert index["backends"] == ["anthropic", "openai", "gemini"]
    assert [v["id"] for v in index["verdicts"]][:2] == ["pass", "proxy_bug_request"]
    assert index["verdicts"][2]["label"] == "proxy bug (response)"
    assert len(index["cases"]) == 7
    row = next(r for r in index["cases"] if r[0] == "text-basic[anthropic->openai,stream]")
    assert index["strings"][row[7]] == "events[2].text"
    assert len(row[8]) == 1  # one cause: one group
    group = index["groups"][row[8][0]]
    assert group[2] == "events[*].text" and group[4] == 1
    assert index["strings"][group[5]] == "text differs at events[*].text"
    assert "runs" not in index and "views" not in index  # details live in the packs


def test_case_details_carry_runs_compared_views_event_diff_and_commands(scan: _Scan) -> None:
    detail, pack = scan.case("text-basic[anthropic->openai,stream]")
    assert detail["first_divergence"]["path"] == "events[2].text"
    translated = pack["runs"][detail["runs"]["translated"]]
    assert [k["name"] for k in translated["checks"] if not k["passed"]] == ["text_equals"]
    # The view the diff compares, as the verdict compared it: deltas coalesced, ids and models blanked.
    compared_events = pack["views"][detail["compared"]["translated"]]["events"]
    assert compared_events[2] == {"kind": "text_delta", "index": 0, "text": "Hello wor"}
    assert compared_events[0]["id"] == "<id>"
    assert translated["wire"]["cassette"] == "openai/text-basic.yaml"
    assert [r["op"] for r in detail["event_diff"]["rows"]] == ["same", "changed", "same"]
    assert detail["commands"]["rerun"] == (
        "conformance run --scenario text-basic --frontend anthropic --backend openai --streaming stream"
    )
    assert detail["commands"]["diff"].startswith("conformance diff ")
    assert "--left-role baseline_frontend --right-role translated" in detail["commands"]["diff"]


def test_a_baseline_shared_by_two_cases_is_stored_once(scan: _Scan) -> None:
    one, pack = scan.case("text-basic[openai->anthropic,stream]")
    two, same_pack = scan.case("text-basic[anthropic->openai,stream]")
    assert pack == same_pack  # one scenario and streaming mode: one pack
    # openai's own text-basic baseline is the frontend baseline of one case and the backend baseline of the other.
    assert one["runs"]["baseline_frontend"] == two["runs"]["baseline_backend"]
    assert one["runs"]["baseline_backend"] == two["runs"]["baseline_frontend"]
    thinking, _ = scan.case("thinking[openai->gemini,nonstream]")
    assert thinking["runs"] == {}


def test_seven_hundred_cases_stay_small(tmp_path: Path) -> None:
    cases = big_matrix(wire_chars=4000, deltas=40)
    emit(sample_events(cases), file_writers(tmp_path))
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    scan = _Scan()
    scan.feed(page)
    assert len(json.loads(scan.data)["cases"]) == 704
    packed = sum(len(json.dumps(scan.pack(i))) for i in range(len(scan.packs)))
    # 704 translated runs + 176 backend baselines (the 88 frontend baselines are backend baselines too), each
    # with 8 kB of wire: several MB of details, compressed many times over.
    runs = sum(len(scan.pack(i)["runs"]) for i in range(len(scan.packs)))
    assert runs == 704 + 88 + 176 - 88
    assert packed > 8 * len(page), (packed, len(page))
    assert len(page) < 1_000_000, len(page)


def test_a_shared_baseline_timeline_is_stored_once() -> None:
    """A timeline is as long as its stream; the frontend baseline shared by every backend's case is kept once."""
    pack = Pack("reports/r", [])
    for backend in ("openai", "gemini", "mistral"):
        pack.add(dropped_call(backend))
    cases = list(pack.payload()["cases"].values())
    keys = {c["timelines"]["baseline_frontend"] for c in cases}
    assert len(keys) == 1
    line = pack.payload()["timelines"][keys.pop()]
    assert len(line["events"]) == 11 and line["events"][0] == ["message_start", 1.0, 2.5]
    # The translated runs deliver the same stream at the same times: one entry too.
    assert len(pack.payload()["timelines"]) == 2


def test_a_pack_stores_each_run_view_and_timeline_as_the_data_it_stands_for() -> None:
    """The blob is spliced from each payload's JSON text, encoded once: read back, a run is its dump without the
    case and role (one baseline serves many cases), a view is the compared view, a timeline its run's."""
    case = dropped_call("openai")
    pack = Pack("reports/r", [])
    pack.add(case)
    data = json.loads(pack.text())
    assert data == pack.payload()
    detail = data["cases"][case.case_id]
    for role, run in case.runs.items():
        assert data["runs"][detail["runs"][role]] == run.model_dump(
            mode="json", by_alias=True, exclude={"case_id", "role"}
        )
    compared, _ = compared_payload(case)
    assert {role: data["views"][key] for role, key in detail["compared"].items()} == compared
    assert {role: data["timelines"][key] for role, key in detail["timelines"].items()} == {
        role: timeline(case.runs[role]) for role in ("baseline_frontend", "translated")
    }
    # Non-ASCII and markup are kept as they are (the page escapes the blob, not the pack).
    assert "\u00e9" in json_text({"a": "\u00e9"}) and json.loads(json_text({"a": XSS})) == {"a": XSS}
