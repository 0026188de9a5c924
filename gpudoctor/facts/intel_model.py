"""Typed facts about Intel GPUs (Arc, Flex, Data Center GPU Max) and their runtime (Level Zero, OpenCL).

Read from the PCI bus, ``xpu-smi discovery`` (table, borderless and ``-j`` JSON), ``sycl-ls`` (old and new
bracket formats), the loaded kernel modules (``i915``, ``xe``) and a pasted ``collect_env``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class IntelGpu:
    index: int | None = None  # xpu-smi device id / Level Zero ordinal
    name: str | None = None  # "Intel(R) Arc(TM) A770 Graphics"
    device_id: str | None = None  # "56a0"
    bus_id: str | None = None
    memory_mib: int | None = None
    discrete: bool | None = None  # False for an integrated GPU
    driver_version: str | None = None
    sources: tuple[str, ...] = ()  # "xpu-smi", "sycl-ls", "pci", "collect_env"
    kernel_driver: str | None = None  # the driver bound to its PCI function ("i915", "xe"); None: none or unknown
    uuid: str | None = None
    firmware_version: str | None = None  # "DG02_1.3253"
    tiles: int | None = None
    eus: int | None = None
    pcie_generation: int | None = None
    pcie_max_width: int | None = None
    level_zero: bool | None = None  # listed by sycl-ls under Level Zero (False: under OpenCL only)


@dataclass(frozen=True)
class SyclDevice:
    backend: str  # "level_zero", "opencl", "cuda", "hip"
    device_type: str  # "gpu", "cpu", "fpga", "acc"
    name: str | None = None
    driver_version: str | None = None
    index: int | None = None  # the backend's own ordinal ("[level_zero:gpu][level_zero:1]" -> 1)
    platform: str | None = None  # "Intel(R) Level-Zero", "Intel(R) OpenCL Graphics"


@dataclass(frozen=True)
class IntelFacts:
    gpus: tuple[IntelGpu, ...] = ()
    sycl_devices: tuple[SyclDevice, ...] | None = None  # None: sycl-ls not collected / failed
    kernel_driver: str | None = None  # "i915" or "xe" bound / loaded
    level_zero_gpu: bool | None = None  # a Level Zero GPU device is visible
    tool_errors: dict[str, str] = field(default_factory=dict)
    kernel_modules_known: bool = False  # /proc/modules was read, so kernel_driver None means neither is loaded
    bus_scanned: bool = False  # sysfs was read, so a GPU's kernel_driver None means no driver is bound

    @property
    def present(self) -> bool:
        return bool(self.gpus)
