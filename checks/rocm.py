"""AMD GPUs and the ROCm stack: the GPUs seen by amdgpu and ROCm, driver and ROCm versions (ROCM001-009)."""

from __future__ import annotations
