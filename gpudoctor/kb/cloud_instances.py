"""GPU instance types of the main clouds (``data/cloud_instances.json``, a source on every row): the GPU model and
count, GPU memory, interconnect, host link, network, and the driver images the provider ships.

Read by the platform checks (GPUs visible against the type's), the smoke checks (figures judged against the
type's expected ones), the machine line of the report and ``gpudoctor kb instances``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InstanceType:
    provider: str  # "aws", "gcp", "azure", "oci", "lambda", ...
    name: str  # as the provider spells it: "p4d.24xlarge", "a2-highgpu-8g", "Standard_ND96asr_v4"
    gpu_vendor: str  # "nvidia", "amd", "intel", "google" (TPU), "aws" (Trainium/Inferentia)
    gpu_model: str  # the accelerator's product name as its driver reports it: "A100-SXM4-40GB", "A10G", "L4"
    gpu_count: float  # whole GPUs; a fraction for a vGPU share (Azure NVadsA10_v5: 1/6)
    gpu_memory_gib: float | None = None  # per GPU
    gpu_interconnect: str | None = None  # "NVSwitch, NVLink 3 (600 GB/s per GPU)"; None: PCIe only
    host_link: str | None = None  # "PCIe Gen4 x16"
    network: str | None = None  # "EFA 400 Gbps", "InfiniBand HDR 8x200 Gb/s"
    driver_images: tuple[str, ...] = ()  # the provider's GPU images: "AWS Deep Learning AMI GPU PyTorch", ...
    source: str = ""  # URL of the provider's page the row is read from
    note: str | None = None

    @property
    def expected(self) -> str:
        """'1× A10G': what a report says the type should show."""
        raise NotImplementedError  # helper H2


def instance_type(provider: str, name: str) -> InstanceType | None:
    """The row for ``name`` on ``provider`` (the provider's spelling, case-insensitive); None when not known."""
    raise NotImplementedError  # helper H2


def instance_types(provider: str | None = None) -> tuple[InstanceType, ...]:
    raise NotImplementedError  # helper H2


def has_gpus(provider: str, name: str) -> bool | None:
    """True: a GPU type (known, or of a GPU family); False: a family the provider sells without GPUs (m5, n2,
    Standard_D...); None: not known either way."""
    raise NotImplementedError  # helper H2


def gpu_type_suggestions(provider: str) -> tuple[str, ...]:
    """What to pick instead of a type without GPUs, one line each: 'g6.xlarge: 1× L4 24 GB, the smallest ...'."""
    raise NotImplementedError  # helper H2
