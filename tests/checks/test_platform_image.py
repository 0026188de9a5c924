"""PLAT020 through the real Facts: real NGC banners (tests/captured/ngc) and SYNTHETIC container environments,
driver records and compat-library listings (named so), against the host driver."""

from __future__ import annotations

import pathlib

from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.results import Status
from gpudoctor_checks import platform_image
from tests.synthetic.evidence import judge, make_evidence, run

CAPTURED = pathlib.Path(__file__).resolve().parents[1] / "captured" / "ngc"

# SYNTHETIC: NGC PyTorch 24.06's ENV names (the same names NGC PyTorch 23.10 sets) with 24.06's CUDA and driver.
SYNTHETIC_NGC_2406_ENV = {
    "NVIDIA_PRODUCT_NAME": "PyTorch",
    "NVIDIA_PYTORCH_VERSION": "24.06",
    "NVIDIA_BUILD_ID": "100000000",
    "CUDA_VERSION": "12.5.0.23",
    "CUDA_DRIVER_VERSION": "555.42.02",
    "PYTORCH_VERSION": "2.4.0a0+f70bd71a48",
}
SYNTHETIC_COMPAT_DIRS = {"/usr/local/cuda/compat/lib": ["libcuda.so.1", "libcuda.so.555.42.02"]}


def _synthetic_nvml(driver: str, name: str) -> dict:
    """SYNTHETIC: an nvml.json record of one GPU on ``driver``."""
    return {
        "schema": 1,
        "init": {"ok": True},
        "driver_version": driver,
        "device_count": 1,
        "devices": [{"index": 0, "name": name}],
    }


def _with_paste(evidence: Evidence, text: str) -> Evidence:
    evidence.add(EvidenceItem(name="pasted-text.txt", kind="file", text=text))
    return evidence


def _captured(name: str) -> str:
    return (CAPTURED / name).read_text(encoding="utf-8")


def test_not_applicable_without_image_or_banner():
    outcome = run(platform_image.image_fits_driver, make_evidence(env_json={"variables": {"PATH": "/usr/bin"}}))
    assert not outcome.applicable


def test_captured_unavailable_banner_on_525_names_an_older_tag_and_the_driver():
    # Real banner (LlamaFactory#5962: built for 545.23) on a SYNTHETIC host whose driver is 525.85.12.
    evidence = _with_paste(
        make_evidence(nvml_json=_synthetic_nvml("525.85.12", "NVIDIA GeForce RTX 3090")),
        _captured("llamafactory-5962-butversion-545.23-vs-535.104.05.txt"),
    )
    result = judge(platform_image.image_fits_driver, evidence)
    assert result.status is Status.PROBLEM
    finding = result.findings[0]
    assert finding.cause == "container-cuda-too-new"
    assert "545.23" in finding.message and "UNAVAILABLE" in finding.message
    assert "docker pull nvcr.io/nvidia/pytorch:23.02-py3" in finding.fix.commands  # 23.02 needs 525
    assert "545.23 or newer" in finding.fix.summary  # ... or the driver the image was built for
    assert any("install" in c.lower() for c in finding.fix.commands[2:])  # the driver install route follows
    assert "butversion 535.104.05" in finding.quote
    assert result.data["verdict"] == "unavailable" and result.data["host_driver"] == "525.85.12"


def test_captured_banner_alone_uses_the_driver_it_detected():
    # A paste with only the banner: the host driver is the one the banner says it detected (510.85.02).
    evidence = Evidence(origin={"kind": "file"})
    _with_paste(evidence, _captured("trtllm-23-error-535.86-vs-510.85.02.txt"))
    result = judge(platform_image.image_fits_driver, evidence)
    assert result.status is Status.PROBLEM
    assert result.data["host_driver"] == "510.85.02" and result.data["built_for_driver"] == "535.86"
    # The newest release in the table built for a driver R510 runs: 21.11 (driver 495).
    assert "docker pull nvcr.io/nvidia/pytorch:21.11-py3" in result.findings[0].fix.commands


def test_captured_no_driver_banner_points_at_gpus_all():
    evidence = _with_paste(make_evidence(), _captured("panoptic-seg-20-cuda-11.1.1-driver-not-detected.txt"))
    result = judge(platform_image.image_fits_driver, evidence)
    assert result.status is Status.PROBLEM
    assert result.findings[0].cause == "container-no-gpu-flag"
    assert any("--gpus all" in c for c in result.findings[0].fix.commands)


def test_synthetic_forward_compat_banner_is_not_a_problem():
    from tests.facts.test_ngc_banner import SYNTHETIC_FORWARD_COMPAT_BANNER

    evidence = _with_paste(make_evidence(), SYNTHETIC_FORWARD_COMPAT_BANNER)
    result = judge(platform_image.image_fits_driver, evidence)
    assert result.status is Status.OK
    assert result.data["verdict"] == "forward-compat"


def test_synthetic_image_fits_a_new_enough_driver():
    evidence = make_evidence(
        env_json={"variables": SYNTHETIC_NGC_2406_ENV},
        nvml_json=_synthetic_nvml("560.35.03", "NVIDIA GeForce RTX 4090"),
    )
    result = judge(platform_image.image_fits_driver, evidence)
    assert result.status is Status.OK and result.data["verdict"] == "fits"


def test_synthetic_forward_compat_on_a_datacenter_gpu_and_listed_branch():
    evidence = make_evidence(
        env_json={"variables": SYNTHETIC_NGC_2406_ENV},
        platform_json={"dirs": SYNTHETIC_COMPAT_DIRS},
        nvml_json=_synthetic_nvml("535.104.05", "NVIDIA A100-SXM4-80GB"),
    )
    result = judge(platform_image.image_fits_driver, evidence)
    assert result.status is Status.OK, result.summary
    assert result.data["verdict"] == "forward-compat" and "R535" in result.summary


def test_synthetic_geforce_gets_minor_version_compat_warning_not_forward_compat():
    # Same image and driver on a GeForce: no forward compatibility; CUDA 12.5 on R535 runs through minor-version
    # compatibility, with its limits.
    evidence = make_evidence(
        env_json={"variables": SYNTHETIC_NGC_2406_ENV},
        platform_json={"dirs": SYNTHETIC_COMPAT_DIRS},
        nvml_json=_synthetic_nvml("535.104.05", "NVIDIA GeForce RTX 3090"),
    )
    result = judge(platform_image.image_fits_driver, evidence)
    assert result.status is Status.WARNING
    assert result.data["verdict"] == "minor-version-compat"
    assert "PTX" in result.findings[0].message
    assert "docker pull nvcr.io/nvidia/pytorch:23.08-py3" in result.findings[0].fix.commands


def test_synthetic_older_cuda_major_is_a_problem():
    evidence = make_evidence(
        env_json={"variables": SYNTHETIC_NGC_2406_ENV},
        nvml_json=_synthetic_nvml("470.199.02", "NVIDIA GeForce RTX 3090"),
    )
    result = judge(platform_image.image_fits_driver, evidence)
    assert result.status is Status.PROBLEM and result.data["verdict"] == "too-old"
    assert "docker pull nvcr.io/nvidia/pytorch:21.10-py3" in result.findings[0].fix.commands  # needs 470


def test_synthetic_driver_older_than_every_release_gets_only_the_driver_route():
    evidence = make_evidence(
        env_json={"variables": SYNTHETIC_NGC_2406_ENV},
        nvml_json=_synthetic_nvml("418.226.00", "Tesla V100-SXM2-16GB"),
    )
    result = judge(platform_image.image_fits_driver, evidence)
    assert result.status is Status.PROBLEM
    assert not any(c.startswith("docker pull") for c in result.findings[0].fix.commands)
    assert result.findings[0].fix.needs_root


def test_synthetic_plain_cuda_image_judged_by_its_cuda():
    env = {"CUDA_VERSION": "12.8.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.8", "NV_CUDA_CUDART_VERSION": "12.8.90-1"}
    native = make_evidence(env_json={"variables": env}, nvml_json=_synthetic_nvml("570.124.06", "NVIDIA L4"))
    assert judge(platform_image.image_fits_driver, native).status is Status.OK
    old = make_evidence(env_json={"variables": env}, nvml_json=_synthetic_nvml("470.199.02", "NVIDIA L4"))
    too_old = judge(platform_image.image_fits_driver, old)
    assert too_old.status is Status.PROBLEM
    # Not an NGC image: no NGC release is offered in its place, only an image of a CUDA the driver runs or the driver.
    fix = too_old.findings[0].fix
    assert fix is not None and "image of a CUDA the driver runs" in fix.summary
    assert not any("nvcr.io" in command for command in fix.commands)


def test_synthetic_image_without_a_host_driver_is_not_judged():
    result = judge(platform_image.image_fits_driver, make_evidence(env_json={"variables": SYNTHETIC_NGC_2406_ENV}))
    assert result.status is Status.NOT_APPLICABLE


# --- ROCm images against the host's AMD GPU Driver (kb.rocm_driver_compat) ---------------------------------------


def _synthetic_rocm_smi_driver(version: str) -> str:
    """SYNTHETIC: rocm-smi's "Version of System Component" block naming the amdgpu driver."""
    return (
        "=========================== ROCm System Management Interface ===========================\n"
        "=============================== Version of System Component ============================\n"
        f"Driver version: {version}\n"
        "========================================================================================\n"
        "================================== End of ROCm SMI Log =================================\n"
    )


def _rocm_image_evidence(build_environment: str | None, driver: str | None) -> Evidence:
    """SYNTHETIC: a rocm/pytorch container's ENV (names from ROCm/pytorch .ci/docker/ubuntu-rocm/Dockerfile)."""
    variables = {"MAGMA_HOME": "/opt/rocm/magma", "PYTORCH_ROCM_ARCH": "gfx90a;gfx942", "ROCM_PATH": "/opt/rocm"}
    if build_environment:
        variables["BUILD_ENVIRONMENT"] = build_environment
    sources = {"env_json": {"variables": variables}}
    if driver:
        sources["rocm_smi_txt"] = _synthetic_rocm_smi_driver(driver)
    return make_evidence(**sources)


def test_rocm_image_supported_by_the_host_driver_release_is_ok():
    # amdgpu 6.10.5 is ROCm 6.3's driver (package 6.10.5.60300); 6.3 supports ROCm 6.1 ... 7.0.
    result = judge(
        platform_image.image_fits_driver, _rocm_image_evidence("pytorch-linux-jammy-rocm6.2-py3.10", "6.10.5")
    )
    assert result.status is Status.OK
    assert result.data["verdict"] == "fits" and result.data["driver_release"] == "6.3"


def test_rocm_image_too_old_for_the_host_driver_is_a_warning_with_a_fitting_image():
    result = judge(
        platform_image.image_fits_driver, _rocm_image_evidence("pytorch-linux-focal-rocm5.3-py3.8", "6.10.5")
    )
    assert result.status is Status.WARNING and result.data["verdict"] == "unsupported"
    fix = result.findings[0].fix
    assert fix is not None and "6.1, 6.2, 6.3, 6.4, 7.0" in fix.summary
    assert any(c.startswith("docker pull rocm/dev-ubuntu-") for c in fix.commands)
    assert "sudo amdgpu-install --usecase=dkms" in fix.commands


def test_rocm_image_on_a_driver_release_30_x():
    result = judge(
        platform_image.image_fits_driver, _rocm_image_evidence("pytorch-linux-noble-rocm7.1-py3.12", "30.30.3")
    )
    assert result.status is Status.OK and result.data["driver_release"] == "30.30"


def test_rocm_image_on_an_unmapped_module_version_is_not_judged():
    result = judge(
        platform_image.image_fits_driver, _rocm_image_evidence("pytorch-linux-jammy-rocm6.2-py3.10", "6.8.5")
    )
    assert result.status is Status.NOT_APPLICABLE and result.data["verdict"] == "unknown-driver-release"


def test_rocm_image_on_the_kernels_inbox_amdgpu_is_not_judged():
    evidence = _rocm_image_evidence("pytorch-linux-jammy-rocm6.2-py3.10", "6.8.0-45-generic")
    result = judge(platform_image.image_fits_driver, evidence)
    assert result.status is Status.NOT_APPLICABLE and result.data["verdict"] == "inbox-driver"


def test_rocm_image_without_its_rocm_or_the_driver_is_not_judged():
    no_rocm = judge(platform_image.image_fits_driver, _rocm_image_evidence(None, "6.10.5"))
    assert no_rocm.status is Status.NOT_APPLICABLE and "ROCm version" in no_rocm.summary
    no_driver = judge(
        platform_image.image_fits_driver, _rocm_image_evidence("pytorch-linux-jammy-rocm6.2-py3.10", None)
    )
    assert no_driver.status is Status.NOT_APPLICABLE and "amdgpu driver version" in no_driver.summary
