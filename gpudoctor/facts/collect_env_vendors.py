"""What a ``collect_env`` report says about non-NVIDIA machines: ROCm's gfx targets, torch.xpu's devices, the CPU
model, and the macOS interpreter (its macOS version, Rosetta).

Pure helpers of :mod:`gpudoctor.facts.collect_env`, kept apart so that module stays one job; none raises.
"""

from __future__ import annotations

import re

from gpudoctor.facts.framework_model import FrameworkDevice

# The CPU model in the CPU block: lscpu's "Model name:", Windows' "Name:" (Win32_Processor; "Name=" from old wmic).
_CPU_MODEL = re.compile(r"^(?:Model name|Name)\s*[:=]\s*(?P<name>\S.*?)\s*$")
# ROCm builds print the gfx target after the name: "AMD Instinct MI250X/MI250 (gfx90a:sramecc+:xnack-)".
_GFX = re.compile(r"\((?P<gfx>gfx[0-9a-f]+(?::[A-Za-z0-9_]+[+-])*)\)")
# torch.xpu.get_device_properties(i) as collect_env prints it: "[0] _XpuDeviceProperties(name='...', ...)".
_XPU_DETECTED = re.compile(r"^\[(?P<index>\d+)\]\s*_XpuDeviceProperties\((?P<props>.*)$")
_XPU_NAME = re.compile(r"\bname='(?P<name>[^']*)'")
_XPU_MEMORY = re.compile(r"\btotal_memory=(?P<mib>\d+)MB\b")
_APPLE_CHIP = re.compile(r"^Apple M\d")
# platform.platform() on macOS: "macOS-12.2.1-arm64-arm-64bit", "macOS-10.16-x86_64-i386-64bit".
_MAC_PLATFORM = re.compile(r"^macOS-(?P<version>\d+(?:\.\d+)*)-")


def cpu_model(line: str, first: bool) -> str | None:
    """The CPU's model if this line of the CPU block names it (``first``: the block's first line)."""
    model = _CPU_MODEL.match(line)
    if model:
        return model.group("name")
    if first and line and ":" not in line and "=" not in line:
        return line  # macOS: sysctl -n machdep.cpu.brand_string, "Apple M2 Max", alone in the block
    return None


def gfx_targets(gpu_names: list[str]) -> list[str]:
    """ "gfx90a:sramecc+:xnack-" for each "NAME (gfx...)" GPU line of a ROCm build's report."""
    return [match.group("gfx") for name in gpu_names for match in _GFX.finditer(name)]


def xpu_devices(lines: list[str]) -> list[FrameworkDevice]:
    """The "Intel GPU models detected" lines (torch.xpu's own devices) as devices."""
    devices: list[FrameworkDevice] = []
    for line in lines:
        detected = _XPU_DETECTED.match(line)
        if detected is None:
            continue
        name, memory = _XPU_NAME.search(detected.group("props")), _XPU_MEMORY.search(detected.group("props"))
        devices.append(
            FrameworkDevice(
                index=int(detected.group("index")),
                name=name.group("name") if name else None,
                memory_total_mib=int(memory.group("mib")) if memory else None,
                platform="xpu",
            )
        )
    return devices


def mac_version(python_platform: str | None) -> str | None:
    """The macOS version the interpreter sees (platform.platform()): "10.16" from an x86_64 Python built against an
    old SDK, whatever the report's OS line (sw_vers) says."""
    mac = _MAC_PLATFORM.match(python_platform or "")
    return mac.group("version") if mac else None


def translated(sys_platform: str | None, machine: str | None, cpu_name: str | None) -> bool | None:
    """Rosetta 2, inferred: on an Apple-silicon Mac only a translated process reports x86_64.

    True for an x86_64 Python on an "Apple M..." chip, False for an arm64 Python (nothing to translate) or an
    x86_64 Python on an Intel Mac; None off macOS or when the report does not say enough.
    """
    if sys_platform != "darwin" or machine is None:
        return None
    if machine.lower() == "arm64":
        return False
    if machine.lower() == "x86_64" and cpu_name:
        return bool(_APPLE_CHIP.match(cpu_name))
    return None
