"""PyTorch on Intel GPUs (XPU): the wheel index, the platforms PyTorch validates, the Level Zero runtime packages.

The data is ``data/intel_xpu.json``, copied from shared/reference/accelerators.md §2 (source keys PT_XPU,
PT_XPU_25, P_TI, UBUNTU_LIBZE, TORCH_XPU_OPS_3587, RPI_PCIE_510, INTEL_SMI; expanded in the file).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from gpudoctor.kb.loading import _load, as_dict, as_list

DATA_FILE = "intel_xpu.json"


@dataclass(frozen=True)
class ValidatedPlatform:
    gpus: str
    os: tuple[str, ...]
    sources: tuple[str, ...]


def _strings(value: object) -> tuple[str, ...]:
    return tuple(item for item in as_list(value) if isinstance(item, str))


@functools.lru_cache(maxsize=1)
def _data() -> dict[str, object]:
    return _load(DATA_FILE)


def torch_xpu_index(channel: str = "release") -> str:
    """The PyTorch wheel index for XPU builds: ``https://download.pytorch.org/whl/xpu`` (release)."""
    index = as_dict(as_dict(_data().get("torch")).get("index"))
    url = index.get(channel) or index.get("release")
    return url if isinstance(url, str) else "https://download.pytorch.org/whl/xpu"


def torch_xpu_packages() -> tuple[str, ...]:
    return _strings(as_dict(_data().get("torch")).get("packages")) or ("torch",)


def torch_xpu_native_since() -> str:
    """The first PyTorch release with ``torch.xpu`` built in."""
    value = as_dict(_data().get("torch")).get("native_since")
    return value if isinstance(value, str) else "2.5"


def torch_xpu_install_command(pip: str = "python -m pip") -> str:
    """``<pip> install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/xpu``."""
    return f"{pip} install {' '.join(torch_xpu_packages())} --index-url {torch_xpu_index()}"


def level_zero_packages() -> tuple[str, ...]:
    """The Level Zero loader and Intel's GPU driver for it, as Ubuntu 24.04 names them."""
    return _strings(as_dict(_data().get("runtime")).get("level_zero_packages"))


def validated_platforms() -> tuple[ValidatedPlatform, ...]:
    rows = []
    for raw in as_list(_data().get("validated")):
        row = as_dict(raw)
        gpus = row.get("gpus")
        if isinstance(gpus, str):
            rows.append(ValidatedPlatform(gpus, _strings(row.get("os")), _strings(row.get("sources"))))
    return tuple(rows)


def source_keys() -> dict[str, str]:
    return {k: v for k, v in as_dict(_data().get("sources")).items() if isinstance(v, str)}
