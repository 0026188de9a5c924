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
    vendor_id: str | None = None  # "0x106b" (Apple), "0x1002" (AMD), from "Vendor: AMD (0x1002)"
    device_id: str | None = None  # "0x6860" (discrete GPUs; Apple silicon prints none)
    displays: int | None = None  # displays attached to this GPU, as listed under it


@dataclass(frozen=True)
class MacPlatform:
    macos_version: str | None = None  # "15.3" (the real one; an x86_64 Python under Rosetta may see "10.16")
    chip: str | None = None  # "Apple M2 Pro" / the Intel CPU brand
    apple_silicon: bool | None = None
    python_arch: str | None = None  # "arm64", "x86_64"
    translated: bool | None = None  # the process runs under Rosetta 2
    # Why ``translated`` is True, in words ("sysctl.proc_translated = 1", "an x86_64 Python on an Apple M2 Pro").
    translated_because: str | None = None
    python_macos: str | None = None  # the macOS version the Python itself reported ("10.16" under an old x86_64 SDK)
    sources: tuple[str, ...] = ()  # where it was read: "macos.json", "probe", "collect_env", "system_profiler"


@dataclass(frozen=True)
class MpsRepl:
    """What a pasted Python session printed about ``torch.backends.mps`` (pytorch/pytorch#78343, #146236)."""

    torch_version: str | None = None  # "1.13.0.dev20220525", from a printed ``torch.__version__``
    mps_built: bool | None = None  # the output after a line calling ``torch.backends.mps.is_built()``
    mps_available: bool | None = None  # likewise ``is_available()``
    # ``torch.backends.mps.is_macos_or_newer(14, 0)`` -> ("14.0", False), in the order asked
    macos_or_newer: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class AppleFacts:
    gpus: tuple[AppleGpu, ...] = ()
    platform: MacPlatform | None = None  # None: not a Mac (or nothing says it is)
    repl: MpsRepl | None = None  # a pasted Python session that asked torch about MPS; None when there is none

    @property
    def present(self) -> bool:
        return bool(self.gpus) or bool(self.platform and self.platform.apple_silicon)
