"""The live collection on macOS: no Linux-only assumption may crash it (no /proc, no /sys, no sched_getaffinity).

This machine is Linux, so a Mac is imitated: ``sys.platform`` patched to "darwin", every file scan pointed at an
empty root, the Linux-only ``os`` functions removed, and PATH emptied so that no Linux tool answers.
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import sys
from typing import Any, Callable

import pytest

from gpudoctor.evidence import collect as collect_module
from gpudoctor.evidence import scan_amd, scan_macos, scan_tpu, system_scan
from gpudoctor.evidence.collect import collect, live_sources
from gpudoctor.evidence.sources import SOURCES
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.sources_state import Why, source_run

ROOTED_SCANS: list[Callable[..., Any]] = [
    system_scan.scan_pci,
    system_scan.scan_cpu_topology,
    system_scan.scan_device_nodes,
    system_scan.scan_cuda_toolkits,
    system_scan.scan_cudnn,
    system_scan.scan_driver_libraries,
    system_scan.scan_container,
    scan_amd.scan_kfd_topology,
    scan_amd.scan_rocm_install,
    scan_amd.scan_accel_device_nodes,
    scan_tpu.scan_tpu_runtime,
    scan_macos.scan_macos,
]
LINUX_ONLY = {s.name for s in SOURCES if s.platforms == ("linux",)}
DARWIN_ONLY = {"system-profiler-displays.txt", "macos.json"}


@pytest.fixture
def like_a_mac(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    # macOS has no sched_getaffinity; the scans must not need it.
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)


@pytest.mark.parametrize("scan", ROOTED_SCANS, ids=lambda f: f"{f.__module__.rsplit('.', 1)[-1]}.{f.__name__}")
def test_every_scan_of_an_empty_root_is_a_json_record(
    scan: Callable[..., Any], tmp_path: pathlib.Path, like_a_mac: None
) -> None:
    record = scan(root=str(tmp_path))
    assert isinstance(record, dict)
    json.dumps(record)


@pytest.mark.parametrize("scan", ROOTED_SCANS, ids=lambda f: f"{f.__module__.rsplit('.', 1)[-1]}.{f.__name__}")
def test_every_scan_of_odd_files_is_a_json_record(
    scan: Callable[..., Any], tmp_path: pathlib.Path, like_a_mac: None
) -> None:
    # Files where devices and sysfs attributes are expected: a regular file as /dev/nvidia0, a directory as
    # /dev/kfd, an unreadable PCI attribute, a dangling link as /dev/accel0.
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "nvidia0").write_text("not a device")
    (tmp_path / "dev" / "kfd").mkdir()
    (tmp_path / "dev" / "accel0").symlink_to(tmp_path / "nowhere")
    pci = tmp_path / "sys" / "bus" / "pci" / "devices" / "0000:01:00.0"
    pci.mkdir(parents=True)
    (pci / "vendor").write_text("0x10de\n")
    (pci / "class").mkdir()  # a directory where a file is read
    json.dumps(scan(root=str(tmp_path)))


def test_scans_without_a_root_are_json_records(like_a_mac: None) -> None:
    json.dumps(system_scan.scan_environment({}))
    json.dumps(system_scan.scan_python_packages())


def test_the_macos_scan_says_so_off_a_mac(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    assert scan_macos.scan_macos() == {
        "platform": "linux",
        "is_macos": False,
        "machine": platform.machine() or None,
        "note": "not macOS",
    }


def test_the_macos_scan_reads_sysctl_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # Synthetic: sysctlbyname answered by a stand-in (this machine has none), as on Apple silicon under Rosetta.
    monkeypatch.setattr(sys, "platform", "darwin")
    values: dict[str, object] = {
        "sysctl.proc_translated": 1,
        "hw.optional.arm64": 1,
        "machdep.cpu.brand_string": "Apple M2 Pro",
        "kern.osproductversion": "15.3",
        "kern.osrelease": "24.3.0",
    }
    monkeypatch.setattr(scan_macos, "_sysctlbyname", lambda: object())
    monkeypatch.setattr(scan_macos, "_int_value", lambda sysctl, name: values.get(name))
    monkeypatch.setattr(scan_macos, "_text_value", lambda sysctl, name: values.get(name))
    monkeypatch.setattr(platform, "mac_ver", lambda: ("10.16", ("", "", ""), "x86_64"))
    record = scan_macos.scan_macos()
    assert record["proc_translated"] == 1 and record["hw_optional_arm64"] == 1
    assert (record["cpu_brand"], record["os_product_version"], record["mac_version"]) == (
        "Apple M2 Pro",
        "15.3",
        "10.16",
    )


def test_the_real_sysctl_reader_is_absent_off_a_mac() -> None:
    if sys.platform == "darwin":
        pytest.skip("a real Mac has sysctlbyname")
    assert scan_macos._sysctlbyname() is None


def test_a_mac_collects_its_own_sources_and_none_of_linuxs(like_a_mac: None) -> None:
    names = {s.name for s in live_sources(SOURCES, None, ())}
    assert names >= DARWIN_ONLY
    assert not names & LINUX_ONLY
    assert LINUX_ONLY  # the catalogue marks some sources Linux-only


def test_linux_does_not_collect_the_mac_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    names = {s.name for s in live_sources(SOURCES, None, ())}
    assert not names & DARWIN_ONLY and names >= LINUX_ONLY


def test_a_whole_collection_on_a_mac_without_tools_finishes(monkeypatch: pytest.MonkeyPatch, like_a_mac: None) -> None:
    monkeypatch.setenv("PATH", "")
    # The NVML probe is a Python subprocess (found without PATH): leave it out, it is not what is tested here.
    sources = tuple(s for s in SOURCES if s.name != "nvml.json")
    evidence = collect(timeout=10.0, sources=sources)
    assert set(evidence.items) == {s.name for s in live_sources(sources, None, ())}
    for name, item in evidence.items.items():
        run = source_run(name, item)
        if (item.error or "").startswith("skipped:"):  # not collected on purpose (no NVIDIA kernel module)
            continue
        # collected, or "not found" (no such tool or file): never a failure, nothing crashed.
        assert run.missing is None or run.missing.why in (Why.ABSENT, Why.NOT_COLLECTED), (name, item.error)
    macos = evidence.json("macos.json")
    assert isinstance(macos, dict) and macos["is_macos"] is True
    assert "not found" in (evidence.items["system-profiler-displays.txt"].error or "")
    Facts(evidence).apple  # noqa: B018 - building the Apple facts from it must not raise


def test_driver_absent_needs_no_proc(monkeypatch: pytest.MonkeyPatch, like_a_mac: None) -> None:
    real_open = open

    def no_proc(path: Any, *args: Any, **kwargs: Any) -> Any:
        if str(path).startswith("/proc"):
            raise FileNotFoundError(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", no_proc)
    assert collect_module.driver_absent() in (True, False)
