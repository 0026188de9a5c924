"""kernel_module: /proc/driver/nvidia/version, /sys/module/nvidia/version and /proc/modules."""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.kernel_module import (
    LoadedModule,
    parse_proc_driver_version,
    parse_proc_modules,
    parse_sys_module_version,
)
from gpudoctor.facts.model import KernelModule
from tests.helpers.fixtures import fixture_files, read_fixture
from tests.helpers.strategies import fixture_named, line_mutations, non_text_json

PROC_VERSION_FILES = fixture_files("D", "proc-version-*.txt")

# Written from the documented /proc/modules format (kernel m_show), not captured.
SYNTHETIC_PROC_MODULES = """\
nvidia_uvm 1437696 0 - Live 0x0000000000000000 (POE)
nvidia_drm 77824 3 - Live 0x0000000000000000 (POE)
nvidia_modeset 1302528 5 nvidia_drm, Live 0x0000000000000000 (POE)
nvidia 56463360 205 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)
drm_kms_helper 311296 1 nvidia_drm, Live 0x0000000000000000
nouveau 2433024 0 - Loading 0x0000000000000000
no_unload 16384 - - Live 0x0000000000000000
"""
# Written from the documented sysfs format, not captured.
SYNTHETIC_SYS_MODULE_VERSION = "535.54.03\n"


def _fixture(name_part: str) -> pathlib.Path:
    return fixture_named(PROC_VERSION_FILES, name_part)


# --- real captured /proc/driver/nvidia/version -------------------------------------------------------------


def test_open_kernel_module_565() -> None:
    module = parse_proc_driver_version(read_fixture(_fixture("open-kernel-module-565.57.01")))
    assert module.version == "565.57.01"
    assert module.flavor == "open"
    assert module.architecture == "x86_64"
    assert module.gcc_version == "13.3.0"
    assert module.raw_first_line is not None and module.raw_first_line.startswith("NVRM version: NVIDIA UNIX Open")


def test_jetson_orin_l4t_35_3_1() -> None:
    module = parse_proc_driver_version(read_fixture(_fixture("jetson-orin-aarch64-35.3.1")))
    assert module.version == "35.3.1"
    assert module.flavor == "l4t"
    assert module.architecture == "aarch64"
    assert module.gcc_version == "9.3.0"


def test_proprietary_384_after_a_prompt_line() -> None:
    text = read_fixture(_fixture("proprietary-384.98"))
    assert text.startswith("$ cat /proc/driver/nvidia/version")  # the capture's own prompt line
    module = parse_proc_driver_version(text)
    assert module.version == "384.98"
    assert module.flavor == "proprietary"
    assert module.architecture == "x86_64"
    assert module.gcc_version == "7.2.0"
    assert module.raw_first_line == (
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct 26 15:16:01 PDT 2017"
    )


def test_live_proc_driver_version_if_present() -> None:
    path = pathlib.Path("/proc/driver/nvidia/version")
    if not path.is_file():
        pytest.skip("no NVIDIA kernel module loaded here")
    module = parse_proc_driver_version(path.read_text(errors="replace"))
    assert module.version is not None and module.flavor in ("open", "proprietary", "l4t")


# --- edge cases (synthetic) ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n\n", "cat: /proc/driver/nvidia/version: No such file or directory"])
def test_nothing_readable_is_unknown(text: str) -> None:
    assert parse_proc_driver_version(text) == KernelModule()


def test_aarch64_desktop_driver_is_not_l4t() -> None:
    # Written from the documented format, not captured: a Grace/GH200 (aarch64) server driver.
    synthetic_aarch64_server = (
        "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  550.54.15  Release Build  "
        "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:15:33 UTC 2024\n"
    )
    module = parse_proc_driver_version(synthetic_aarch64_server)
    assert (module.version, module.flavor, module.architecture) == ("550.54.15", "open", "aarch64")


def test_sys_module_version() -> None:
    assert parse_sys_module_version(SYNTHETIC_SYS_MODULE_VERSION) == "535.54.03"
    assert parse_sys_module_version("  560.35.03  ") == "560.35.03"


@pytest.mark.parametrize("text", ["", "\n", "garbage", "cat: /sys/module/nvidia/version: No such file", "535"])
def test_sys_module_version_unknown(text: str) -> None:
    assert parse_sys_module_version(text) is None


def test_proc_modules_synthetic() -> None:
    modules = parse_proc_modules(SYNTHETIC_PROC_MODULES)
    assert set(modules) == {
        "nvidia_uvm",
        "nvidia_drm",
        "nvidia_modeset",
        "nvidia",
        "drm_kms_helper",
        "nouveau",
        "no_unload",
    }
    assert modules["nvidia_uvm"] == LoadedModule(size=1437696, refcount=0, used_by=[], state="Live", tainted="POE")
    assert modules["nvidia"].used_by == ["nvidia_uvm", "nvidia_modeset"]
    assert modules["nvidia"].refcount == 205
    assert modules["drm_kms_helper"].tainted is None
    assert modules["nouveau"].state == "Loading"
    assert modules["no_unload"].refcount is None


def test_proc_modules_skips_noise() -> None:
    assert parse_proc_modules("$ cat /proc/modules\n\nnot a module line\n") == {}


def test_live_proc_modules_if_present() -> None:
    path = pathlib.Path("/proc/modules")
    if not path.is_file():
        pytest.skip("/proc/modules not readable here")
    text = path.read_text(errors="replace")
    modules = parse_proc_modules(text)
    names = {line.split()[0] for line in text.splitlines() if line.strip()}
    assert set(modules) == names
    assert all(isinstance(record.size, int) for record in modules.values())


# --- properties ---------------------------------------------------------------------------------------------


@given(st.text())
def test_any_text_gives_a_kernel_module(text: str) -> None:
    assert isinstance(parse_proc_driver_version(text), KernelModule)
    version = parse_sys_module_version(text)
    assert version is None or isinstance(version, str)
    modules = parse_proc_modules(text)
    assert isinstance(modules, dict)
    for record in modules.values():
        assert isinstance(record.size, int) and isinstance(record.used_by, list)


@given(non_text_json())
def test_any_json_value_is_unknown_not_an_error(value: object) -> None:
    assert parse_proc_driver_version(value) == KernelModule()
    assert parse_sys_module_version(value) is None
    assert parse_proc_modules(value) == {}


@pytest.mark.parametrize("path", PROC_VERSION_FILES, ids=lambda p: p.name)
@given(data=st.data())
def test_mutated_real_fixtures_never_raise(path: pathlib.Path, data: st.DataObject) -> None:
    text = data.draw(line_mutations(read_fixture(path)))
    module = parse_proc_driver_version(text)
    assert isinstance(module, KernelModule)
    assert module.flavor in (None, "open", "proprietary", "l4t")


@given(line_mutations(SYNTHETIC_PROC_MODULES))
def test_mutated_proc_modules_never_raise(text: str) -> None:
    assert isinstance(parse_proc_modules(text), dict)


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)


@given(
    name=_NAMES,
    size=st.integers(0, 2**40),
    refcount=st.integers(0, 10**5),
    used_by=st.lists(_NAMES, max_size=4, unique=True),
    taint=st.sampled_from(["", " (POE)", " (OE)", " (P)"]),
)
def test_generated_module_lines_round_trip(name: str, size: int, refcount: int, used_by: list[str], taint: str) -> None:
    deps = "".join(f"{dep}," for dep in used_by) or "-"
    record = parse_proc_modules(f"{name} {size} {refcount} {deps} Live 0x0000000000000000{taint}\n")[name]
    assert record == LoadedModule(
        size=size, refcount=refcount, used_by=used_by, state="Live", tainted=taint.strip(" ()") or None
    )
