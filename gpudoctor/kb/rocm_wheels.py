"""PyTorch's ROCm wheels: which ROCm variants each release publishes, and the index that serves them.

(Stub: filled in from shared/reference/accelerators.md §1c [P_TI].)
"""

from __future__ import annotations

TORCH_INDEX_BASE = "https://download.pytorch.org/whl"


def rocm_variants(torch_version: str) -> tuple[str, ...]:
    """The ROCm variants ("rocm6.2.4", "rocm6.3") a torch release publishes, oldest first; () when unknown."""
    return ()


def index_url(variant: str) -> str:
    """``https://download.pytorch.org/whl/rocm6.3`` for "rocm6.3"."""
    return f"{TORCH_INDEX_BASE}/{variant}"
