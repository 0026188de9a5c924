"""JSON renderer: golden output, validity against the generated schema (and that the schema can say no)."""

from __future__ import annotations

import copy
import json
import pathlib

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings

import gpudoctor
from gpudoctor.render.json_report import SCHEMA_VERSION, render_json, report_to_dict
from gpudoctor.render.report_schema import report_schema
from gpudoctor.results import CheckResult, Report, Status
from tests.synthetic.sample_report import check_golden, report_strategy, sample_report


@pytest.fixture(autouse=True)
def pinned_version(monkeypatch):
    monkeypatch.setattr(gpudoctor, "__version__", "0.0.0+synthetic")


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _sample_doc() -> dict:
    report = sample_report()
    return json.loads(render_json(report, report.exit_code()))


def test_golden():
    report = sample_report()
    check_golden("report-synthetic.json", render_json(report, report.exit_code()))


def test_output_validates(validator):
    validator.validate(_sample_doc())


def test_empty_report_validates(validator):
    doc = report_to_dict(Report(results=[], source={"kind": "live"}), 0)
    validator.validate(doc)
    assert doc["summary"]["worst"] == "ok"


def test_stable_top_level_shape():
    doc = _sample_doc()
    assert list(doc) == [
        "schema_version",
        "tool",
        "source",
        "machine",
        "summary",
        "next_step",
        "internal_errors",
        "results",
        "sections",
    ]
    assert doc["schema_version"] == SCHEMA_VERSION == report_schema()["properties"]["schema_version"]["const"]
    assert doc["tool"] == {"name": "gpudoctor", "version": "0.0.0+synthetic"}
    assert doc["summary"] == {
        "counts": {"ok": 4, "warning": 1, "problem": 1, "not_applicable": 2, "crashed": 1, "consequence": 0},
        "exit_code": 1,
        "worst": "problem",
    }
    assert [r["code"] for r in doc["results"]] == [r.code for r in sample_report().results]
    assert doc["sections"] == {"example_section": {"note": "SYNTHETIC"}}
    assert doc["internal_errors"] == []


def test_next_step_is_the_first_fix_from_the_bus_upwards():
    # The sample's only problem with a fix is CUDA001; DRV002's warning comes earlier but is a warning.
    step = _sample_doc()["next_step"]
    assert step["code"] == "CUDA001"
    assert step["message"].startswith("CUDA 12.4 toolkit needs a newer driver")
    assert step["fix"]["commands"] == ["apt-get update", "apt-get install -y cuda-drivers-550"]
    assert step["fix"]["needs_root"] is True


def test_no_next_step_is_null(validator):
    doc = report_to_dict(
        Report(results=[CheckResult("TST001", "gpus", "t", Status.OK, "s")], source={"kind": "live"}), 0
    )
    validator.validate(doc)
    assert doc["next_step"] is None


def test_internal_errors_make_exit_3_unless_worse(validator):
    report = Report(
        results=[CheckResult("TST001", "gpus", "t", Status.OK, "s")],
        source={"kind": "live"},
        internal_errors=["check module 'broken' (entry point 'broken') failed to load: ImportError: x"],
    )
    assert report.exit_code() == 3
    doc = report_to_dict(report, report.exit_code())
    validator.validate(doc)
    assert doc["internal_errors"] == report.internal_errors
    report.results.append(CheckResult("TST002", "gpus", "t", Status.PROBLEM, "s"))
    assert report.exit_code() == 1


def test_counts_cover_every_status():
    counts = report_to_dict(Report(results=[], source={"kind": "live"}), 0)["summary"]["counts"]
    assert set(counts) == {s.value for s in Status}


@pytest.mark.parametrize(
    ("statuses", "worst"),
    [
        ([Status.NOT_APPLICABLE], "not_applicable"),
        ([Status.OK, Status.NOT_APPLICABLE], "ok"),
        ([Status.OK, Status.WARNING], "warning"),
        ([Status.WARNING, Status.CRASHED], "crashed"),
        ([Status.CRASHED, Status.PROBLEM, Status.OK], "problem"),
    ],
)
def test_worst(statuses, worst):
    report = Report(
        results=[CheckResult(f"TST{i:03d}", "gpus", "t", s, "s") for i, s in enumerate(statuses)],
        source={"kind": "live"},
    )
    assert report_to_dict(report, 0)["summary"]["worst"] == worst


def test_unserialisable_data_still_renders_valid(validator):
    report = Report(
        results=[CheckResult("TST001", "gpus", "t", Status.OK, "s", data={"path": pathlib.Path("/dev/nvidia0")})],
        source={"kind": "snapshot", "path": "x"},
    )
    doc = json.loads(render_json(report, 0))
    validator.validate(doc)
    assert doc["results"][0]["data"]["path"] == "/dev/nvidia0"


def _broken(mutate) -> dict:
    doc = _sample_doc()
    mutate(doc)
    return doc


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda d: d["results"][0].update(status="fine"), id="bad-status"),
        pytest.param(lambda d: d["results"][0].update(code="drv1"), id="bad-code"),
        pytest.param(lambda d: d["results"][0].update(duration_s=-1), id="negative-duration"),
        pytest.param(lambda d: d["results"][1]["findings"][0].update(severity="fatal"), id="bad-severity"),
        pytest.param(lambda d: d["results"][1]["findings"][0]["fix"].update(needs_root="yes"), id="needs-root-str"),
        pytest.param(lambda d: d["summary"]["counts"].pop("crashed"), id="missing-count"),
        pytest.param(lambda d: d.update(extra=1), id="unknown-top-level-key"),
        pytest.param(lambda d: d.update(schema_version=1), id="wrong-schema-version"),
        pytest.param(lambda d: d["next_step"].pop("fix"), id="next-step-without-fix"),
        pytest.param(lambda d: d.pop("next_step"), id="missing-next-step"),
        pytest.param(lambda d: d["source"].pop("kind"), id="source-without-kind"),
    ],
)
def test_invalid_documents_are_rejected(validator, mutate):
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(_broken(mutate))


def test_report_to_dict_does_not_alias_report():
    report = sample_report()
    doc = report_to_dict(report, 1)
    before = copy.deepcopy(report.source)
    doc["source"]["kind"] = "changed"
    assert report.source == before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(report=report_strategy())
def test_any_report_renders_valid_json(validator, report):
    doc = json.loads(render_json(report, report.exit_code()))
    validator.validate(doc)
    assert sum(doc["summary"]["counts"].values()) == len(report.results)
