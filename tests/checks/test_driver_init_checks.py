"""DRV005: a GPU the driver refused or failed to initialise, as the kernel log says it.

The kernel-log sentences quoted in the failure-modes reference (real reports) are read in place; the legacy-branch
notice and the surroundings of every log are SYNTHETIC, in the driver's own NVRM wording.
"""

from __future__ import annotations

import re

import pytest

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.evidence.model import EvidenceItem
from gpudoctor.results import Severity, Status
from gpudoctor_checks import driver
from tests.helpers.fixtures import real_fixtures_dir
from tests.synthetic.evidence import (
    NO_GPU_SCAN,
    SYNTHETIC_PROC_DRIVER_535,
    SYNTHETIC_PROC_MODULES_NVIDIA,
    judge,
    make_evidence,
    messages,
    pci_scan,
)

UBUNTU = 'NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\n'
DEBIAN = 'NAME="Debian GNU/Linux"\nID=debian\nVERSION_ID="11"\n'

SYNTHETIC_LEGACY_470 = """\
[    5.000000] NVRM: The NVIDIA GeForce GT 710 GPU installed in this system is
[    5.000001] NVRM:  supported through the NVIDIA 470.xx Legacy drivers. Please
[    5.000002] NVRM:  visit http://www.nvidia.com/object/unix.html for more
[    5.000003] NVRM:  information.  The 535.54.03 NVIDIA driver will ignore
[    5.000004] NVRM:  this GPU.  Continuing probe...
"""
SYNTHETIC_LEGACY_390 = SYNTHETIC_LEGACY_470.replace("GeForce GT 710", "GeForce GTX 680").replace("470.xx", "390.xx")
SYNTHETIC_GSP = """\
[    5.000000] NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1b80)
[    5.000001] NVRM: installed in this system is not supported by open
[    5.000002] NVRM: nvidia.ko because it does not include the required GPU
[    5.000003] NVRM: System Processor (GSP).
"""
SYNTHETIC_RM_INIT_WITH_XID = """\
[   19.000000] NVRM: Xid (PCI:0000:01:00): 79, pid=0, name=, GPU has fallen off the bus.
[   20.000000] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x26:0xffff:1290)
[   20.000001] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0
"""
SYNTHETIC_CLEAN_LOG = "[    4.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.54.03\n"


def _machine(kernel_log: str | None, os_release: str = UBUNTU, **more: object):
    """A machine whose nvidia module is loaded on one GPU (SYNTHETIC), with ``kernel_log`` as its dmesg."""
    sources: dict[str, object] = {
        "proc_driver_nvidia_version_txt": SYNTHETIC_PROC_DRIVER_535,
        "proc_modules_txt": SYNTHETIC_PROC_MODULES_NVIDIA,
        "pci_devices_json": pci_scan(("0000:01:00.0", "0x128b", "nvidia")),
        "os_release": os_release,
    }
    if kernel_log is not None:
        sources["dmesg_nvidia_txt"] = kernel_log
    sources.update(more)
    return make_evidence(**sources)


def _failure_modes_dmesg_quotes() -> list[str]:
    """The ``dmesg`` sentences of failure mode 23 in the reference (real reports), read in place."""
    path = real_fixtures_dir().parent / "reference" / "failure-modes.md"
    if not path.exists():
        pytest.skip(f"reference {path} not available")
    row = next((line for line in path.read_text(encoding="utf-8").splitlines() if "RmInitAdapter" in line), None)
    if row is None:
        pytest.skip("the failure-modes reference no longer quotes RmInitAdapter")
    return [quote.lstrip("…") for quote in re.findall(r"`([^`]*(?:RmInitAdapter|nvidia\.ko)[^`]*)`", row)]


# --- real sentences ---------------------------------------------------------------------------------------------


def test_real_rm_init_and_gsp_sentences_are_problems_with_their_fixes():
    quotes = _failure_modes_dmesg_quotes()
    assert any("RmInitAdapter failed" in q for q in quotes) and any("open nvidia.ko" in q for q in quotes)
    log = "".join(f"[   20.{i:06d}] NVRM: {quote}\n" for i, quote in enumerate(quotes))
    result = judge(driver.gpu_initialised, _machine(log))
    assert result.status is Status.PROBLEM
    found = messages(result, Severity.PROBLEM)
    assert any("RmInitAdapter failed" in m for m in found)
    assert any("no GSP" in m for m in found)
    commands = [c for f in result.findings if f.fix for c in f.fix.commands]
    assert "sudo nvidia-smi -r" in commands
    assert "sudo apt-get install nvidia-driver-535  # replaces nvidia-driver-535-open" in commands


# --- the rule, on SYNTHETIC inputs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("os_release", "log", "command"),
    [
        (UBUNTU, SYNTHETIC_LEGACY_470, "sudo apt-get install nvidia-driver-470"),
        (DEBIAN, SYNTHETIC_LEGACY_390, "sudo apt-get install nvidia-legacy-390xx-driver"),
    ],
)
def test_a_gpu_that_needs_a_legacy_branch_gets_that_branchs_driver(os_release, log, command):
    result = judge(driver.gpu_initialised, _machine(log, os_release))
    assert result.status is Status.PROBLEM
    (finding,) = result.findings
    branch = "470" if "470" in log else "390"
    assert f"only by the NVIDIA {branch} legacy driver" in finding.message
    assert "535.54.03 ignores it" in finding.message
    assert finding.fix is not None and command in finding.fix.commands and finding.fix.needs_root
    assert finding.evidence == (Ev.KERNEL_LOG,)


def test_a_legacy_gpu_on_an_unknown_distribution_is_pointed_at_the_driver_archive():
    result = judge(driver.gpu_initialised, _machine(SYNTHETIC_LEGACY_470, 'ID=gentoo\nNAME="Gentoo"\n'))
    (finding,) = result.findings
    assert finding.fix is not None and finding.fix.url == "https://www.nvidia.com/en-us/drivers/unix/"
    assert finding.fix.commands == ("sudo reboot",)


def test_a_gpu_without_gsp_under_the_open_module_is_told_to_use_the_proprietary_one():
    result = judge(driver.gpu_initialised, _machine(SYNTHETIC_GSP, 'ID=fedora\nVERSION_ID="40"\n'))
    assert result.status is Status.PROBLEM
    (finding,) = result.findings
    assert finding.fix is not None
    assert "NVreg_EnableGpuFirmware=0" in finding.fix.summary
    assert any("--kernel-module-type=proprietary" in c for c in finding.fix.commands)


def test_an_adapter_that_failed_to_initialise_names_the_xid_beside_it():
    result = judge(driver.gpu_initialised, _machine(SYNTHETIC_RM_INIT_WITH_XID))
    assert result.status is Status.PROBLEM
    (finding,) = result.findings
    assert finding.fix is not None and "Xid 79" in finding.fix.summary
    assert result.data["xids"] == [79]


@pytest.mark.parametrize(
    "surroundings",
    ["", SYNTHETIC_CLEAN_LOG, SYNTHETIC_CLEAN_LOG * 50, "garbage \x00 line\n"],
)
def test_a_gpu_that_failed_to_initialise_is_never_fine(surroundings):
    log = surroundings + "[   20.1] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:667)\n" + surroundings
    for evidence in (_machine(log), _machine(log, pci_devices_json=NO_GPU_SCAN), make_evidence(dmesg_nvidia_txt=log)):
        assert judge(driver.gpu_initialised, evidence).status is Status.PROBLEM


def test_a_clean_log_on_a_loaded_driver_is_fine():
    result = judge(driver.gpu_initialised, _machine(SYNTHETIC_CLEAN_LOG))
    assert result.status is Status.OK


def test_a_kernel_log_not_collected_or_not_readable_is_unknown_not_fine():
    not_collected = judge(driver.gpu_initialised, _machine(None))
    assert not_collected.status is Status.NOT_APPLICABLE
    assert "not collected" in not_collected.summary
    denied = _machine(None)
    denied.add(
        EvidenceItem(
            name=Ev.KERNEL_LOG.value,
            kind="command",
            argv=["dmesg"],
            exit_code=1,
            stderr="dmesg: read kernel buffer failed: Operation not permitted",
        )
    )
    failed = judge(driver.gpu_initialised, denied)
    assert failed.status is Status.NOT_APPLICABLE
    assert "Operation not permitted" in failed.summary


def test_no_gpu_on_the_bus_and_a_clean_log_is_not_applicable():
    evidence = make_evidence(pci_devices_json=NO_GPU_SCAN, dmesg_nvidia_txt=SYNTHETIC_CLEAN_LOG)
    assert judge(driver.gpu_initialised, evidence).status is Status.NOT_APPLICABLE
