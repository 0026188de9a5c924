"""The report as JUnit XML, so CI systems show each check as a test.

One ``<testsuite>`` per area, one ``<testcase>`` per check.  Problems are
failures, crashed checks are errors (a gpudoctor bug, not a verdict), checks
with nothing to judge are skipped.  Warnings pass, with their findings in
``<system-out>``, unless ``--fail-on warning`` asks for them to fail too.  The
report's next step is a ``<properties>`` block on the suite of its check's area.
Built with ElementTree so every attribute and text is escaped properly; the
attributes used are those of the Jenkins xUnit plugin's junit-10.xsd.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gpudoctor.render.common import finding_text_lines, next_step_headline, shown_findings
from gpudoctor.results import CheckResult, NextStep, Report, Status, group_by_area

# Characters XML 1.0 cannot carry at all (not even escaped): ANSI escapes or NULs
# captured from a tool's output would otherwise make the whole file unreadable.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _XML_ILLEGAL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"


def _findings_text(result: CheckResult, *, include_info: bool = False) -> str:
    lines = [result.summary] if result.summary else []
    for finding in shown_findings(result, include_info=include_info):
        lines += finding_text_lines(finding)
    return "\n".join(lines)


def _testcase(parent: ET.Element, area: str, result: CheckResult, *, warnings_as_failures: bool) -> str:
    """Add one testcase; return its outcome ('failure', 'error', 'skipped' or 'passed')."""
    case = ET.SubElement(
        parent,
        "testcase",
        {
            "classname": _xml_text(f"gpudoctor.{area}"),
            "name": _xml_text(f"{result.code} {result.title}"),
            "time": _seconds(result.duration_s),
        },
    )
    summary = _xml_text(result.summary)
    status = result.status
    if status is Status.PROBLEM or (status is Status.WARNING and warnings_as_failures):
        node = ET.SubElement(case, "failure", {"message": summary, "type": status.value})
        node.text = _xml_text(_findings_text(result))
        return "failure"
    if status is Status.CRASHED:
        node = ET.SubElement(case, "error", {"message": summary, "type": "crashed"})
        node.text = _xml_text(result.traceback or result.summary)
        return "error"
    if status is Status.NOT_APPLICABLE:
        ET.SubElement(case, "skipped", {"message": summary})
        return "skipped"
    if status in (Status.WARNING, Status.CONSEQUENCE):
        ET.SubElement(case, "system-out").text = _xml_text(_findings_text(result))
    return "passed"


def _next_step_properties(suite: ET.Element, step: NextStep) -> None:
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", {"name": "gpudoctor.next_step", "value": _xml_text(next_step_headline(step))})
    for command in step.fix.commands:
        ET.SubElement(properties, "property", {"name": "gpudoctor.next_step.command", "value": _xml_text(command)})


def render_junit(report: Report, *, warnings_as_failures: bool = False) -> str:
    root = ET.Element("testsuites", {"name": "gpudoctor"})
    totals = {"tests": 0, "failure": 0, "error": 0, "skipped": 0, "time": 0.0}
    step = report.next_step()
    for area, results in group_by_area(report.results):
        suite = ET.SubElement(root, "testsuite", {"name": _xml_text(area)})
        if step is not None and any(r.code == step.code for r in results):
            _next_step_properties(suite, step)
        outcomes = [_testcase(suite, area, r, warnings_as_failures=warnings_as_failures) for r in results]
        time = sum(r.duration_s for r in results)
        suite.set("tests", str(len(results)))
        suite.set("failures", str(outcomes.count("failure")))
        suite.set("errors", str(outcomes.count("error")))
        suite.set("skipped", str(outcomes.count("skipped")))
        suite.set("time", _seconds(time))
        totals["tests"] += len(results)
        totals["failure"] += outcomes.count("failure")
        totals["error"] += outcomes.count("error")
        totals["skipped"] += outcomes.count("skipped")
        totals["time"] += time
    # The xUnit schema has no "skipped" on <testsuites>; the per-suite counts carry it.
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failure"]))
    root.set("errors", str(totals["error"]))
    root.set("time", _seconds(totals["time"]))
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
