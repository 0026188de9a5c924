"""AMD GPU access: /dev/kfd and /dev/dri/renderD* present and usable, groups, container device flags (ROCM010-019)."""

from __future__ import annotations
