"""junit.xml is written as text directly (ElementTree's serializer took about a second over a full matrix); the
text must be exactly what building the tree with ElementTree, `ET.indent` and `ET.tostring` gives. The oracle below
is that tree-building code, kept here as the reference."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.report.groups import CaseGroup, failing, groups_of
from harness.report.junit import _details, _group_text, _outcome, render_junit, xml_text
from harness.report.model import MatrixReport
from harness.trace.model import CaseResult, Deviation
from tests.report.factory import case, sample_cases


def _oracle_testcase(parent: ET.Element, result: CaseResult, strict: bool, groups: list[CaseGroup]) -> str | None:
    element = ET.SubElement(
        parent,
        "testcase",
        classname=xml_text(f"{result.frontend}->{result.backend}"),
        name=xml_text(result.case_id),
        time=f"{result.duration_ms / 1000:.3f}",
    )
    props = ET.SubElement(element, "properties")
    for name, value in (
        ("verdict", result.verdict),
        ("scenario", result.scenario),
        ("frontend", result.frontend),
        ("backend", result.backend),
        ("stream", "true" if result.stream else "false"),
    ):
        ET.SubElement(props, "property", name=name, value=xml_text(value))
    for deviation in result.deviations:
        ET.SubElement(
            props, "property", name="wire_deviation", value=xml_text(f"{deviation.rule}: {deviation.message}")
        )
    for group in groups:
        ET.SubElement(props, "property", name="group", value=group.id)
    outcome = _outcome(result, strict)
    if outcome is None:
        if result.deviations:
            ET.SubElement(element, "system-out").text = xml_text(_details(result))
        return None
    tag, kind, message = outcome
    if groups:
        group = groups[0]
        message += f" [group {group.id}: {len(group.cases)} case{'s' if len(group.cases) != 1 else ''}]"
    details = xml_text(_details(result))
    child = ET.SubElement(element, tag, message=xml_text(message), type=kind)
    if tag in ("failure", "error"):
        child.text = details
    ET.SubElement(element, "system-out").text = details
    return tag


def _oracle(report: MatrixReport) -> str:
    root = ET.Element("testsuites", name="conformance")
    suite = ET.SubElement(root, "testsuite", name="conformance")
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="run_id", value=xml_text(report.run_id))
    groups = failing(report.cases)
    for group in groups:
        ET.SubElement(properties, "property", name="group", value=xml_text(_group_text(group)))
    group_of = groups_of(groups)
    tally = {"failure": 0, "skipped": 0, "error": 0}
    for result in report.cases:
        tag = _oracle_testcase(suite, result, report.strict, group_of.get(result.case_id, []))
        if tag is not None:
            tally[tag] += 1
    for element in (root, suite):
        element.set("tests", str(len(report.cases)))
        element.set("failures", str(tally["failure"]))
        element.set("errors", str(tally["error"]))
        element.set("skipped", str(tally["skipped"]))
        element.set("time", f"{report.duration_s:.3f}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _report(cases: list[CaseResult], *, strict: bool = False, run_id: str = "r1") -> MatrixReport:
    return MatrixReport(
        run_id=run_id, sut="s", frontends=[], backends=[], scenarios=[], cases=cases, duration_s=3.25, strict=strict
    )


def _with_deviations(result: CaseResult, message: str) -> CaseResult:
    found = [Deviation(rule="openai.created_present", message=message), Deviation(rule="x.y", message="two")]
    return result.model_copy(update={"deviations": found})


def test_the_sample_report_is_written_as_elementtree_writes_it() -> None:
    cases = sample_cases()
    cases += [_with_deviations(cases[0], 'a "quoted"\tline\r\nand <more> & more'), _with_deviations(cases[1], "z")]
    for strict in (False, True):
        report = _report(cases, strict=strict)
        assert render_junit(report) == _oracle(report)


def test_an_empty_report_is_written_as_elementtree_writes_it() -> None:
    assert render_junit(_report([])) == _oracle(_report([]))


_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)


@settings(max_examples=60, deadline=None)
@given(reason=_TEXT, message=_TEXT, scenario=_TEXT.filter(bool), run_id=_TEXT)
def test_any_provider_text_is_written_as_elementtree_writes_it(
    reason: str, message: str, scenario: str, run_id: str
) -> None:
    bug = case(scenario, "openai", "gemini", "proxy_bug_response", reason)
    error = case(scenario, "anthropic", "openai", "harness_error", reason, stream=False)
    passing = _with_deviations(case(scenario, "gemini", "openai", "pass", reason), message)
    skipped = case(scenario, "openai", "bedrock", "unsupported", message)
    for strict in (False, True):
        report = _report([bug, error, passing, skipped], strict=strict, run_id=run_id)
        assert render_junit(report) == _oracle(report)
