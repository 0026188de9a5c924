"""TORCH001 says where torch came from without claiming more than the environment records (issue 17: a wheel
installed from a local folder was reported "from download.pytorch.org/whl/cpu")."""

from __future__ import annotations

import copy
import json
import pathlib

from gpudoctor.api import Severity
from gpudoctor_checks import pytorch
from tests.checks.test_framework_checks import RTX4090_X8, _smi
from tests.synthetic.evidence import make_evidence, run

RECORDED = pathlib.Path(__file__).resolve().parent.parent / "recorded" / "cpu-container-debian"
LOCAL_WHEEL = "/opt/wheels/torch-2.13.0+cpu-cp311-cp311-linux_x86_64.whl"


def _recorded_torch() -> dict:
    # Real probe record: torch 2.13.0+cpu that pip installed through --find-links /opt/wheels (no direct_url).
    return json.loads((RECORDED / "framework-torch.json").read_text())


def test_a_tagged_wheel_without_a_recorded_url_is_named_as_a_build_not_as_where_it_came_from():
    outcome = run(pytorch.torch_imports, make_evidence(framework_torch_json=_recorded_torch()))
    assert "from download.pytorch.org" not in outcome.summary
    assert outcome.summary.endswith("; a download.pytorch.org/whl/cpu build")


def test_synthetic_local_file_install_names_the_file_and_the_index_command():
    record = copy.deepcopy(_recorded_torch())
    record["distribution"]["direct_url"] = f"file://{LOCAL_WHEEL}"  # synthetic: as pip records `pip install ./x.whl`
    outcome = run(pytorch.torch_imports, make_evidence(nvidia_smi_txt=_smi(RTX4090_X8), framework_torch_json=record))
    assert f"installed from the local file {LOCAL_WHEEL}" in outcome.summary
    assert "download.pytorch.org" not in outcome.summary
    (note,) = [f for f in outcome.findings if f.severity is Severity.INFO]
    assert "not from a package index" in note.message and LOCAL_WHEEL in note.message
    assert note.fix is not None
    (command,) = note.fix.commands
    assert " install " in command and "--index-url https://download.pytorch.org/whl/cu" in command


def test_a_remote_direct_url_is_named_as_is():
    record = copy.deepcopy(_recorded_torch())
    record["distribution"]["direct_url"] = {"url": "https://wheels.synthetic.example/torch-2.13.0+cpu.whl"}
    outcome = run(pytorch.torch_imports, make_evidence(framework_torch_json=record))
    assert outcome.summary.endswith("; installed from https://wheels.synthetic.example/torch-2.13.0+cpu.whl")
    assert not [f for f in outcome.findings if f.severity is Severity.INFO]
