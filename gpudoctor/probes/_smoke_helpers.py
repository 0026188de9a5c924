"""Pure helpers of the smoke probes: medians, rates, sizes from free memory, the host's CPU and memory.

Runs inside the target Python (standard library only, Python 3.8) and is unit-tested without any framework.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING or __package__:
    from . import _probe_target
else:
    import _probe_target

if TYPE_CHECKING:
    from collections.abc import Iterable

MIB = 1 << 20
MEMORY_FRACTION = 0.25  # never more than this share of a device's free memory: the GPU may be shared
MIN_MATMUL_N = 256


def median(values: Iterable[float | None]) -> float | None:
    """The median of the numbers in ``values`` (None entries ignored), or None when there are none."""
    data = sorted(v for v in values if v is not None)
    if not data:
        return None
    middle = len(data) // 2
    if len(data) % 2:
        return data[middle]
    return (data[middle - 1] + data[middle]) / 2.0


def finite(value: float | None, digits: int = 6) -> float | None:
    """A float fit for JSON (NaN and infinities are not JSON): rounded, or None."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number):
        return None
    return round(number, digits)


def matmul_tflops(n: int | None, seconds: float | None) -> float | None:
    """TFLOP/s of one n×n by n×n matmul taking ``seconds`` (2n³ floating-point operations)."""
    if not n or not seconds or seconds <= 0:
        return None
    return 2.0 * n**3 / seconds / 1e12


def busbw(algbw: float | None, world_size: int | None) -> float | None:
    """All-reduce bus bandwidth from algorithm bandwidth, as nccl-tests defines it: algbw × 2(n−1)/n."""
    if algbw is None or not world_size or world_size < 1:
        return None
    return algbw * 2.0 * (world_size - 1) / world_size


def choose_matmul_n(
    preferred: int,
    free_bytes: int | None,
    elem_size: int,
    matrices: int = 3,
    fraction: float = MEMORY_FRACTION,
    minimum: int = MIN_MATMUL_N,
) -> int | None:
    """The largest n, halving from ``preferred``, whose ``matrices`` n×n matrices fit in ``fraction`` of free memory.

    ``free_bytes`` None (unknown) trusts ``preferred``; None is returned when not even ``minimum`` fits.
    """
    if free_bytes is None:
        return preferred
    allowed = free_bytes * fraction
    n = preferred
    while n >= minimum:
        if matrices * n * n * elem_size <= allowed:
            return n
        n //= 2
    # halving may step over the minimum (1536 → 384 → 192): the minimum itself is the last try
    return minimum if minimum <= preferred and matrices * minimum * minimum * elem_size <= allowed else None


def choose_bytes(
    preferred: int, free_bytes: int | None, buffers: int = 1, fraction: float = MEMORY_FRACTION, minimum: int = MIB
) -> int | None:
    """Bytes per buffer for a copy test: ``preferred``, halved until ``buffers`` of them fit; None below ``minimum``."""
    if free_bytes is None:
        return preferred
    allowed = free_bytes * fraction
    size = preferred
    while size >= minimum:
        if buffers * size <= allowed:
            return size
        size //= 2
    return None


# --- the host --------------------------------------------------------------------------------------------


def cpuinfo() -> str | None:
    return _probe_target.read_text("/proc/cpuinfo")


def cpu_has_native_bf16(cpuinfo_text: str | None) -> bool:
    """Whether /proc/cpuinfo lists bf16 instructions (x86 avx512_bf16 / amx_bf16, Arm "bf16" in Features)."""
    for line in (cpuinfo_text or "").splitlines():
        key, sep, value = line.partition(":")
        if not sep or key.strip().lower() not in ("flags", "features"):
            continue
        flags = set(value.split())
        if flags & {"avx512_bf16", "amx_bf16", "bf16", "avx_ne_convert"}:
            return True
    return False


def cpu_name(cpuinfo_text: str | None, machine_fallback: bool) -> str | None:
    """The CPU's model from /proc/cpuinfo; else the platform's processor (with ``machine_fallback``, its machine)."""
    for line in (cpuinfo_text or "").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() in ("model name", "hardware", "cpu model") and value.strip():
            return value.strip()
    try:
        import platform

        return platform.processor() or (platform.machine() if machine_fallback else None) or None
    except Exception:  # noqa: BLE001
        return None


def cpu_threads() -> int | None:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def host_available_bytes() -> int | None:
    """MemAvailable of the host (Linux), else free physical pages; None when unknown."""
    text = _probe_target.read_text("/proc/meminfo") or ""
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            try:
                return int(parts[1]) * 1024
            except (IndexError, ValueError):
                break
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (the kernel picks it; a race with another process is possible)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
