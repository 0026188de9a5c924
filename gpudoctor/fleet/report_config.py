"""The configuration of one node that drift is judged on: driver, CUDA, frameworks, OS, kernel, PCIe links.

Taken from a parsed node report, whatever it holds: a value that is absent or of the wrong type is left
out (unknown), never guessed.  Values are short strings compared exactly between identical nodes.
"""

from __future__ import annotations

import sys
from typing import Any

# The keys, in the order the reports show them (drift lists follow it).
CONFIG_KEYS = ("driver", "cuda_driver_max", "torch", "tensorflow", "jax", "cudnn", "python", "os", "kernel", "pcie")
_MAX_VALUE = 200


def _text(value: object) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:_MAX_VALUE]


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _first(value: object) -> str | None:
    """The first of a facts_seen list (``["2.11.0+cu130"]``), when there is one."""
    return _text(value[0]) if isinstance(value, list) and value else None


def _result_data(results: dict[str, dict[str, Any]], code: str) -> dict[str, Any]:
    return _dict(results.get(code, {}).get("data"))


def _framework_version(results: dict[str, dict[str, Any]], name: str) -> str | None:
    """FW001's probe of the target Python: the version of an installed framework."""
    record = _dict(_dict(_result_data(results, "FW001").get("frameworks")).get(name))
    return _text(record.get("version")) if record.get("status") in ("ok", None) else None


def node_config(data: dict[str, Any], results: dict[str, dict[str, Any]]) -> dict[str, str]:
    machine = _dict(data.get("machine"))
    seen = _dict(machine.get("facts_seen"))
    torch = _dict(_result_data(results, "TORCH001"))
    config: dict[str, str | None] = {
        "driver": _text(machine.get("driver_version")) or _first(seen.get("driver_versions")),
        "cuda_driver_max": _text(machine.get("cuda_driver_max")) or _first(seen.get("cuda_driver_versions")),
        "torch": _torch(torch, results, seen),
        "tensorflow": _framework_version(results, "tensorflow") or _first(seen.get("tensorflow_versions")),
        "jax": _framework_version(results, "jax"),
        "cudnn": _first(seen.get("cudnn_versions")),
        "python": _text(_dict(machine.get("python")).get("version")),
        "os": _text(machine.get("os")),
        "kernel": _text(machine.get("kernel")),
        "pcie": pcie_summary(_dict(data.get("sections")).get("topology")),
    }
    return {sys.intern(k): v for k, v in config.items() if v is not None}


def _torch(torch: dict[str, Any], results: dict[str, dict[str, Any]], seen: dict[str, Any]) -> str | None:
    """ "2.11.0+cu130 (CUDA 13.0)": the version and the CUDA it was built for (a CPU build says so)."""
    version = _text(torch.get("version")) or _framework_version(results, "torch") or _first(seen.get("torch_versions"))
    if version is None:
        return None
    cuda = _text(torch.get("cuda")) or _first(seen.get("torch_cuda_versions"))
    hip = _text(torch.get("hip"))
    build = f"CUDA {cuda}" if cuda else f"ROCm {hip}" if hip else None
    return f"{version} ({build})" if build else version


def _link(pcie: dict[str, Any]) -> str | None:
    """ "Gen5 x16", or "Gen4 x8 (max Gen5 x16)" for a link running below what it can."""
    gen, width = pcie.get("gen_current"), pcie.get("width_current")
    gen_max, width_max = pcie.get("gen_max"), pcie.get("width_max")
    if not (type(gen) is int and type(width) is int):
        return None
    now = f"Gen{gen} x{width}"
    if type(gen_max) is int and type(width_max) is int and (gen_max, width_max) != (gen, width):
        return f"{now} (max Gen{gen_max} x{width_max})"
    return now


def pcie_summary(topology: object) -> str | None:
    """Every GPU's link, collapsed: "8× Gen5 x16" when they agree, else the GPUs by link
    ("GPU0-5,7: Gen5 x16; GPU6: Gen5 x8 (max Gen5 x16)"); None when no GPU's link is known."""
    links: dict[str, list[int]] = {}
    for position, gpu in enumerate(g for g in _list(_dict(topology).get("gpus")) if isinstance(g, dict)):
        link = _link(_dict(gpu.get("pcie")))
        if link is not None:
            index = gpu.get("index")
            links.setdefault(link, []).append(index if type(index) is int else position)
    if not links:
        return None
    if len(links) == 1:
        link, gpus = next(iter(links.items()))
        return f"{len(gpus)}× {link}"
    # The usual link first, then the odd ones.
    ordered = sorted(links.items(), key=lambda item: (-len(item[1]), item[0]))
    return "; ".join(f"GPU{_ranges(gpus)}: {link}" for link, gpus in ordered)[:_MAX_VALUE]


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _ranges(numbers: list[int]) -> str:
    """[0, 1, 2, 3, 5, 7] -> "0-3,5,7"."""
    values = sorted(set(numbers))
    parts: list[str] = []
    start = 0
    for i in range(1, len(values) + 1):
        if i < len(values) and values[i] == values[i - 1] + 1:
            continue
        first, last = values[start], values[i - 1]
        parts.append(str(first) if first == last else f"{first}-{last}")
        start = i
    return ",".join(parts)
