"""ROCM010 (/dev/kfd and render nodes) and ROCM011 (visibility variables).

The device-node, container, environment and PCI records here are SYNTHETIC, written in the scans' own shape:
an AMD Instinct MI210 pair (PCI 1002:740f, class 0380, as the real lspci fixture of ROCm issue 6281 lists
them) with each access problem the check must tell apart.
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from gpudoctor.results import Severity, Status
from gpudoctor_checks import rocm_access
from tests.helpers.fixtures import fixture_text
from tests.synthetic.evidence import judge, make_evidence

MI210_PAIR = {
    "readable": True,
    "scanned": 40,
    "dmi": {"sys_vendor": None, "product_name": None},
    "devices": [
        {"address": address, "vendor": "0x1002", "device": "0x740f", "class": "0x038000", "driver": "amdgpu"}
        for address in ("0000:83:00.0", "0000:c3:00.0")
    ],
}
NO_GPU = {"readable": True, "scanned": 6, "devices": [], "dmi": {}}
RENDER = {"char_device": True, "mode": "0o660", "gid": 992, "group": "render", "readable": True, "writable": True}
KFD_OK = {"char_device": True, "mode": "0o660", "gid": 992, "group": "render", "readable": True, "writable": True}
KFD_DENIED = {**KFD_OK, "readable": False, "writable": False}
BARE_METAL = {"dockerenv": False, "containerenv": False, "cgroup": "0::/\n", "kubernetes_serviceaccount": False}
DOCKER = {**BARE_METAL, "dockerenv": True}
MODULES_WITH_AMDGPU = "amdgpu 17039360 0 - Live 0x0000000000000000\n"
MODULES_WITHOUT = "ext4 1007616 2 - Live 0x0000000000000000\n"


def nodes(kfd: dict[str, Any] | None = None, renders: int = 2, groups: tuple[str, ...] = ("ana",), uid: int = 1000):
    found: dict[str, Any] = {f"/dev/dri/renderD{128 + n}": RENDER for n in range(renders)}
    if kfd is not None:
        found["/dev/kfd"] = kfd
    return {
        "nodes": found,
        "uid": uid,
        "root": uid == 0,
        "groups": [{"gid": 1000 + n, "name": g} for n, g in enumerate(groups)],
        "dri_directory": True,
    }


def evidence(
    accel: Any = None,
    pci: Any = None,
    container: Any = None,
    modules: str = MODULES_WITH_AMDGPU,
    env: dict[str, str] | None = None,
    present: tuple[str, ...] = (),
):
    return make_evidence(
        pci_devices_json=pci if pci is not None else MI210_PAIR,
        accel_device_nodes_json=accel if accel is not None else nodes(KFD_OK),
        container_json=container if container is not None else BARE_METAL,
        proc_modules_txt=modules,
        env_json={"variables": env or {}, "present": list(present), "missing_library_dirs": []},
    )


def fix_commands(result: Any) -> list[str]:
    return [c for f in result.findings if f.fix is not None for c in f.fix.commands]


def test_not_applicable_without_an_amd_gpu() -> None:
    for spec in (rocm_access.kfd_access, rocm_access.visible_devices):
        result = judge(spec, evidence(pci=NO_GPU, accel=nodes(None, renders=0)))
        assert result.status is Status.NOT_APPLICABLE and "no AMD GPU" in result.summary


def test_all_usable_is_ok() -> None:
    result = judge(rocm_access.kfd_access, evidence())
    assert result.status is Status.OK and "2 render nodes" in result.summary


def test_kfd_missing_driver_not_loaded() -> None:
    result = judge(rocm_access.kfd_access, evidence(accel=nodes(None), modules=MODULES_WITHOUT))
    assert result.status is Status.PROBLEM
    assert "amdgpu driver is not loaded" in result.findings[0].message
    assert "sudo modprobe amdgpu" in fix_commands(result)


def test_kfd_missing_in_docker_names_the_device_flags() -> None:
    result = judge(rocm_access.kfd_access, evidence(accel=nodes(None), container=DOCKER))
    assert "inside this docker container" in result.findings[0].message
    assert any("--device=/dev/kfd --device=/dev/dri" in c for c in fix_commands(result))


def test_kfd_missing_in_apptainer_names_the_bind() -> None:
    result = judge(rocm_access.kfd_access, evidence(accel=nodes(None), present=("APPTAINER_CONTAINER",)))
    assert "Apptainer" in result.findings[0].message
    assert any("--bind=/dev/kfd,/dev/dri" in c for c in fix_commands(result))


def test_kfd_permission_denied_names_the_missing_group() -> None:
    # The situation of fixture G err-rocminfo-dev-kfd-permission-denied (the user has video, not render).
    result = judge(rocm_access.kfd_access, evidence(accel=nodes(KFD_DENIED, groups=("rocm-user", "sudo", "video"))))
    assert result.status is Status.PROBLEM
    message = result.findings[0].message
    assert "/dev/kfd" in message and "not in render" in message
    assert "sudo usermod -a -G render,video $LOGNAME" in fix_commands(result)


def test_kfd_permission_denied_in_a_container_adds_the_group_by_number() -> None:
    result = judge(rocm_access.kfd_access, evidence(accel=nodes(KFD_DENIED), container=DOCKER))
    assert any("--group-add 992" in c for c in fix_commands(result))


def test_root_is_never_denied() -> None:
    result = judge(rocm_access.kfd_access, evidence(accel=nodes(KFD_DENIED, uid=0)))
    assert result.status is Status.OK


def test_fewer_render_nodes_than_gpus_is_a_warning() -> None:
    result = judge(rocm_access.kfd_access, evidence(accel=nodes(KFD_OK, renders=1)))
    assert result.status is Status.WARNING
    assert result.findings[0].severity is Severity.WARNING
    assert "1 /dev/dri/renderD* node for 2 AMD GPUs" in result.findings[0].message


def test_nodes_not_collected() -> None:
    ev = evidence()
    del ev.items["accel-device-nodes.json"]
    assert judge(rocm_access.kfd_access, ev).status is Status.NOT_APPLICABLE


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"HIP_VISIBLE_DEVICES": ""}, "HIP_VISIBLE_DEVICES=empty hides every AMD GPU"),
        ({"ROCR_VISIBLE_DEVICES": "-1"}, "ROCR_VISIBLE_DEVICES='-1' hides every AMD GPU"),
        ({"HIP_VISIBLE_DEVICES": "0,5"}, "HIP_VISIBLE_DEVICES='0,5' names GPU 5, which does not exist (2 devices"),
        ({"CUDA_VISIBLE_DEVICES": "2"}, "CUDA_VISIBLE_DEVICES='2' hides every AMD GPU"),
        # ROCR's list is applied first: HIP's index 1 counts within the one device it left
        ({"ROCR_VISIBLE_DEVICES": "1", "HIP_VISIBLE_DEVICES": "1"}, "HIP_VISIBLE_DEVICES='1' hides every AMD GPU"),
    ],
)
def test_visibility_variables_that_hide_gpus(env: dict[str, str], expected: str) -> None:
    result = judge(rocm_access.visible_devices, evidence(env=env))
    assert result.status is Status.WARNING
    assert any(expected in f.message for f in result.findings), [f.message for f in result.findings]


@pytest.mark.parametrize(
    "env", [{}, {"ROCR_VISIBLE_DEVICES": "0,GPU-4b2c1a9f"}, {"HIP_VISIBLE_DEVICES": "1"}, {"PATH": "/usr/bin"}]
)
def test_visibility_variables_that_are_fine(env: dict[str, str]) -> None:
    assert judge(rocm_access.visible_devices, evidence(env=env)).status is Status.OK


def test_real_rocminfo_permission_denied_gives_the_group_fix() -> None:
    # REAL: fixture G err-rocminfo-dev-kfd-permission-denied (ROCm-docker#116), pasted alone: no PCI, no nodes.
    text = fixture_text("G-amd/err-rocminfo-dev-kfd-permission-denied-rocm-terminal-container-rocm-docker-116.txt")
    result = judge(rocm_access.kfd_access, make_evidence(rocminfo_txt=text))
    assert result.status is Status.PROBLEM
    assert result.findings[0].message.startswith("ROCm cannot open /dev/kfd: Permission denied")
    commands = fix_commands(result)
    assert "sudo usermod -a -G render,video $LOGNAME" in commands
    assert any('--group-add "$(getent group render | cut -d: -f3)"' in c for c in commands)


def test_every_fix_command_parses_in_bash() -> None:
    cases = [
        evidence(accel=nodes(None), modules=MODULES_WITHOUT),
        evidence(accel=nodes(None)),
        evidence(accel=nodes(None), container=DOCKER),
        evidence(accel=nodes(None), present=("SINGULARITY_CONTAINER",)),
        evidence(accel=nodes(KFD_DENIED)),
        evidence(accel=nodes(KFD_DENIED), container=DOCKER),
        evidence(accel=nodes(KFD_OK, renders=0), container=DOCKER),
        evidence(env={"HIP_VISIBLE_DEVICES": "9"}),
        make_evidence(rocminfo_txt="ROCk module is loaded\nUnable to open /dev/kfd read-write: Permission denied\n"),
    ]
    commands = {
        c
        for ev in cases
        for spec in (rocm_access.kfd_access, rocm_access.visible_devices)
        for c in fix_commands(judge(spec, ev))
    }
    assert len(commands) >= 8
    for command in commands:
        done = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, (command, done.stderr)
