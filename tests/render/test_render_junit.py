"""JUnit renderer: golden output, validity against Jenkins' junit-10.xsd, mapping of statuses."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import xmlschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpudoctor
from gpudoctor.render.junit import render_junit
from gpudoctor.results import CheckResult, Report, Status
from tests.synthetic.sample_report import REPO_ROOT, check_golden, report_strategy, sample_report

XSD = REPO_ROOT / "tests" / "schemas" / "junit-10.xsd"


@pytest.fixture(autouse=True)
def pinned_version(monkeypatch):
    monkeypatch.setattr(gpudoctor, "__version__", "0.0.0+synthetic")


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(XSD))


def _suites(xml: str) -> dict[str, ET.Element]:
    root = ET.fromstring(xml.encode("utf-8"))
    return {suite.get("name"): suite for suite in root.findall("testsuite")}


def test_golden():
    check_golden("report-synthetic.xml", render_junit(sample_report()))


def test_xsd_names_its_source():
    head = XSD.read_text(encoding="utf-8")[:600]
    assert "jenkinsci/xunit-plugin" in head and "Commit:" in head


@pytest.mark.parametrize("warnings_as_failures", [False, True])
def test_validates_against_junit_xsd(schema, warnings_as_failures):
    schema.validate(render_junit(sample_report(), warnings_as_failures=warnings_as_failures))


def test_xsd_rejects_a_broken_document(schema):
    # A testcase without its required name: proves the validation can fail.
    broken = render_junit(sample_report()).replace('name="PCI001 NVIDIA devices on the PCI bus" ', "")
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        schema.validate(broken)


def test_declaration_and_root():
    xml = render_junit(sample_report())
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="gpudoctor"')
    root = ET.fromstring(xml.encode("utf-8"))
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("9", "1", "1")


def test_one_suite_per_area_in_display_order():
    suites = _suites(render_junit(sample_report()))
    assert list(suites) == ["pci", "driver", "nvml", "cuda", "cudnn", "environment", "gates", "acme_fabric"]
    driver = suites["driver"]
    assert {k: driver.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "2",
        "failures": "0",
        "errors": "0",
        "skipped": "0",
    }
    case = driver.find("testcase[@name='DRV002 Persistence mode']")
    assert case.get("classname") == "gpudoctor.driver"


def test_status_mapping():
    suites = _suites(render_junit(sample_report()))
    failure = suites["cuda"].find("testcase/failure")
    assert failure.get("type") == "problem"
    assert failure.get("message") == "CUDA 12.4 toolkit needs driver >= 550.54.14, found 535.54.03"
    assert "(>= 550.54.14 <r550>) & this one" in failure.text  # escaped on write, intact on read
    assert "$ apt-get install -y cuda-drivers-550  (needs root)" in failure.text
    error = suites["environment"].find("testcase/error")
    assert "Traceback (most recent call last):" in error.text
    assert suites["cudnn"].find("testcase/skipped").get("message") == "no CUDA toolkit to pair cuDNN with"
    warning_case = suites["driver"].find("testcase[@name='DRV002 Persistence mode']")
    assert warning_case.find("failure") is None
    assert "nvidia-smi -pm 1" in warning_case.find("system-out").text


def test_warnings_as_failures():
    suites = _suites(render_junit(sample_report(), warnings_as_failures=True))
    assert suites["driver"].get("failures") == "1"
    failure = suites["driver"].find("testcase/failure")
    assert failure.get("type") == "warning"


def test_control_characters_do_not_break_the_xml(schema):
    report = Report(
        results=[CheckResult("TST001", "gpus", "ansi \x1b[31mred", Status.PROBLEM, "nul \x00 here")],
        source={"kind": "live"},
    )
    xml = render_junit(report)
    schema.validate(xml)
    assert "\\x1b" in xml and "\\x00" in xml


def test_empty_report_is_valid(schema):
    xml = render_junit(Report(results=[], source={"kind": "live"}))
    schema.validate(xml)
    assert 'tests="0"' in xml


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(report=report_strategy(), warnings_as_failures=st.booleans())
def test_any_report_renders_valid_junit(schema, report, warnings_as_failures):
    xml = render_junit(report, warnings_as_failures=warnings_as_failures)
    schema.validate(xml)
    root = ET.fromstring(xml.encode("utf-8"))
    assert int(root.get("tests")) == len(report.results)
    assert len(root.findall("testsuite/testcase")) == len(report.results)


def test_next_step_is_a_property_of_its_areas_suite():
    suites = _suites(render_junit(sample_report()))
    properties = suites["cuda"].find("properties")
    assert properties is not None
    pairs = [(p.get("name"), p.get("value")) for p in properties.findall("property")]
    assert pairs == [
        ("gpudoctor.next_step", "Upgrade the NVIDIA driver to the 550 branch (CUDA001)"),
        ("gpudoctor.next_step.command", "apt-get update"),
        ("gpudoctor.next_step.command", "apt-get install -y cuda-drivers-550"),
    ]
    assert [name for name, suite in suites.items() if suite.find("properties") is not None] == ["cuda"]
