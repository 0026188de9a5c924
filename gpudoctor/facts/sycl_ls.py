"""``sycl-ls``: the SYCL devices each runtime (Level Zero, OpenCL, CUDA, HIP) offers.

Two bracket formats are in use. Older oneAPI releases print ``[ext_oneapi_level_zero:gpu:1]`` (backend, type,
ordinal in one bracket; the ``ext_oneapi_`` prefix on non-OpenCL backends); newer ones print
``[level_zero:gpu][level_zero:1]``. After the brackets comes ``Platform, Device Version [driver]``. Anything
else in a paste (the shell prompt, a CI step title such as ``Run sycl-ls --verbose``, the verbose section)
is skipped.
"""

from __future__ import annotations

import re

from gpudoctor.facts.intel_model import SyclDevice

_OLD = re.compile(r"^\s*\[(?P<backend>[a-z_]{2,40}):(?P<type>[a-z]{2,8}):(?P<index>\d{1,4})\]\s*(?P<rest>.*)$")
_NEW = re.compile(
    r"^\s*\[(?P<backend>[a-z_]{2,40}):(?P<type>[a-z]{2,8})\]\[[a-z_]{2,40}:(?P<index>\d{1,4})\]\s*(?P<rest>.*)$"
)
_DRIVER = re.compile(r"\s*\[([^\[\]]{1,80})\]\s*$")
# What follows the device name: "OpenCL 3.0 NEO", "OpenCL 3.0 (Build 0)", a Level Zero API version "1.3".
_VERSION_TAIL = re.compile(r"\s+(?:OpenCL\s+\d.*|\d+\.\d+(?:\.\d+)?)\s*$")
_MAX_DEVICES = 256


def _backend(word: str) -> str:
    """The runtime's current name: the old ``ext_oneapi_level_zero`` is ``level_zero``."""
    return word.removeprefix("ext_oneapi_")


def _device(backend: str, device_type: str, index: str, rest: str) -> SyclDevice:
    driver_match = _DRIVER.search(rest)
    driver = driver_match.group(1).strip() if driver_match else None
    body = rest[: driver_match.start()] if driver_match else rest
    platform, comma, described = body.partition(", ")
    if not comma:
        platform, described = "", body
    name = _VERSION_TAIL.sub("", described).strip()
    return SyclDevice(
        backend=_backend(backend),
        device_type=device_type,
        name=name[:200] or None,
        driver_version=driver or None,
        index=int(index),
        platform=platform.strip()[:120] or None,
    )


def parse_sycl_ls(text: str | None) -> tuple[SyclDevice, ...]:
    """Every device line of a ``sycl-ls`` listing (old or new format, any OS); never raises."""
    if not text:
        return ()
    devices: list[SyclDevice] = []
    for line in text.splitlines():
        match = _NEW.match(line) or _OLD.match(line)
        if match is None:
            continue
        devices.append(_device(match.group("backend"), match.group("type"), match.group("index"), match.group("rest")))
        if len(devices) >= _MAX_DEVICES:
            break
    return tuple(devices)


def level_zero_gpus(devices: tuple[SyclDevice, ...]) -> tuple[SyclDevice, ...]:
    return tuple(d for d in devices if d.backend == "level_zero" and d.device_type == "gpu")


def opencl_gpus(devices: tuple[SyclDevice, ...]) -> tuple[SyclDevice, ...]:
    return tuple(d for d in devices if d.backend == "opencl" and d.device_type == "gpu")
