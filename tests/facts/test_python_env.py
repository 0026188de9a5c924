"""The Python-side records as typed facts: the probed interpreter, the NVML bindings, the DMI identity.

Inputs are synthetic JSON records in the shape the evidence layer writes (gpudoctor/evidence/system_scan.py,
gpudoctor/evidence/target_python.py); every parser takes garbage without raising."""

from __future__ import annotations

from hypothesis import given

from gpudoctor.facts.framework_model import PythonTarget
from gpudoctor.facts.python_env import parse_nvml_bindings, target_python_facts
from tests.helpers.strategies import json_like


def test_the_chooser_record_wins_and_the_probe_fills_the_gaps() -> None:
    record = {"executable": "/venv/bin/python", "how": "VIRTUAL_ENV", "note": None, "version": None}
    probed = PythonTarget(executable="/other/python", version="3.12.3", platform="linux", virtualenv=True)
    target = target_python_facts(record, probed)
    assert target.executable == "/venv/bin/python" and target.how == "VIRTUAL_ENV"
    assert target.version == "3.12.3" and target.virtualenv is True and target.note is None
    assert target.known


def test_nothing_known_is_not_a_target() -> None:
    assert not target_python_facts(None, None).known


def test_a_legacy_pynvml_beside_the_official_bindings() -> None:
    bindings = parse_nvml_bindings(
        {
            "distributions": {
                "nvidia-ml-py": {"version": "13.580.65", "provides_pynvml_module": True},
                "pynvml": {"version": "11.5.0", "provides_pynvml_module": True},
                "nvidia-ml-py3": {"version": "7.352.0", "provides_pynvml_module": "yes"},  # not a bool: not trusted
            },
            "pynvml_module_file": "/venv/lib/python3.11/site-packages/pynvml.py",
        }
    )
    assert bindings is not None
    official = bindings.get("nvidia-ml-py")
    assert official is not None and official.version == "13.580.65"
    assert [d.name for d in bindings.distributions if d.provides_pynvml_module] == ["nvidia-ml-py", "pynvml"]
    assert bindings.get("absent") is None


def test_bindings_not_collected_are_none_not_empty() -> None:
    assert parse_nvml_bindings(None) is None
    assert parse_nvml_bindings([1, 2]) is None
    empty = parse_nvml_bindings({})
    assert empty is not None and empty.distributions == ()


@given(json_like())
def test_garbage_never_raises(value: object) -> None:
    target_python_facts(value, None)
    parse_nvml_bindings(value)
    parse_nvml_bindings({"distributions": value, "pynvml_module_file": value})
