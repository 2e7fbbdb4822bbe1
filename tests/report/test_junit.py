"""junit.xml: one test case per case; new proxy bugs fail with the verdict and first divergence; the rest skip."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.report import emit, file_writers
from harness.report.junit import VALUE_LIMIT, xml_text
from harness.report.model import json_value
from harness.trace.model import DivergenceJSON
from tests.report.factory import case, sample_events


@pytest.fixture(scope="module")
def suite(report_dir: Path) -> ET.Element:
    root = ET.parse(report_dir / "junit.xml").getroot()  # parse proves well-formedness
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    return suites[0]


def _by_name(suite: ET.Element) -> dict[str, ET.Element]:
    return {tc.attrib["name"]: tc for tc in suite.findall("testcase")}


def test_suite_totals(suite: ET.Element) -> None:
    assert suite.attrib["name"] == "conformance"
    assert (suite.attrib["tests"], suite.attrib["failures"], suite.attrib["skipped"]) == ("7", "2", "4")
    assert suite.attrib["errors"] == "0"
    assert suite.attrib["time"] == "3.250"
    assert len(suite.findall("testcase")) == 7
    assert len(suite.findall("testcase/failure")) == 2
    assert len(suite.findall("testcase/skipped")) == 4


def test_testcase_names_classname_and_time(suite: ET.Element) -> None:
    tc = _by_name(suite)["text-basic[openai->anthropic,stream]"]
    assert tc.attrib["classname"] == "openai->anthropic"
    assert tc.attrib["time"] == "0.040"
    assert tc.find("failure") is None and tc.find("skipped") is None
    props = {p.attrib["name"]: p.attrib["value"] for p in tc.findall("properties/property")}
    assert props == {
        "verdict": "pass",
        "scenario": "text-basic",
        "frontend": "openai",
        "backend": "anthropic",
        "stream": "true",
    }


def test_proxy_bug_failure_carries_verdict_and_first_divergence(suite: ET.Element) -> None:
    failure = _by_name(suite)["text-basic[anthropic->openai,stream]"].find("failure")
    assert failure is not None
    assert failure.attrib["message"] == (
        'proxy_bug_response: translated run fails (text_equals); at events[2].text: expected "Hello world", '
        f'actual "Hello wor" [group {_group_id(suite, "text-basic")}: 1 case]'
    )
    assert failure.attrib["type"] == "proxy_bug_response"
    body = failure.text or ""
    assert "first divergence: events[2].text (stream event 2)" in body
    assert 'reference: "Hello world"' in body
    assert 'compared:  "Hello wor"' in body
    assert "translated failed checks: text_equals" in body


def test_request_side_bug_names_the_dropped_tools(suite: ET.Element) -> None:
    failure = _by_name(suite)["tools-stream[anthropic->openai,stream]"].find("failure")
    assert failure is not None
    assert failure.attrib["type"] == "proxy_bug_request"
    assert "first divergence: request.tools[0]" in (failure.text or "")
    assert "compared:  <missing>" in (failure.text or "")


def test_known_backend_baseline_and_unsupported_are_skipped(suite: ET.Element) -> None:
    cases = _by_name(suite)
    kinds = {name: tc.find("skipped") for name, tc in cases.items()}
    known = kinds["usage[openai->gemini,stream]"]
    assert known is not None and known.attrib["type"] == "known_failure"
    assert known.attrib["message"].startswith("known proxy_bug_response: gemini usage arrives late (issue 12) [group g")
    backend = kinds["rate-limit[openai->anthropic,nonstream]"]
    assert backend is not None and backend.attrib["type"] == "backend_issue"
    assert backend.attrib["message"].startswith("backend_issue: the backend's own baseline fails")
    out = cases["rate-limit[openai->anthropic,nonstream]"].findtext("system-out") or ""
    assert "baseline_backend failed checks: retry_after" in out
    unsupported = kinds["thinking[openai->gemini,nonstream]"]
    assert unsupported is not None and unsupported.attrib["message"] == "unsupported: declared unsupported: thinking"
    assert kinds["markup[anthropic->gemini,nonstream]"] is not None


def test_markup_in_provider_text_is_escaped(report_dir: Path, suite: ET.Element) -> None:
    skipped = _by_name(suite)["markup[anthropic->gemini,nonstream]"].find("skipped")
    assert skipped is not None
    assert "</script><script>" in skipped.attrib["message"]  # round-trips as text
    assert "<script>" not in (report_dir / "junit.xml").read_text(encoding="utf-8")


def test_control_characters_in_provider_data_keep_the_xml_well_formed(tmp_path: Path) -> None:
    bad = case("ctl", "openai", "gemini", "proxy_bug_response", "stream had \x00 and \x1b[31m in it")
    emit(sample_events([bad]), file_writers(tmp_path))
    failure = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.attrib["message"].startswith("proxy_bug_response: stream had \\x00 and \\x1b[31m in it [group g")
    assert xml_text("tab\tok\nline \ud800") == "tab\tok\nline \\xd800"


def _group_id(suite: ET.Element, scenario: str) -> str:
    for prop in suite.iter("property"):
        if prop.attrib["name"] == "group" and f"(e.g. {scenario}[" in prop.attrib["value"]:
            return prop.attrib["value"].split(":")[0]
    raise AssertionError(f"no group of {scenario}")


def test_suite_lists_each_group_once_and_cases_name_theirs(suite: ET.Element) -> None:
    groups = [p.attrib["value"] for p in suite.find("properties").iter("property") if p.attrib["name"] == "group"]
    assert len(groups) == 5  # two request/response bugs, the known bug, the backend and the baseline issue
    text_group = next(g for g in groups if "text-basic" in g)
    assert text_group.endswith(
        "1 x proxy_bug_response: text differs at events[*].text: translated run fails (text_equals) "
        "(e.g. text-basic[anthropic->openai,stream])"
    )
    case = _by_name(suite)["text-basic[anthropic->openai,stream]"]
    ids = [p.attrib["value"] for p in case.iter("property") if p.attrib["name"] == "group"]
    assert ids == [text_group.split(":")[0]]
    passing = _by_name(suite)["text-basic[openai->anthropic,stream]"]
    assert not [p for p in passing.iter("property") if p.attrib["name"] == "group"]


def test_a_failure_message_shortens_long_values(tmp_path: Path) -> None:
    long = "x" * 500
    first = DivergenceJSON(path="events[2].text", left=long, right=long[:-1], event_index=2, change="values_changed")
    bug = case(
        "text-basic", "anthropic", "openai", "proxy_bug_response", "translated run fails (text_equals)", first=first
    )
    emit(sample_events([bug]), file_writers(tmp_path))
    failure = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite/testcase/failure")
    assert failure is not None
    message = failure.attrib["message"]
    expected = json_value(long, VALUE_LIMIT)
    assert len(expected) == VALUE_LIMIT and expected.endswith("\u2026")
    assert f"; at events[2].text: expected {expected}, actual {expected} [group g" in message
    assert long in (failure.text or "")  # the body keeps the whole value
