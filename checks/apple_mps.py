"""Apple GPUs: MPS built and available, the macOS it needs, Rosetta, TensorFlow's Metal plugin."""

from __future__ import annotations
