"""Google TPUs: chips on the bus, device nodes, libtpu, the one-process lock, JAX's view."""

from __future__ import annotations
