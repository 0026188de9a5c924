"""Frameworks on AMD GPUs: ROCm builds of PyTorch/TensorFlow against the GPUs' gfx targets (ROCM020-039)."""

from __future__ import annotations
