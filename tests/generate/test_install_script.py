"""The install-script generator: golden scripts over a distro x step matrix, the safety properties every script
must have (skip-if-done guards, no download piped into a shell, keys verified, no driver inside WSL), refusals,
and a property test over requests.  GPUDOCTOR_UPDATE_GOLDEN=1 rewrites the golden files."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.generate import distros
from gpudoctor.generate.install_script import generate_install_script
from gpudoctor.generate.model import GeneratedFile, GenerationRefused, InstallScriptRequest, MachineTarget

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "install-scripts"

# Synthetic machines: a driver too old for CUDA 13 wheels, a current one, none yet (fresh install).
_OLD = MachineTarget(
    driver_version="535.309.01", compute_capabilities=("8.6",), gpu_names=("NVIDIA RTX A6000",), source="synthetic"
)
_NEW = MachineTarget(
    driver_version="580.95.05", compute_capabilities=("9.0",), gpu_names=("NVIDIA H100 80GB HBM3",), source="synthetic"
)
_NONE = MachineTarget(source="synthetic")
# A Pascal GPU (GTX 1050): the legacy R580 branch, proprietary modules, CUDA 12.x at most.
_PASCAL = MachineTarget(compute_capabilities=("6.1",), gpu_names=("NVIDIA GeForce GTX 1050",), source="synthetic")


def _req(distro: str, kind: str, target: MachineTarget = _NONE) -> InstallScriptRequest:
    if kind == "driver":
        return InstallScriptRequest(distro=distro, framework=None, target=target)
    if kind == "driver-toolkit-cudnn":
        return InstallScriptRequest(distro=distro, cuda_toolkit="12.8", cudnn=True, framework=None, target=target)
    if kind == "driver-toolkit13-cudnn":
        return InstallScriptRequest(distro=distro, cuda_toolkit="13.0", cudnn=True, framework=None, target=target)
    if kind == "driver-in-container":  # made inside a docker container: no driver step, the host's steps instead
        target = dataclasses.replace(target, container="docker")
        return InstallScriptRequest(distro=distro, framework=None, target=target)
    if kind == "container":
        return InstallScriptRequest(distro=distro, driver=False, container_toolkit=True, framework=None, target=target)
    if kind.startswith("driver-"):
        framework, _, version = kind[len("driver-") :].partition("==")
        return InstallScriptRequest(
            distro=distro, framework=framework, framework_version=version or None, target=target
        )
    raise AssertionError(kind)


MATRIX = [
    ("ubuntu24.04", "driver", _NONE),
    ("ubuntu24.04", "driver-torch", _NONE),
    ("ubuntu24.04", "driver-toolkit-cudnn", _NONE),
    ("ubuntu24.04", "container", _NEW),
    ("ubuntu24.04", "driver-jax", _NEW),
    ("ubuntu24.04", "driver-toolkit13-cudnn", _PASCAL),
    ("ubuntu24.04", "driver-in-container", _NEW),
    ("ubuntu22.04", "driver-tensorflow", _OLD),
    ("ubuntu22.04", "driver-torch", _OLD),
    ("ubuntu20.04", "driver-torch", _OLD),
    ("debian12", "driver", _NONE),
    ("debian12", "driver-torch", _OLD),
    ("debian12", "driver-torch==2.13", _OLD),
    ("debian12", "driver-toolkit-cudnn", _NONE),
    ("debian12", "container", _OLD),
    ("rhel9", "driver-torch", _NONE),
    ("rhel8", "driver-toolkit-cudnn", _NONE),
    ("rocky9", "driver-tensorflow", _NEW),
    ("rocky8", "driver", _NONE),
    ("rocky9", "driver-toolkit13-cudnn", _PASCAL),
    ("alma9", "container", _NEW),
    ("amzn2023", "driver-torch", _NONE),
    ("amzn2023", "driver-jax", _NONE),
    ("wsl-ubuntu24.04", "driver-torch", _NEW),
    ("wsl-ubuntu22.04", "driver-toolkit-cudnn", _NEW),
]


def _name(distro: str, kind: str) -> str:
    return f"{distro}-{kind.replace('==', '')}.sh"


@pytest.mark.parametrize(("distro", "kind", "target"), MATRIX, ids=[_name(d, k) for d, k, _ in MATRIX])
def test_golden(distro: str, kind: str, target: MachineTarget) -> None:
    generated = generate_install_script(_req(distro, kind, target))
    path = GOLDEN / _name(distro, kind)
    if os.environ.get("GPUDOCTOR_UPDATE_GOLDEN") == "1":
        path.write_text(generated.text, encoding="utf-8")
    assert generated.kind == "install-script"
    assert generated.text == path.read_text(encoding="utf-8"), f"regenerate with GPUDOCTOR_UPDATE_GOLDEN=1: {path}"


def test_golden_folder_has_no_stale_files() -> None:
    assert sorted(p.name for p in GOLDEN.glob("*.sh")) == sorted(_name(d, k) for d, k, _ in MATRIX)


def _all() -> list[tuple[str, str]]:
    return [(p.name, p.read_text(encoding="utf-8")) for p in sorted(GOLDEN.glob("*.sh"))]


def _function(text: str, name: str) -> str:
    match = re.search(rf"^{name}\(\) \{{\n(.*?)^\}}", text, re.S | re.M)
    assert match, f"no function {name}"
    return match.group(1)


@pytest.mark.parametrize(("name", "text"), _all())
def test_script_shape(name: str, text: str) -> None:
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "\nset -euo pipefail\n" in text
    for option in ("--dry-run", "--yes", "--help", "--force-os", "--only"):
        assert option in text
    assert "# Regenerate: gpudoctor install-script --distro " in text
    assert "# Knowledge base: as of " in text
    assert "@@" not in text
    assert "os_guard\n" in text and "summary\n" in text
    # never a download piped into a shell
    assert not re.search(r"\|\s*(sudo\s+)?(ba|z|da)?sh\b", text), name
    for line in text.splitlines():
        if "curl " in line and not line.lstrip().startswith("#") and "pkg" not in line and "for pkg" not in line:
            assert "-o " in line and "|" not in line, line


@pytest.mark.parametrize(("name", "text"), _all())
def test_every_step_checks_before_it_acts(name: str, text: str) -> None:
    guards = {
        "step_driver": ("driver_done", "skip driver"),
        "step_toolkit": ("pkg_installed cuda-toolkit-",),
        "step_cudnn": ("pkg_installed cudnn9-cuda-",),
        "step_container": ("pkg_installed nvidia-container",),
        "step_python": ('"$VENV/bin/python" -c "import',),
    }
    steps = re.search(r"^readonly STEPS=(.*)$", text, re.M).group(1).strip("'").split()
    assert steps
    for step in steps:
        body = _function(text, f"step_{step}")
        assert any(guard in body for guard in guards[f"step_{step}"]), (name, step)
        first_action = min((body.find(w) for w in ("pkg_install ", "as_root ", "run ") if w in body), default=-1)
        first_guard = min(body.find(g) for g in guards[f"step_{step}"] if g in body)
        assert first_action == -1 or first_guard < first_action, (name, step)


@pytest.mark.parametrize(("name", "text"), _all())
def test_repository_keys_are_verified_before_trusted(name: str, text: str) -> None:
    if "setup_cuda_repo() {" in text:
        body = _function(text, "setup_cuda_repo")
        fingerprint = distros.CUDA_APT_FINGERPRINT if "dpkg -i" in body else distros.CUDA_RPM_FINGERPRINT
        trust = body.find("dpkg -i") if "dpkg -i" in body else body.find("rpm --import")
        verify = body.find("run verify_key ")
        assert -1 < verify < trust
        assert body[verify : body.index("\n", verify)].endswith(f" {fingerprint}")
        assert len(fingerprint) == 40  # the full fingerprint, never a short key id
    if "setup_container_repo() {" in text:
        body = _function(text, "setup_container_repo")
        trust = max(body.find("--dearmor"), body.find("rpm --import"))
        assert -1 < body.find(f'run verify_key "$WORK/ctk.key" {distros.CTK_FINGERPRINT}') < trust


@pytest.mark.parametrize(("name", "text"), [(n, t) for n, t in _all() if n.startswith("wsl-")])
def test_wsl_never_installs_a_driver(name: str, text: str) -> None:
    body = _function(text, "step_driver")
    assert "skip driver" in body and "/usr/lib/wsl/lib/libcuda.so" in body
    assert "pkg_install" not in body and "ubuntu-drivers" not in body
    assert "nvidia-open" not in text and "nvidia-driver" not in text.split("set -euo pipefail", 1)[1]


def test_wsl_flag_on_the_target_is_honoured() -> None:
    text = generate_install_script(
        InstallScriptRequest(
            target=MachineTarget(distro_id="ubuntu", distro_version="22.04", wsl=True, driver_version="566.36")
        )
    ).text
    assert "WSL2 Ubuntu 22.04" in text and "nvidia-open" not in text.split("set -euo pipefail", 1)[1]


def test_distro_from_os_release() -> None:
    text = generate_install_script(
        InstallScriptRequest(framework=None, target=MachineTarget(distro_id="rocky", distro_version="9.4"))
    ).text
    assert (
        "readonly OS_IDS=rocky" in text
        and "readonly OS_VERSION=9" in text
        and "config-manager --set-enabled crb" in text
    )


def test_driver_floor_follows_the_framework_build() -> None:
    # No driver yet: the newest torch build (CUDA 13.x) -> the floor is the CUDA 13 minor-version floor.
    text = generate_install_script(_req("debian12", "driver-torch", _NONE)).text
    assert "readonly DRIVER_MIN=580.65.06" in text
    assert "nvidia-open" in text and "Debian's nvidia-driver" not in text  # Debian's R535 is too old
    # Driver 535 kept: a CUDA 12.x build; Debian's own driver branch meets its floor.
    text = generate_install_script(_req("debian12", "driver-torch", _OLD)).text
    assert "readonly DRIVER_MIN=525.60.13" in text and "nvidia-driver firmware-misc-nonfree" in text
    # No floor and no GPU known: NVIDIA's Long Term Support Branch, pinned, open modules.
    text = generate_install_script(_req("ubuntu24.04", "driver", _NONE)).text
    assert "pkg_install nvidia-open-580" in text and "readonly DRIVER_MIN=''" in text


def test_pre_turing_gpu_gets_the_proprietary_modules_of_its_last_branch() -> None:
    old = MachineTarget(driver_version="535.309.01", compute_capabilities=("6.1",), source="synthetic")
    assert "pkg_install cuda-drivers-580\n" in generate_install_script(_req("ubuntu24.04", "driver-torch", old)).text
    rhel = generate_install_script(_req("rhel9", "driver-torch", old)).text
    assert "nvidia-driver:580-dkms" in rhel and "nvidia-driver:latest-dkms" not in rhel


def test_pip_index_can_be_overridden() -> None:
    text = generate_install_script(_req("ubuntu24.04", "driver-torch", _OLD)).text
    assert "${GPUDOCTOR_PIP_INDEX_URL-$PIP_INDEX_DEFAULT}" in text
    assert re.search(r"readonly PIP_REQUIREMENT='torch==2\.\d+\.\*'", text)
    assert "readonly PIP_INDEX_DEFAULT=https://download.pytorch.org/whl/cu" in text


@pytest.mark.parametrize(("name", "text"), _all())
def test_every_framework_requirement_is_pinned(name: str, text: str) -> None:
    found = re.search(r"^readonly PIP_REQUIREMENT='(.*)'$", text, re.MULTILINE)
    if found:
        assert "==" in found.group(1), found.group(1)


def test_jax_is_pinned_to_a_release_the_distros_python_has_wheels_for() -> None:
    # Ubuntu 24.04's Python 3.12 gets the newest JAX; Amazon Linux 2023's Python 3.9 is held at 0.4.30, and the
    # header says why and how to get a newer one.
    text = generate_install_script(_req("ubuntu24.04", "driver-jax", _NEW)).text
    assert "readonly PIP_REQUIREMENT='jax[cuda13]==0.12.0.1'" in text
    text = generate_install_script(_req("amzn2023", "driver-jax", _NONE)).text
    assert "readonly PIP_REQUIREMENT='jax[cuda12]==0.4.30'" in text
    assert "holds you at 0.4.30" in text and "--python X.Y" in text
    asked = generate_install_script(
        InstallScriptRequest(distro="debian12", framework="jax", framework_version="0.9", target=_OLD)
    ).text
    assert "readonly PIP_REQUIREMENT='jax[cuda12]==0.9.2'" in asked
    # A driver too old for any JAX CUDA build: the driver step upgrades it to the floor of the build it pins.
    old_driver = generate_install_script(
        InstallScriptRequest(distro="ubuntu24.04", framework="jax", target=MachineTarget(driver_version="470.256.02"))
    ).text
    assert "readonly PIP_REQUIREMENT='jax[cuda13]==0.12.0.1'" in old_driver
    assert "readonly DRIVER_MIN=580.65.06" in old_driver


@pytest.mark.parametrize(
    ("request_", "nearest"),
    [
        (InstallScriptRequest(distro="ubuntu22.04", framework="jax", python="3.8"), "--python 3.12"),
        (
            InstallScriptRequest(distro="ubuntu22.04", framework="jax", framework_version="0.2.1"),
            "--framework jax==0.6.2",
        ),
        (
            InstallScriptRequest(
                distro="wsl-ubuntu22.04", framework="jax", target=MachineTarget(driver_version="470.256.02")
            ),
            "--for-driver 525.60.13",
        ),  # inside WSL the driver is Windows': no step can upgrade it
    ],
)
def test_jax_refusals_name_what_works(request_: InstallScriptRequest, nearest: str) -> None:
    with pytest.raises(GenerationRefused) as refused:
        generate_install_script(request_)
    assert refused.value.nearest == nearest


def test_deterministic() -> None:
    request = _req("rhel9", "driver-toolkit-cudnn", _NEW)
    assert generate_install_script(request).text == generate_install_script(request).text


@pytest.mark.parametrize(
    "request_",
    [
        InstallScriptRequest(distro="ubuntu18.04"),
        InstallScriptRequest(distro="fedora40"),
        InstallScriptRequest(target=MachineTarget(distro_id="arch", distro_version="rolling")),
        InstallScriptRequest(distro="ubuntu24.04", cuda_toolkit="twelve"),
        InstallScriptRequest(distro="ubuntu24.04", cuda_toolkit="99.9"),
        InstallScriptRequest(distro="ubuntu24.04", framework="mxnet"),
        InstallScriptRequest(distro="ubuntu24.04", driver=False, framework=None),
        InstallScriptRequest(distro="ubuntu24.04", cudnn=True, framework=None),
        InstallScriptRequest(distro="debian12", framework="torch", framework_version="1.0"),
    ],
)
def test_refusals(request_: InstallScriptRequest) -> None:
    with pytest.raises(GenerationRefused) as refused:
        generate_install_script(request_)
    assert refused.value.reason


def test_unknown_distro_lists_the_known_ones() -> None:
    with pytest.raises(GenerationRefused) as refused:
        generate_install_script(InstallScriptRequest(distro="gentoo"))
    for token in distros.known_distros():
        assert token in str(refused.value)


_tokens = list(distros.known_distros()) + [f"wsl-{t}" for t in distros.known_distros()] + ["nope", "", "wsl-"]


@settings(max_examples=60, deadline=None)
@given(
    distro=st.sampled_from(_tokens),
    driver=st.booleans(),
    cudnn=st.booleans(),
    container=st.booleans(),
    toolkit=st.sampled_from([None, "11.8", "12.8", "13.0", "12.x", "7.0"]),
    framework=st.sampled_from([None, "torch", "tensorflow", "jax"]),
    version=st.sampled_from([None, "2.13", "2.16", "0.4"]),
    driver_version=st.sampled_from([None, "470.256.02", "535.309.01", "580.95.05", "garbage"]),
    ccs=st.sampled_from([(), ("6.1",), ("8.6", "9.0"), ("12.0",)]),
)
def test_any_request_gives_a_script_or_a_refusal(
    distro, driver, cudnn, container, toolkit, framework, version, driver_version, ccs
) -> None:
    request = InstallScriptRequest(
        distro=distro,
        driver=driver,
        cudnn=cudnn,
        container_toolkit=container,
        cuda_toolkit=toolkit,
        framework=framework,
        framework_version=version,
        target=MachineTarget(driver_version=driver_version, compute_capabilities=ccs),
    )
    try:
        generated = generate_install_script(request)
    except GenerationRefused as refused:
        assert refused.reason
        return
    assert isinstance(generated, GeneratedFile)
    assert generated.text.startswith("#!/usr/bin/env bash\n") and "@@" not in generated.text
    if distro.startswith("wsl-") and driver:
        assert "nvidia-open" not in generated.text.split("set -euo pipefail", 1)[1]
