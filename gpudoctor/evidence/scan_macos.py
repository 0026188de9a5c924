"""Read what macOS says about itself into a JSON-able record: its version, the chip, Rosetta.

No commands: the Python standard library (``platform.mac_ver()``, ``platform.machine()``) and ``sysctlbyname(3)``
through ctypes, guarded so that anything other than a Mac gets a record that says so instead of an error.

The sysctl names read (Apple, "About the Rosetta translation environment"):

* ``sysctl.proc_translated``: 1 when this process runs translated by Rosetta 2, 0 when native; absent (ENOENT)
  where Rosetta does not exist (an Intel Mac, older macOS).
* ``hw.optional.arm64``: 1 on Apple silicon hardware, also as seen from a translated x86_64 process, whose
  ``platform.machine()`` says "x86_64".
* ``machdep.cpu.brand_string``: the chip ("Apple M2 Pro") or the Intel CPU's brand.
* ``kern.osproductversion`` and ``kern.osrelease``: the macOS and Darwin versions, beside ``mac_ver()`` (an
  x86_64 Python built against an old SDK reads macOS as "10.16").
"""

from __future__ import annotations

import sys
from typing import Callable

_INT_NAMES = {"proc_translated": "sysctl.proc_translated", "hw_optional_arm64": "hw.optional.arm64"}
_TEXT_NAMES = {
    "cpu_brand": "machdep.cpu.brand_string",
    "os_product_version": "kern.osproductversion",
    "kernel_release": "kern.osrelease",
}
_TEXT_LIMIT = 256


def scan_macos(root: str = "/") -> dict[str, object]:
    """macOS version, machine, chip, and whether this process runs translated (sysctl.proc_translated).

    ``root`` is accepted for the scans' common signature; nothing here reads files under it. Never raises.
    """
    import platform  # here, not at the top: every run imports this module, only a Mac's scan needs these

    record: dict[str, object] = {"platform": sys.platform, "is_macos": sys.platform == "darwin"}
    try:
        record["machine"] = platform.machine() or None
    except Exception:  # noqa: BLE001 - a platform query that fails leaves the field unknown
        record["machine"] = None
    if sys.platform != "darwin":
        record["note"] = "not macOS"
        return record
    try:
        record["mac_version"] = platform.mac_ver()[0] or None
    except Exception:  # noqa: BLE001
        record["mac_version"] = None
    sysctl = _sysctlbyname()
    record["sysctl_readable"] = sysctl is not None
    for key, name in _INT_NAMES.items():
        record[key] = _int_value(sysctl, name) if sysctl is not None else None
    for key, name in _TEXT_NAMES.items():
        record[key] = _text_value(sysctl, name) if sysctl is not None else None
    return record


def _sysctlbyname() -> Callable[..., int] | None:
    """libc's sysctlbyname, or None where there is none (not a Mac, no libc found)."""
    import ctypes
    import ctypes.util

    try:
        path = ctypes.util.find_library("c")
        if not path:
            return None
        function = ctypes.CDLL(path, use_errno=True).sysctlbyname
    except (OSError, AttributeError):
        return None
    function.argtypes = [
        ctypes.c_char_p,
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_size_t),
        ctypes.c_void_p,
        ctypes.c_size_t,
    ]
    function.restype = ctypes.c_int
    return function


def _int_value(sysctl: Callable[..., int], name: str) -> int | None:
    import ctypes

    value = ctypes.c_int(0)
    size = ctypes.c_size_t(ctypes.sizeof(value))
    try:
        status = sysctl(name.encode(), ctypes.byref(value), ctypes.byref(size), None, 0)
    except (OSError, ctypes.ArgumentError):
        return None
    return int(value.value) if status == 0 else None  # -1: absent (ENOENT) or not readable


def _text_value(sysctl: Callable[..., int], name: str) -> str | None:
    import ctypes

    buffer = ctypes.create_string_buffer(_TEXT_LIMIT)
    size = ctypes.c_size_t(_TEXT_LIMIT)
    try:
        status = sysctl(name.encode(), buffer, ctypes.byref(size), None, 0)
    except (OSError, ctypes.ArgumentError):
        return None
    if status != 0:
        return None
    text = buffer.raw[: min(size.value, _TEXT_LIMIT)].split(b"\0", 1)[0].decode("utf-8", "replace").strip()
    return text or None
