"""The install script's driver fits the GPUs present and the place it runs (issue 17).

Synthetic machines (no capture behind them): a GTX 1050 (Pascal, 6.1), an RTX 5090 (Blackwell, 12.0), an H100
(Hopper, 9.0), a mixed Pascal + Blackwell box and one inside a docker container.  The branch is pinned in the
package name or module stream and the header says which GPU, which architecture, which branch and why; a container
gets no kernel headers, driver or reboot; a dry run words planned steps as "would".
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gpudoctor.generate.install_script import generate_install_script
from gpudoctor.generate.model import GenerationRefused, InstallScriptRequest, MachineTarget
from gpudoctor.kb import fix_catalogue
from gpudoctor.kb.distros import DISTROS
from gpudoctor.kb.driver_branches import driver_needs

GTX_1050 = MachineTarget(compute_capabilities=("6.1",), gpu_names=("NVIDIA GeForce GTX 1050",), source="synthetic")
RTX_5090 = MachineTarget(compute_capabilities=("12.0",), gpu_names=("NVIDIA GeForce RTX 5090",), source="synthetic")
H100 = MachineTarget(compute_capabilities=("9.0",), gpu_names=("NVIDIA H100 80GB HBM3",), source="synthetic")
MIXED = MachineTarget(
    compute_capabilities=("6.1", "12.0"),
    gpu_names=("NVIDIA GeForce GTX 1050", "NVIDIA GeForce RTX 5090"),
    source="synthetic",
)
IN_DOCKER = MachineTarget(
    driver_version="580.159.04",
    compute_capabilities=("9.0",),
    gpu_names=("NVIDIA H100 80GB HBM3",),
    distro_id="ubuntu",
    distro_version="24.04",
    container="docker",
    source="synthetic",
)


def _script(distro: str | None, target: MachineTarget, **kwargs: object) -> str:
    request = InstallScriptRequest(distro=distro, framework=None, target=target)
    if kwargs:
        request = InstallScriptRequest(distro=distro, target=target, **kwargs)  # type: ignore[arg-type]
    return generate_install_script(request).text


def _header(text: str) -> str:
    return text.split("set -euo pipefail", 1)[0]


def _step_driver(text: str) -> str:
    match = re.search(r"^step_driver\(\) \{\n(.*?)^\}", text, re.S | re.M)
    assert match
    return match.group(1)


# --------------------------------------------------------------------------- drivers that fit the GPU


def test_pascal_on_ubuntu_gets_the_pinned_r580_proprietary_driver() -> None:
    text = _script("ubuntu24.04", GTX_1050)
    body = _step_driver(text)
    assert "pkg_install cuda-drivers-580\n" in body
    assert "nvidia-open" not in body and "pkg_install cuda-drivers\n" not in body
    header = _header(text)
    assert "NVIDIA's current driver meets it" not in text
    assert "Pascal (compute capability 6.1)" in header and "last driver branch is R580" in header
    assert "proprietary" in header and "NVIDIA GeForce GTX 1050" in header


@pytest.mark.parametrize("distro", ["rocky9", "rhel8", "alma9", "amzn2023"])
def test_pascal_on_the_rhel_family_gets_the_pinned_r580_dkms_stream(distro: str) -> None:
    body = _step_driver(_script(distro, GTX_1050))
    assert "nvidia-driver:580-dkms" in body and "pkg_install cuda-drivers\n" in body
    assert "latest-dkms" not in body and "open-dkms" not in body and "nvidia-open" not in body


def test_pascal_on_debian12_keeps_debians_r535_within_its_range() -> None:
    # Debian 12's own branch 535 still drives Pascal (its last branch is R580): no move to NVIDIA's repository.
    text = _script("debian12", GTX_1050)
    assert "pkg_install nvidia-driver firmware-misc-nonfree" in _step_driver(text)
    assert "last driver branch is R580" in _header(text)
    # A floor above 535 (a CUDA 12.8 toolkit): NVIDIA's repository, the branch pinned, still proprietary.
    text = _script("debian12", GTX_1050, cuda_toolkit="12.8", framework=None)
    assert "pkg_install cuda-drivers-580\n" in _step_driver(text)


def test_blackwell_gets_open_modules_of_a_branch_at_least_its_first() -> None:
    needs = driver_needs(("12.0",))
    assert needs.open_modules and needs.floor is not None and needs.floor >= 570  # CUDA 12.8 -> 570.26
    assert needs.branch is not None and needs.branch >= needs.floor
    text = _script("ubuntu24.04", RTX_5090)
    assert f"pkg_install nvidia-open-{needs.branch}\n" in _step_driver(text)
    assert "open kernel modules only" in _header(text) and "R570 or newer" in _header(text)
    assert f"nvidia-driver:{needs.branch}-open" in _step_driver(_script("rocky9", RTX_5090))


def test_hopper_gets_the_pinned_open_long_term_branch() -> None:
    body = _step_driver(_script("ubuntu22.04", H100))
    assert "pkg_install nvidia-open-580\n" in body
    rocky = _step_driver(_script("rocky9", H100))
    assert "nvidia-driver:580-open" in rocky and "pkg_install nvidia-open\n" in rocky


def test_mixed_gpus_without_a_common_kernel_module_are_refused() -> None:
    with pytest.raises(GenerationRefused) as refused:
        _script("ubuntu24.04", MIXED)
    assert "proprietary" in refused.value.reason and "open" in refused.value.reason
    assert refused.value.nearest == "--no-driver"


def test_mixed_pre_turing_and_turing_gpus_take_the_intersection() -> None:
    # Pascal + Ampere: the newest branch both support (R580), proprietary modules (Pascal has no GSP).
    needs = driver_needs(("6.1", "8.6"))
    assert (needs.branch, needs.open_modules, needs.problem) == (580, False, None)


def test_a_floor_above_a_legacy_gpus_last_branch_has_no_driver() -> None:
    # CUDA 13.2 needs a driver newer than R580 (595.45.04), Pascal's last branch: no driver fits both.
    needs = driver_needs(("6.1",), "595.45.04", "CUDA 13.2 needs it")
    assert needs.branch is None and needs.problem and "R580" in needs.problem
    # The install script never gets there: CUDA 13.2 cannot build for Pascal anyway, so it takes CUDA 12.9,
    # which R580 runs.
    text = _script("ubuntu24.04", GTX_1050, cuda_toolkit="13.2", framework=None)
    assert "cuda-toolkit-12-9" in text and "cuda-drivers-580" in text


def test_kepler_needs_a_legacy_branch_the_script_does_not_install() -> None:
    kepler = MachineTarget(compute_capabilities=("3.7",), gpu_names=("Tesla K80",), source="synthetic")
    with pytest.raises(GenerationRefused) as refused:
        _script("ubuntu24.04", kepler)
    assert "R470" in refused.value.reason


@pytest.mark.parametrize("token", sorted(DISTROS))
def test_every_distro_pins_the_branch_for_a_pascal_gpu(token: str) -> None:
    route = fix_catalogue.driver_route(DISTROS[token], driver_needs(("6.1",)))
    if route.route == "debian":
        return  # the distribution's own branch, fixed for the release
    named = " ".join((*route.packages, route.stream or ""))
    assert "580" in named and "latest" not in named and "open" not in named, route


def test_the_checks_fix_pins_the_same_branch_for_the_gpus_present() -> None:
    route = fix_catalogue.driver_route_for_os("rocky", (), "9.4", ("6.1",))
    commands = fix_catalogue.typed_commands(route)
    assert "sudo dnf module enable -y nvidia-driver:580-dkms" in commands
    assert "sudo dnf install -y cuda-drivers" in commands


# --------------------------------------------------------------------------- containers


def test_inside_a_container_no_headers_driver_or_reboot() -> None:
    text = _script(None, IN_DOCKER, framework="torch")
    body = _step_driver(text)
    assert "skip driver" in body and "pkg_install" not in body and "REBOOT_NEEDED=1" not in body
    after = text.split("set -euo pipefail", 1)[1]
    for word in ("linux-headers", "nvidia-open", "cuda-drivers", "ubuntu-drivers", "driver_done"):
        assert word not in after, word
    header = _header(text)
    assert "docker container" in header and "--gpus all" in header and "NVIDIA Container Toolkit" in header
    assert "driver: none (inside a docker container)" in header


def test_every_driver_step_guards_against_running_in_a_container() -> None:
    # A script made on a host and run inside a container still plans no driver there.
    # step_driver's first line is driver_done, whose container check comes before anything is planned.
    for distro in ("ubuntu24.04", "debian12", "rocky9"):
        text = _script(distro, H100)
        assert _step_driver(text).lstrip().startswith("driver_done && return 0")
        done = re.search(r"^driver_done\(\) \{\n(.*?)^\}", text, re.S | re.M)
        assert done and done.group(1).index("if in_container; then") < done.group(1).index("loaded_driver")
        assert "${HOST_STEPS}" in done.group(1) and "readonly HOST_STEPS='on the host:" in text


def _bash_dry_run(text: str, tmp_path: Path, root: str) -> str:
    """Run the script's --dry-run with its in_container probe pointed at a synthetic root (a folder standing in
    for /), so the test does not depend on where it runs."""
    script = (
        text.replace("[ -e /.dockerenv ]", f"[ -e {root}/.dockerenv ]")
        .replace("[ -e /run/.containerenv ]", f"[ -e {root}/run/.containerenv ]")
        .replace("/proc/1/cgroup", f"{root}/cgroup")
    )
    path = tmp_path / "install.sh"
    path.write_text(script)
    done = subprocess.run(
        ["bash", str(path), "--dry-run", "--yes", "--force-os", "--only", "driver"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_dry_run_in_a_container_plans_no_driver_and_no_reboot(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / ".dockerenv").touch()
    (root / "cgroup").write_text("0::/\n")
    out = _bash_dry_run(_script("ubuntu24.04", H100), tmp_path, str(root))
    assert "inside a container" in out and "--gpus all" in out
    assert "reboot needed: no" in out
    assert "linux-headers" not in out and "nvidia-open" not in out


# --------------------------------------------------------------------------- dry-run wording


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_dry_run_summary_says_would_never_done(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "cgroup").write_text("0::/init.scope\n")  # not a container
    text = _script("ubuntu24.04", H100)
    out = _bash_dry_run(text, tmp_path, str(root))
    summary = out.split("Summary for", 1)[1]
    if "skip driver" in out:  # a driver already loaded on the machine running the test
        pytest.skip("this machine has an NVIDIA driver loaded: the driver step is skipped, nothing is planned")
    assert "would:   driver: nvidia-open-580" in summary
    assert "done:" not in summary


def test_a_hostile_container_name_never_reaches_the_script() -> None:
    hostile = MachineTarget(
        compute_capabilities=("9.0",),
        distro_id="ubuntu",
        distro_version="24.04",
        container="docker\ntouch /tmp/gpudoctor_injected #",
        source="synthetic",
    )
    text = _script(None, hostile)
    assert "gpudoctor_injected" not in text and "inside a unknown container" not in text
    assert "driver: none (inside a container of an unknown kind)" in text


# --------------------------------------------------------------------------- toolkit vs architecture


def test_a_cuda_13_toolkit_becomes_12_9_for_a_gtx_1050() -> None:
    # CUDA 13.0 no longer builds for architectures before Turing (7.5): a Pascal GPU gets CUDA 12.x's newest.
    text = _script("ubuntu24.04", GTX_1050, framework=None, cuda_toolkit="13.0", cudnn=True)
    assert "cuda-toolkit-12-9" in text and "cuda-toolkit-13" not in text
    assert "#   cuDNN: cudnn9-cuda-12" in text and "pkg_install cudnn9-cuda-12" in text
    assert "pkg_install cudnn9-cuda-13" not in text
    header = " ".join(line.lstrip("#").strip() for line in _header(text).splitlines())  # the wrapped lines as one
    assert "CUDA 13.0 cannot build for every GPU here: Pascal (compute capability 6.1)" in header
    assert "CUDA 12.9 is the newest toolkit that builds for every GPU here" in header
    assert "[ARCH_DROP] CUDA 12.9 release notes, 'Deprecated Architectures'" in header  # the cited source is listed


def test_a_cuda_13_toolkit_stays_for_an_h100() -> None:
    text = _script("ubuntu24.04", H100, framework=None, cuda_toolkit="13.0")
    assert "cuda-toolkit-13-0" in text and "cannot build" not in text
    assert "CUDA toolkit: cuda-toolkit-13-0" in _header(text) and "asked for" in _header(text)


def test_no_toolkit_builds_for_kepler_and_blackwell_together() -> None:
    kepler_blackwell = MachineTarget(compute_capabilities=("3.5", "12.0"), source="synthetic")
    with pytest.raises(GenerationRefused, match="no CUDA toolkit fits these GPUs"):
        _script("ubuntu24.04", kepler_blackwell, driver=False, framework=None, cuda_toolkit="13.0")


@pytest.mark.parametrize(
    ("given", "kept"),
    [("docker", "docker"), ("podman", "podman"), ("Docker", "unknown"), ("docker; rm -rf /", "unknown"), ("", None)],
)
def test_the_input_boundary_keeps_a_safe_container_token(given: str, kept: str | None) -> None:
    from gpudoctor.generate.inputs import safe_target

    assert safe_target(MachineTarget(container=given, source="synthetic")).container == kept
