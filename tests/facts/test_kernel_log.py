"""kernel_log: Xid events and driver-load failures from dmesg / journalctl text.

No kernel log is in the captured corpus, so every input here is synthetic:
written from the documented message formats (NVIDIA's Xid catalogue and the
driver's own NVRM message text), not captured.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.kernel_log import KernelLog, XidEvent, parse_kernel_log
from tests.helpers.strategies import line_mutations, non_text_json

# Written from the documented formats, not captured.
SYNTHETIC_XID_79 = "[ 1234.567890] NVRM: Xid (PCI:0000:01:00): 79, pid=2345, name=python3, GPU has fallen off the bus."
SYNTHETIC_XID_79_OLD = "[  88.000001] NVRM: Xid (0000:01:00): 79, GPU has fallen off the bus."
SYNTHETIC_XID_MIG = (
    "Oct 10 12:00:00 node1 kernel: NVRM: Xid (PCI:0000:3B:00 GPU-I:05): 43, pid=1, name=app, Ch 00000008"
)
SYNTHETIC_XID_119 = (
    "[Tue Oct 10 12:00:00 2024] NVRM: Xid (PCI:0000:b1:00): 119, pid=99, name=nvidia-smi, "
    "Timeout after 6s of waiting for RPC response from GPU0 GSP! "
    "Expected function 76 (GSP_RM_CONTROL)"
)
# The driver prints this one sentence over four NVRM lines.
SYNTHETIC_API_MISMATCH = """\
[   12.345678] NVRM: API mismatch: the client has the version 535.54.03, but
[   12.345679] NVRM: this kernel module has the version 530.30.02.  Please
[   12.345680] NVRM: make sure that this kernel module and all NVIDIA driver
[   12.345681] NVRM: components have the same version.
"""
SYNTHETIC_NOUVEAU = """\
[    3.100000] NVRM: The NVIDIA probe routine was not called for 1 device(s).
[    3.100001] NVRM: This can occur when a driver such as:
[    3.100002] NVRM: nouveau, rivafb, nvidiafb or rivatv
[    3.100003] NVRM: was loaded and obtained ownership of the NVIDIA device(s).
[    3.100004] NVRM: No NVIDIA devices probed.
"""
SYNTHETIC_NOUVEAU_BOUND = "[    2.000000] nouveau 0000:01:00.0: NVIDIA GA102 (172000a1)"
SYNTHETIC_RM_INIT = """\
[   20.000000] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x26:0xffff:1290)
[   20.000001] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0
"""
SYNTHETIC_GSP_UNSUPPORTED = """\
[    5.000000] NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1b80)
[    5.000001] NVRM: installed in this system is not supported by open
[    5.000002] NVRM: nvidia.ko because it does not include the required GPU
[    5.000003] NVRM: System Processor (GSP).
"""
SYNTHETIC_LEGACY = """\
[    5.000000] NVRM: The NVIDIA GeForce GT 710 GPU installed in this system is
[    5.000001] NVRM:  supported through the NVIDIA 470.xx Legacy drivers. Please
[    5.000002] NVRM:  visit http://www.nvidia.com/object/unix.html for more
[    5.000003] NVRM:  information.  The 535.54.03 NVIDIA driver will ignore
[    5.000004] NVRM:  this GPU.  Continuing probe...
"""
SYNTHETIC_SECURE_BOOT = "[    4.000000] Loading of unsigned module is rejected"
SYNTHETIC_KEY_REJECTED = "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service"
SYNTHETIC_LOCKDOWN = "[    4.1] Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7"

SYNTHETIC_ALL = "\n".join(
    [
        SYNTHETIC_XID_79,
        SYNTHETIC_XID_79_OLD,
        SYNTHETIC_XID_MIG,
        SYNTHETIC_XID_119,
        SYNTHETIC_API_MISMATCH,
        SYNTHETIC_NOUVEAU,
        SYNTHETIC_NOUVEAU_BOUND,
        SYNTHETIC_RM_INIT,
        SYNTHETIC_GSP_UNSUPPORTED,
        SYNTHETIC_LEGACY,
        SYNTHETIC_SECURE_BOOT,
    ]
)


def test_xid_79_new_format() -> None:
    log = parse_kernel_log(SYNTHETIC_XID_79)
    assert log.xid_events == [
        XidEvent(code=79, pci="0000:01:00", message="GPU has fallen off the bus.", line=SYNTHETIC_XID_79)
    ]
    assert log.fallen_off_bus


def test_xid_79_old_format() -> None:
    (event,) = parse_kernel_log(SYNTHETIC_XID_79_OLD).xid_events
    assert (event.code, event.pci, event.message) == (79, "0000:01:00", "GPU has fallen off the bus.")


def test_xid_mig_instance_and_syslog_prefix() -> None:
    (event,) = parse_kernel_log(SYNTHETIC_XID_MIG).xid_events
    assert (event.code, event.pci, event.message) == (43, "0000:3b:00", "Ch 00000008")


def test_xid_119_gsp_timeout_with_dmesg_t_stamp() -> None:
    (event,) = parse_kernel_log(SYNTHETIC_XID_119).xid_events
    assert event.code == 119 and event.message.startswith("Timeout after 6s of waiting for RPC response")


def test_api_mismatch_over_several_lines() -> None:
    assert parse_kernel_log(SYNTHETIC_API_MISMATCH).api_mismatch == ("535.54.03", "530.30.02")


def test_nouveau_took_the_gpu() -> None:
    assert parse_kernel_log(SYNTHETIC_NOUVEAU).nouveau_took_gpu
    assert parse_kernel_log(SYNTHETIC_NOUVEAU_BOUND).nouveau_took_gpu
    assert not parse_kernel_log("[ 1.0] Initialized some driver; not nouveau\n").nouveau_took_gpu


def test_rm_init_failed() -> None:
    log = parse_kernel_log(SYNTHETIC_RM_INIT)
    assert log.rm_init_failed and not log.xid_events


def test_gsp_unsupported_over_several_lines() -> None:
    assert parse_kernel_log(SYNTHETIC_GSP_UNSUPPORTED).gsp_unsupported


def test_legacy_branch_required() -> None:
    assert parse_kernel_log(SYNTHETIC_LEGACY).legacy_branch_required == "470.xx"


@pytest.mark.parametrize("text", [SYNTHETIC_SECURE_BOOT, SYNTHETIC_KEY_REJECTED, SYNTHETIC_LOCKDOWN])
def test_secure_boot_rejected(text: str) -> None:
    assert parse_kernel_log(text).secure_boot_rejected


def test_everything_at_once() -> None:
    log = parse_kernel_log(SYNTHETIC_ALL)
    assert [e.code for e in log.xid_events] == [79, 79, 43, 119]
    assert log.api_mismatch == ("535.54.03", "530.30.02")
    assert (
        log.nouveau_took_gpu,
        log.rm_init_failed,
        log.gsp_unsupported,
        log.secure_boot_rejected,
        log.fallen_off_bus,
        log.legacy_branch_required,
    ) == (True, True, True, True, True, "470.xx")


@pytest.mark.parametrize(
    "text",
    ["", "dmesg: read kernel buffer failed: Operation not permitted", "[    0.000000] Linux version 6.8.0-45-generic"],
)
def test_quiet_log(text: str) -> None:
    assert parse_kernel_log(text) == KernelLog()


@given(st.text())
def test_any_text(text: str) -> None:
    log = parse_kernel_log(text)
    assert isinstance(log, KernelLog)
    assert all(isinstance(e, XidEvent) and isinstance(e.code, int) for e in log.xid_events)
    assert log.api_mismatch is None or (isinstance(log.api_mismatch, tuple) and len(log.api_mismatch) == 2)


@given(non_text_json())
def test_any_json_value_is_unknown_not_an_error(value: object) -> None:
    assert parse_kernel_log(value) == KernelLog()


@given(line_mutations(SYNTHETIC_ALL))
def test_mutated_logs_never_raise(text: str) -> None:
    assert isinstance(parse_kernel_log(text), KernelLog)


@given(
    code=st.integers(1, 999),
    bus=st.integers(0, 255),
    stamp=st.floats(0, 1e6, allow_nan=False),
    message=st.from_regex(r"[A-Za-z][A-Za-z0-9 .!()]{0,40}", fullmatch=True),
)
def test_generated_xid_lines_round_trip(code: int, bus: int, stamp: float, message: str) -> None:
    line = f"[{stamp:12.6f}] NVRM: Xid (PCI:0000:{bus:02x}:00): {code}, pid=1, name=x, {message}"
    (event,) = parse_kernel_log(line).xid_events
    assert (event.code, event.pci, event.message) == (code, f"0000:{bus:02x}:00", message.strip())


def test_legacy_and_gsp_notices_are_read_whatever_their_case_and_line_breaks() -> None:
    # SYNTHETIC: NVIDIA's sentences with other capitalisation and wrapping, as other driver releases print them.
    legacy = (
        "[ 5.1] NVRM: The NVIDIA Quadro K600 GPU installed in this system is supported through the\n"
        "[ 5.1] NVRM:  NVIDIA 390.xx legacy driver. Please visit http://www.nvidia.com/object/unix.html\n"
    )
    assert parse_kernel_log(legacy).legacy_branch_required == "390.xx"
    gsp = "[ 3.0] NVRM: ... is not supported by OPEN nvidia.ko because it does not include the required GPU\n"
    assert parse_kernel_log(gsp).gsp_unsupported
    assert not parse_kernel_log("[ 3.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module 535.54.03\n").gsp_unsupported
