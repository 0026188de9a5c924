"""The report's schema is generated from the report's types: the committed file, the command and the
golden report all agree with it, and the constants it is made from have one home each."""

from __future__ import annotations

import copy
import json
from importlib import resources

import jsonschema
import pytest

from gpudoctor.api import CODE_PATTERN
from gpudoctor.cli import main as cli_main
from gpudoctor.render.common import STATUS_ORDER
from gpudoctor.render.report_schema import SCHEMA_FILE, report_schema, schema_text
from gpudoctor.report_json import CHECK_CODE_PATTERN, SCHEMA_ID, SCHEMA_VERSION, CountsJson
from tests.synthetic.sample_report import GOLDEN_DIR


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _golden() -> dict:
    return json.loads((GOLDEN_DIR / "report-synthetic.json").read_text(encoding="utf-8"))


def test_committed_file_is_the_generated_schema_byte_for_byte():
    shipped = resources.files("gpudoctor.render").joinpath("report.schema.json").read_text(encoding="utf-8")
    assert shipped == SCHEMA_FILE.read_text(encoding="utf-8")
    assert shipped == schema_text(), "regenerate it: python -m gpudoctor.render.report_schema --write"


def test_the_command_prints_the_generated_schema(capsys):
    assert cli_main(["schema"]) == 0
    assert capsys.readouterr().out == schema_text()


def test_one_schema_version():
    schema = report_schema()
    assert schema["$id"] == SCHEMA_ID == f"urn:gpudoctor:report:{SCHEMA_VERSION}"
    assert schema["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    assert f"(schema_version {SCHEMA_VERSION})" in schema["description"]
    assert _golden()["schema_version"] == SCHEMA_VERSION


def test_constants_agree_with_their_homes():
    assert CODE_PATTERN.pattern == CHECK_CODE_PATTERN
    assert list(CountsJson.__annotations__) == [status.value for status in STATUS_ORDER]


def test_golden_report_validates(validator):
    validator.validate(_golden())


def test_machine_is_open_but_its_known_keys_are_typed(validator):
    doc = _golden()
    doc["machine"]["added_later"] = {"any": "thing"}
    validator.validate(doc)
    validator.validate({**doc, "machine": {"error": "RuntimeError: x"}})
    for key, wrong in (("gpus_on_bus", "2"), ("collect_duration_s", "0.3"), ("gpus", [{"index": "0"}])):
        broken = copy.deepcopy(doc)
        broken["machine"][key] = wrong
        assert not validator.is_valid(broken), key


def test_source_is_open(validator):
    doc = _golden()
    doc["source"]["host"] = "node-1"
    validator.validate(doc)
    doc["source"]["path"] = 1
    assert not validator.is_valid(doc)
