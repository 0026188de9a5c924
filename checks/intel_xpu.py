"""Intel GPUs (XPU): on the bus, i915/xe, Level Zero, torch.xpu."""

from __future__ import annotations
