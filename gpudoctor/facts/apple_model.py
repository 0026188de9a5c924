"""Typed facts about an Apple Mac's GPU and the Python that would drive it (MPS, Metal).

Read from ``system_profiler SPDisplaysDataType`` (text and ``-json``), the macOS version and whether the
process runs translated by Rosetta (``macos.json``), the framework probes and a pasted ``collect_env``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AppleGpu:
    name: str | None = None  # "Apple M3", "AMD Radeon Pro Vega 64"
    vendor: str | None = None  # "apple", "amd", "intel"
    cores: int | None = None  # "Total Number of Cores"
    metal: str | None = None  # "Metal 3"; older keys: "Supported, feature set macOS GPUFamily2 v1"
    vram_mib: int | None = None  # discrete GPUs only
    bus: str | None = None  # "Built-In", "PCIe"


@dataclass(frozen=True)
class MacPlatform:
    macos_version: str | None = None  # "15.3" (the real one; an x86_64 Python under Rosetta may see "10.16")
    chip: str | None = None  # "Apple M2 Pro" / the Intel CPU brand
    apple_silicon: bool | None = None
    python_arch: str | None = None  # "arm64", "x86_64"
    translated: bool | None = None  # the process runs under Rosetta 2


@dataclass(frozen=True)
class AppleFacts:
    gpus: tuple[AppleGpu, ...] = ()
    platform: MacPlatform | None = None  # None: not a Mac (or nothing says it is)

    @property
    def present(self) -> bool:
        return bool(self.gpus) or bool(self.platform and self.platform.apple_silicon)
