"""The areas table: the one home of each check area's code prefix, key, title and order.

The order is the order in which a person debugging a GPU machine reads the stack: the bus first,
then upwards (driver, NVML, GPUs, their health and wiring, toolkits, frameworks), because what is
wrong low down usually causes what follows it.  Reports group checks in this order, the "Next step"
is chosen in it, and the terminal, Markdown and JUnit outputs, ``list-checks`` and the docs take
titles from here.  Areas a plugin brings that are not in the table come after, in order of first
appearance, titled by their own key.

Standard library only and no gpudoctor imports: the results layer sits on top of this.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Area:
    """One row of the table; its position in :data:`AREAS` is its order."""

    key: str
    prefixes: tuple[str, ...]
    title: str


AREAS: tuple[Area, ...] = (
    # Where the machine runs comes first: an instance type short of a GPU, a notebook without a GPU runtime or an
    # image built for a newer driver explains what every area below it sees.
    Area("platform", ("PLAT",), "Platform (cloud instance, notebook, container image)"),
    Area("pci", ("PCI",), "PCI bus"),
    Area("driver", ("DRV",), "NVIDIA driver"),
    Area("nvml", ("NVML",), "NVML"),
    Area("gpus", ("GPU",), "GPUs"),
    Area("health", ("HEALTH",), "GPU health"),
    Area("topology", ("TOPO",), "Topology (PCIe, NVLink, NUMA)"),
    Area("cuda", ("CUDA",), "CUDA toolkit"),
    Area("cudnn", ("CUDNN",), "cuDNN"),
    Area("devices", ("DEV",), "Device nodes"),
    # Other vendors' stacks, each a plugin of its own (checks/rocm*.py, intel_xpu.py, apple_mps.py, tpu.py):
    # after NVIDIA's driver-level areas, before the frameworks that run on them.
    Area("rocm", ("ROCM",), "AMD GPUs and ROCm"),
    Area("xpu", ("XPU",), "Intel GPUs (XPU)"),
    Area("mps", ("MPS",), "Apple GPU (MPS)"),
    Area("tpu", ("TPU",), "Google TPU"),
    Area("environment", ("ENV",), "Environment"),
    Area("frameworks", ("FW",), "Frameworks (target Python)"),
    Area("pytorch", ("TORCH",), "PyTorch"),
    Area("tensorflow", ("TF",), "TensorFlow"),
    Area("jax", ("JAX",), "JAX"),
    Area("cupy", ("CUPY",), "CuPy"),
    Area("smoke", ("SMOKE",), "Smoke test (real workloads)"),
    Area("gates", ("GATE",), "Preflight gates"),
    Area("collection", ("COL",), "Evidence collection"),
)

_BY_KEY: dict[str, tuple[int, Area]] = {area.key: (order, area) for order, area in enumerate(AREAS)}


def area_title(key: str) -> str:
    """The area's title; an area the table does not know (a plugin's) is titled by its key."""
    known = _BY_KEY.get(key)
    return known[1].title if known else key


def area_order(key: str) -> int | None:
    """The area's position in the table, or None for an area the table does not know."""
    known = _BY_KEY.get(key)
    return known[0] if known else None


def area_for_code(code: str) -> Area | None:
    """The area whose prefix a check code carries: its letters before the number (``TOPO001`` -> topology)."""
    letters = code.rstrip("0123456789").upper()
    return next((area for area in AREAS if letters in area.prefixes), None)


def ordered_keys(keys: list[str]) -> list[str]:
    """``keys`` (each once) in table order, unknown ones after in the order given."""
    unique = list(dict.fromkeys(keys))
    known = sorted((k for k in unique if k in _BY_KEY), key=lambda k: _BY_KEY[k][0])
    return known + [k for k in unique if k not in _BY_KEY]
