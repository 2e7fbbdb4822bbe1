"""`junit.xml`: one test case per conformance case, for CI systems that display JUnit results.

Mapping of verdicts (chosen so that the JUnit view agrees with the gate's exit code):

- pass: a passing test case.
- proxy_bug_request / proxy_bug_response (new): `<failure message="<verdict>: <reason>; at <path>: expected
  <value>, actual <value>" type="<verdict>">` (the headline divergence, values shortened) whose body is that
  divergence whole and the failed checks.
- a proxy bug listed in the known-failures file: `<skipped type="known_failure" message="known <verdict>:
  <known reason>">`, as pytest reports an xfail.
- backend_issue / baseline_issue: `<skipped type="<verdict>" message="<verdict>: <reason>">`: the case could
  not test the proxy, which is not the proxy's failure.
- unsupported: `<skipped type="unsupported" message="unsupported: <reason>">`.
- harness_error: `<error type="harness_error" message="harness_error: <reason>">`: nothing was judged (a missing
  cassette, a system under test that cannot be reached, a harness bug); the gate exits 2.
- wire deviations (any verdict): one `wire_deviation` property each (`<rule>: <what>`) and a warning line in
  `<system-out>`; under `--strict` a case that would pass is a `<failure type="wire_deviation">`.

Every non-passing case also carries the details in `<system-out>`, and every case has `<properties>` with its
verdict, scenario, frontend, backend and stream flag.

Grouping (as on the terminal and in summary.json): the suite's `<properties>` hold one `group` property per group
of failing cases (`<id>: <count> x <verdict>: <cause>[: <reason>] (e.g. <case>)`), and each of those cases a
`group` property per group it is in (its headline cause's first), and its failure message ends with `[group <id>:
<count> cases]`, so a CI view that lists failures shows which ones are the same bug.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from harness.checks import explain
from harness.diff import Compared
from harness.report.groups import CaseGroup, failing, groups_of, settled
from harness.report.model import MatrixReport, ReadyTextWriter, failed_checks, json_value, ready_part
from harness.runner.run_events import UnitWork
from harness.trace.model import CaseResult, Verdict

# XML 1.0 cannot carry most C0 controls even as character references; provider data may contain them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """`text` with characters XML 1.0 cannot hold written as `\\xNN` escapes."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _details(case: CaseResult) -> str:
    lines = [f"verdict: {case.verdict}", f"reason: {case.reason}"]
    if case.known:
        lines.append(f"known failure: {case.known}")
    first = case.first_divergence
    if first is not None:
        where = f" (stream event {first.event_index})" if first.event_index is not None else ""
        lines += [
            f"first divergence: {first.path}{where}",
            f"  reference: {json_value(first.left)}",
            f"  compared:  {json_value(first.right)}",
        ]
    for role, run in case.runs.items():
        failed = failed_checks(run)
        if failed:
            lines.append(f"{role} failed checks: {', '.join(failed)}")
        if run.error:
            lines.append(f"{role} error: {run.error}")
    lines += [f"why {name} matters: {why}" for name, why in explain(case)]
    more = len(case.request_divergences) + len(case.response_divergences) - (1 if first is not None else 0)
    if more > 0:
        lines.append(f"{more} more divergence(s): see the case view in index.html")
    lines += [f"wire deviation (warning): {d.rule}: {d.message} [rule from: {d.source}]" for d in case.deviations]
    return "\n".join(lines) + "\n"


def _outcome(case: CaseResult, strict: bool) -> tuple[str, str, str] | None:
    """(element, type, message) for a non-passing case, None for a pass."""
    if case.verdict.is_harness_error:
        return ("error", case.verdict, f"{case.verdict}: {case.reason}")
    if case.verdict is Verdict.PASS:
        if strict and case.deviations:
            rules = ", ".join(dict.fromkeys(d.rule for d in case.deviations))
            return ("failure", "wire_deviation", f"wire deviation (--strict): {rules}")
        return None
    if case.verdict.is_proxy_bug:
        if case.known:
            return ("skipped", "known_failure", f"known {case.verdict}: {case.known}")
        return ("failure", case.verdict, f"{case.verdict}: {case.reason}{_values(case)}")
    return ("skipped", case.verdict, f"{case.verdict}: {case.reason}")


VALUE_LIMIT = 60
"""Longest divergence value in a failure message (the body has the whole value)."""


def _values(case: CaseResult) -> str:
    """`; at <path>: expected <value>, actual <value>` for the case's headline divergence, values shortened."""
    first = case.first_divergence
    if first is None:
        return ""
    expected, actual = json_value(first.left, VALUE_LIMIT), json_value(first.right, VALUE_LIMIT)
    return f"; at {first.path}: expected {expected}, actual {actual}"


def _group_text(group: CaseGroup) -> str:
    reason = f": {group.reason}" if group.reason != group.title else ""
    return f"{group.id}: {len(group.cases)} x {group.verdict}: {group.title}{reason} (e.g. {group.example.case_id})"


_ATTR = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#09;"}
)
_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def _attrs(pairs: tuple[tuple[str, str], ...]) -> str:
    """` name="value"` for each pair, escaped as ElementTree escapes attribute values."""
    return "".join(f' {name}="{value.translate(_ATTR)}"' for name, value in pairs)


def _testcase(case: CaseResult, strict: bool, groups: list[CaseGroup]) -> tuple[str, str | None]:
    """One `<testcase>` element as indented XML text (the text `ET.indent` + `ET.tostring` give the same tree; a
    test holds the two equal) and its outcome tag (failure, error, skipped or None). Written out directly: the
    full matrix has ~17,000 cases, and ElementTree's serializer took about a second over them."""
    head = (
        ("classname", xml_text(f"{case.frontend}->{case.backend}")),
        ("name", xml_text(case.case_id)),
        ("time", f"{case.duration_ms / 1000:.3f}"),
    )
    props = [
        ("verdict", str(case.verdict)),
        ("scenario", case.scenario),
        ("frontend", case.frontend),
        ("backend", case.backend),
        ("stream", "true" if case.stream else "false"),
    ]
    props = [(name, xml_text(value)) for name, value in props]
    props += [("wire_deviation", xml_text(f"{d.rule}: {d.message}")) for d in case.deviations]
    props += [("group", group.id) for group in groups]  # its headline cause's group first
    lines = [f"    <testcase{_attrs(head)}>", "      <properties>"]
    lines += [f"        <property{_attrs((('name', name), ('value', value)))} />" for name, value in props]
    lines.append("      </properties>")
    outcome = _outcome(case, strict)
    tag: str | None = None
    if outcome is None:
        if case.deviations:
            lines.append(f"      <system-out>{xml_text(_details(case)).translate(_TEXT)}</system-out>")
    else:
        tag, kind, message = outcome
        if groups:
            group = groups[0]
            message += f" [group {group.id}: {len(group.cases)} case{'s' if len(group.cases) != 1 else ''}]"
        details = xml_text(_details(case)).translate(_TEXT)
        attrs = _attrs((("message", xml_text(message)), ("type", str(kind))))
        body = f">{details}</{tag}>" if tag in ("failure", "error") else " />"
        lines.append(f"      <{tag}{attrs}{body}")
        lines.append(f"      <system-out>{details}</system-out>")
    lines.append("    </testcase>")
    return "\n".join(lines), tag


def unit_testcases(cases: Sequence[CaseResult], judged: Mapping[str, Compared] | None = None) -> str:
    """The `<testcase>` texts of a unit's settled cases (`model.ready_part`), made where the unit was judged."""
    return ready_part((case.case_id, _testcase(case, False, [])[0]) for case in cases if settled(case))


def render_junit(report: MatrixReport, ready: Mapping[str, str] | None = None) -> str:
    """The JUnit XML document of a finished run (`ready`: `<testcase>` texts of settled cases made already, by case
    id; the others are written here)."""
    groups = failing(report.cases)
    group_of = groups_of(groups)
    tally = {"failure": 0, "skipped": 0, "error": 0}
    cases = []
    made = ready or {}
    for case in report.cases:
        text = made.get(case.case_id)
        if text is not None and settled(case):
            tag = None if case.verdict is Verdict.PASS else "skipped"
        else:
            text, tag = _testcase(case, report.strict, group_of.get(case.case_id, []))
        cases.append(text)
        if tag is not None:
            tally[tag] += 1
    totals = (
        ("tests", str(len(report.cases))),
        ("failures", str(tally["failure"])),
        ("errors", str(tally["error"])),
        ("skipped", str(tally["skipped"])),
        ("time", f"{report.duration_s:.3f}"),
    )
    suite = (("name", "conformance"), *totals)
    properties = [("run_id", xml_text(report.run_id))]
    properties += [("group", xml_text(_group_text(group))) for group in groups]
    lines = [
        "<?xml version='1.0' encoding='utf-8'?>",
        f"<testsuites{_attrs(suite)}>",
        f"  <testsuite{_attrs(suite)}>",
        "    <properties>",
        *(f"      <property{_attrs((('name', name), ('value', value)))} />" for name, value in properties),
        "    </properties>",
        *cases,
        "  </testsuite>",
        "</testsuites>",
    ]
    return "\n".join(lines) + "\n"


class JUnitWriter(ReadyTextWriter):
    """Writes `junit.xml`. The `<testcase>` of each settled case (most of a run) is written where its unit was
    judged (`unit_work`, in the worker processes of a parallel run), so little is left to the end of the run."""

    file_name = "junit.xml"

    key = "junit"

    def texts(self) -> UnitWork:
        """`unit_testcases`."""
        return unit_testcases

    def render(self, report: MatrixReport) -> str:
        """The JUnit XML text."""
        return render_junit(report, self.ready)
