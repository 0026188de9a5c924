"""GPU003 describes MIG instances with what the evidence knows, never "?" placeholders (issue 17:
"MIG enabled (?, ?, ?, ?)")."""

from __future__ import annotations

from gpudoctor.facts.model import GpuInfo, MigDevice
from gpudoctor.results import Severity
from gpudoctor_checks import gpus
from tests.helpers.fixtures import fixture_text
from tests.synthetic.evidence import judge, make_evidence

MIG_CAPTURE = "A/netdata-a100-sxm4-40gb-mig-enabled-510.47.03-v11.txt"  # real nvidia-smi -q -x, 2 MIG devices


def _info_messages(result) -> list[str]:
    return [f.message for f in result.findings if f.severity is Severity.INFO]


def test_real_capture_without_profiles_says_what_it_knows_and_what_is_not_reported():
    result = judge(gpus.mig_mode, make_evidence(nvidia_smi_q_x_xml=fixture_text(MIG_CAPTURE)))
    (message,) = _info_messages(result)
    assert result.summary == "MIG enabled on 1 of 1 GPU"  # a count in words, never "GPU(s)"
    assert "?" not in message
    assert "MIG enabled (2 instances;" in message
    assert "GPU instance IDs" in message and "MiB" in message
    assert "the profiles are not reported" in message


def test_synthetic_named_profiles_are_counted():
    gpu = GpuInfo(
        index=0,
        mig_mode_current="Enabled",
        mig_devices=[MigDevice(profile="1g.10gb"), MigDevice(profile="1g.10gb"), MigDevice(profile="3g.40gb")],
    )
    assert gpus.mig_instances_text(gpu, 3) == "3 instances: 2x 1g.10gb, 3g.40gb"


def test_synthetic_partly_named_and_count_only():
    gpu = GpuInfo(
        mig_devices=[MigDevice(profile="3g.40gb"), MigDevice(gpu_instance_id=5, memory_total_mib=9728)],
    )
    assert gpus.mig_instances_text(gpu, None) == (
        "2 instances: 3g.40gb; GPU instance ID 5; 9728 MiB; 1 without a reported profile"
    )
    assert gpus.mig_instances_text(GpuInfo(), 4) == "4 instances; which profiles is not reported"
    assert gpus.mig_instances_text(GpuInfo(), None) == "no instance listed"
