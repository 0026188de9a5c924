"""GPU spec sheets and link rates: what the hardware can do at best, to judge what a smoke run measured.

``gpu_spec_for_name("NVIDIA H100 80GB HBM3")`` finds a GPU's row of ``gpu_specs.json`` (peak
TFLOP/s per dtype, memory bandwidth, PCIe link, NVLink); ``pcie_rate_gbps(gen, width)`` is the
theoretical rate of a PCIe link per direction (``pcie.json``); ``nvlink_rate_gbps(spec)`` the
per-direction NVLink bandwidth of a GPU.  GB = 10^9 bytes everywhere, rates per direction.

Matching is strict on purpose: a spec row answers only for the product it describes.  A name
matches when its normalised tokens (``gpu_names.normalize_gpu_name``) equal one of the row's
names, optionally followed by a memory size ("Tesla V100-SXM2-32GB"); "H100 NVL", "RTX 4090 D",
"A10G" or "V100S" are other products with other figures and find nothing.  Junk in gives ``None``.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any

from gpudoctor.kb.gpu_names import normalize_gpu_name
from gpudoctor.kb.gpu_spec_tables import spec_data as _spec_data  # gpu_specs.json + hand-sourced rows
from gpudoctor.kb.loading import _pcie_data

# A trailing token the product name may carry without changing the product: the memory size.
_MEMORY_TOKEN = re.compile(r"\d{1,3}gb")
_ELLIPSES = ("...", "\u2026")
_VALID_WIDTHS = range(1, 33)


@dataclass(frozen=True)
class GpuSpec:
    """One GPU's spec sheet, per device (a two-die board's figures are halved: see ``devices_per_board``)."""

    name: str  # the data row: "H100 SXM5"
    matched: str  # the row name the GPU name matched: "NVIDIA H100 80GB HBM3"
    architecture: str | None
    compute_capability: str | None
    memory_gb: tuple[float, ...]  # as sold: (16.0, 32.0) when both exist
    memory_type: str | None
    memory_bandwidth_gbs: float | None
    fp32_tflops: float | None
    tf32_tflops: float | None  # dense tensor TF32; None when no checked source gives it
    fp16_tflops: float | None  # dense tensor FP16
    bf16_tflops: float | None  # dense tensor BF16; None before Ampere
    pcie_gen: int | None
    pcie_width: int | None
    nvlink_gbs_bidirectional: float | None  # per GPU, both directions together
    devices_per_board: int = 1
    note: str | None = None
    sources: tuple[str, ...] = ()
    secondary_only: bool = False

    def peak_tflops(self, dtype: object) -> float | None:
        """The spec peak for a matmul in ``dtype`` ("fp32", "tf32", "fp16", "bf16"), None when unknown.

        TF32 on a GPU without TF32 (compute capability below 8.0) runs as FP32, so its peak is FP32's.
        """
        if not isinstance(dtype, str):
            return None
        key = dtype.strip().lower()
        if key in ("fp32", "float32", "float"):
            return self.fp32_tflops
        if key in ("tf32", "tensorfloat32"):
            if self.tf32_tflops is not None:
                return self.tf32_tflops
            major = _cc_major(self.compute_capability)
            return self.fp32_tflops if major is not None and major < 8 else None
        if key in ("fp16", "float16", "half"):
            return self.fp16_tflops
        if key in ("bf16", "bfloat16"):
            return self.bf16_tflops
        return None

    @property
    def nvlink_gbps_per_direction(self) -> float | None:
        return nvlink_rate_gbps(self)

    @property
    def pcie_rate_gbps(self) -> float | None:
        """The theoretical per-direction rate of the PCIe link this product is built for."""
        return pcie_rate_gbps(self.pcie_gen, self.pcie_width)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "matched": self.matched,
            "architecture": self.architecture,
            "compute_capability": self.compute_capability,
            "memory_gb": list(self.memory_gb),
            "memory_type": self.memory_type,
            "memory_bandwidth_gbs": self.memory_bandwidth_gbs,
            "fp32_tflops": self.fp32_tflops,
            "tf32_tflops": self.tf32_tflops,
            "fp16_tflops": self.fp16_tflops,
            "bf16_tflops": self.bf16_tflops,
            "pcie_gen": self.pcie_gen,
            "pcie_width": self.pcie_width,
            "nvlink_gbs_bidirectional": self.nvlink_gbs_bidirectional,
            "devices_per_board": self.devices_per_board,
            "note": self.note,
            "sources": list(self.sources),
            "secondary_only": self.secondary_only,
        }


def _cc_major(cc: object) -> int | None:
    match = re.fullmatch(r"(\d{1,2})\.\d", cc.strip()) if isinstance(cc, str) else None
    return int(match.group(1)) if match else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return float(value)


def _per_device(value: float | None, devices: int) -> float | None:
    return None if value is None else round(value / devices, 4)


def _spec_from_row(row: dict[str, Any], matched: str, secondary: frozenset[str]) -> GpuSpec:
    devices = row.get("devices_per_board")
    devices = devices if isinstance(devices, int) and not isinstance(devices, bool) and devices >= 1 else 1
    sources = tuple(str(key) for key in row.get("sources") or () if isinstance(key, str))
    memory = tuple(float(v) / devices for v in row.get("memory_gb") or () if _number(v) is not None)
    note = row.get("note") if isinstance(row.get("note"), str) else None
    if devices > 1:
        note = (
            f"Per device: the board has {devices} devices and the figures here are the board's divided by "
            f"{devices}. " + (note or "")
        ).strip()
    return GpuSpec(
        name=str(row.get("gpu")),
        matched=matched,
        architecture=row.get("architecture") if isinstance(row.get("architecture"), str) else None,
        compute_capability=row.get("compute_capability") if isinstance(row.get("compute_capability"), str) else None,
        memory_gb=memory,
        memory_type=row.get("memory_type") if isinstance(row.get("memory_type"), str) else None,
        memory_bandwidth_gbs=_per_device(_number(row.get("memory_bandwidth_gbs")), devices),
        fp32_tflops=_per_device(_number(row.get("fp32_tflops")), devices),
        tf32_tflops=_per_device(_number(row.get("tf32_tensor_dense_tflops")), devices),
        fp16_tflops=_per_device(_number(row.get("fp16_tensor_dense_tflops")), devices),
        bf16_tflops=_per_device(_number(row.get("bf16_tensor_dense_tflops")), devices),
        pcie_gen=row.get("pcie_gen") if isinstance(row.get("pcie_gen"), int) else None,
        pcie_width=row.get("pcie_width") if isinstance(row.get("pcie_width"), int) else None,
        nvlink_gbs_bidirectional=_per_device(_number(row.get("nvlink_gbs_bidirectional")), devices),
        devices_per_board=devices,
        note=note,
        sources=sources,
        secondary_only=bool(sources) and all(key in secondary for key in sources),
    )


def spec_name_tokens(name: object) -> tuple[str, ...]:
    """The tokens a name is matched on (lspci's "GA102 [GeForce RTX 3090]" reads as the bracketed name)."""
    if not isinstance(name, str):
        return ()
    text = name.strip()
    bracket = re.search(r"\[([^\]]+)\]", text)
    if bracket:
        text = bracket.group(1).strip()
    return normalize_gpu_name(text)


@functools.lru_cache(maxsize=None)
def _spec_index() -> tuple[tuple[tuple[str, ...], str, int], ...]:
    """(row tokens, row name as written, row position), longest names first."""
    entries = []
    for position, row in enumerate(_spec_data().get("gpus", [])):
        if not isinstance(row, dict):
            continue
        for name in row.get("names") or ():
            tokens = spec_name_tokens(name)
            if tokens:
                entries.append((tokens, str(name), position))
    entries.sort(key=lambda entry: -len(entry[0]))
    return tuple(entries)


@functools.lru_cache(maxsize=None)
def _secondary_keys() -> frozenset[str]:
    sources = _spec_data().get("sources", {})
    return frozenset(key for key, value in sources.items() if isinstance(value, dict) and value.get("secondary"))


def match_spec_row(name: object) -> tuple[int, str] | None:
    """The position of the data row a GPU name belongs to and the row name it matched; None when none does."""
    if not isinstance(name, str) or len(name) > 512 or name.strip().endswith(_ELLIPSES):
        return None  # a name nvidia-smi cut short could be several products
    tokens = spec_name_tokens(name)
    if not tokens:
        return None
    for row_tokens, written, position in _spec_index():
        size = len(row_tokens)
        if tokens[:size] == row_tokens and all(_MEMORY_TOKEN.fullmatch(t) for t in tokens[size:]):
            return position, written
    return None


@functools.lru_cache(maxsize=1024)
def _lookup(name: str) -> GpuSpec | None:
    found = match_spec_row(name)
    if found is None:
        return None
    position, written = found
    return _spec_from_row(_spec_data()["gpus"][position], written, _secondary_keys())


def gpu_spec_for_name(name: object) -> GpuSpec | None:
    """The spec sheet of a GPU named as nvidia-smi, NVML or a framework prints it; None when unknown.

    ``"NVIDIA H100 80GB HBM3"`` -> H100 SXM5 (FP32 67, BF16 989 TFLOP/s, 3350 GB/s, Gen5 x16, NVLink 900);
    ``"Tesla V100-SXM2-32GB"`` -> V100 SXM2; ``"NVIDIA H100 NVL"`` -> None (not in the table).
    """
    if not isinstance(name, str):
        return None
    return _lookup(name)


# --------------------------------------------------------------------------- links


def _gen_number(gen: object) -> int | None:
    """4, 4.0, "4", "4.0", "Gen4", "gen 4", "PCIe 4.0" -> 4."""
    if isinstance(gen, bool):
        return None
    if isinstance(gen, int):
        return gen
    if isinstance(gen, float):
        return int(gen) if math.isfinite(gen) and gen == int(gen) else None
    if isinstance(gen, str):
        match = re.fullmatch(r"\s*(?:pcie\s*)?(?:gen\s*)?(\d{1,2})(?:\.0)?\s*", gen, re.IGNORECASE)
        return int(match.group(1)) if match else None
    return None


def _width_number(width: object) -> int | None:
    """16, "16", "16x", "x16" -> 16."""
    if isinstance(width, bool):
        return None
    if isinstance(width, int):
        return width
    if isinstance(width, str):
        match = re.fullmatch(r"\s*x?(\d{1,2})x?\s*", width, re.IGNORECASE)
        return int(match.group(1)) if match else None
    return None


@functools.lru_cache(maxsize=None)
def _pcie_rows() -> dict[int, dict[str, Any]]:
    return {
        row["gen"]: row
        for row in _pcie_data().get("rows", [])
        if isinstance(row, dict) and isinstance(row.get("gen"), int)
    }


def pcie_rate_gbps(gen: object, width: object) -> float | None:
    """Theoretical PCIe bandwidth per direction in GB/s (10^9 bytes) of a link of ``gen`` and ``width``.

    ``pcie_rate_gbps(4, 16)`` -> 31.5, ``pcie_rate_gbps("Gen1", "4x")`` -> 1.0; an unknown generation or a
    width outside 1..32 -> None.  The rate is the x16 figure of the table scaled to the width.
    """
    number, lanes = _gen_number(gen), _width_number(width)
    if number is None or lanes is None or lanes not in _VALID_WIDTHS:
        return None
    row = _pcie_rows().get(number)
    x16 = _number(row.get("x16_gb_s_per_dir")) if row else None
    return None if x16 is None else round(x16 * lanes / 16, 4)


def pcie_gen_for_speed(speed: object) -> int | None:
    """The PCIe generation of a link speed: "2.5 GT/s PCIe" (sysfs), "16GT/s" (lspci), 8.0 -> 1, 4, 3."""
    value: float | None
    if isinstance(speed, str):
        match = re.search(r"(\d+(?:\.\d+)?)\s*GT/s", speed, re.IGNORECASE) or re.fullmatch(
            r"\s*(\d+(?:\.\d+)?)\s*", speed
        )
        value = float(match.group(1)) if match else None
    else:
        value = _number(speed)
    if value is None:
        return None
    for number, row in _pcie_rows().items():
        rate = _number(row.get("gt_s"))
        if rate is not None and abs(rate - value) < 0.01:
            return number
    return None


def nvlink_rate_gbps(spec: object) -> float | None:
    """Per-direction NVLink bandwidth of a GPU (half its bidirectional total), None without NVLink.

    Takes a :class:`GpuSpec` or a GPU name.  The whole GPU's links together: one peer gets it all
    only through an NVSwitch or when every link goes to that peer.
    """
    if isinstance(spec, str):
        spec = gpu_spec_for_name(spec)
    if not isinstance(spec, GpuSpec) or spec.nvlink_gbs_bidirectional is None:
        return None
    return round(spec.nvlink_gbs_bidirectional / 2, 4)


@functools.lru_cache(maxsize=None)
def _nvlink_rows() -> tuple[dict[str, Any], ...]:
    from gpudoctor.kb.loading import _load

    return tuple(row for row in _load("nvlink.json").get("rows", []) if isinstance(row, dict))


def max_nvlinks_per_gpu() -> int | None:
    """The most NVLinks any GPU generation has (18 for Hopper and Blackwell): more on one GPU means a switch."""
    counts = [
        row["links_per_gpu"]
        for row in _nvlink_rows()
        if isinstance(row.get("links_per_gpu"), int) and not isinstance(row.get("links_per_gpu"), bool)
    ]
    return max(counts) if counts else None


def nvswitch_pair_links(spec: object) -> int | None:
    """The NV# ``nvidia-smi topo -m`` prints between two such GPUs through NVSwitches (A100 12, H100 18), from
    ``nvlink.json`` (its ``nvswitch_inference`` says why: a switch gives every pair all of a GPU's links)."""
    if isinstance(spec, str):
        spec = gpu_spec_for_name(spec)
    if not isinstance(spec, GpuSpec) or not spec.nvlink_gbs_bidirectional:
        return None
    row = next((r for r in _nvlink_rows() if r.get("architecture") == spec.architecture), None)
    links = row.get("nvswitch_pair_links") if row else None
    return links if isinstance(links, int) and not isinstance(links, bool) and links > 0 else None


def expected_nvlinks(spec: object) -> int | None:
    """How many NVLinks an SXM GPU has (H100 SXM: 18, A100 SXM4: 12, V100 SXM2: 6), None without NVLink.

    The spec sheet gives the GPU's total NVLink bandwidth; the row of its generation gives one link's.
    A PCIe card with an NVLink bridge has no NVLink in its spec row, so it gets None (its bridge is optional).
    """
    if isinstance(spec, str):
        spec = gpu_spec_for_name(spec)
    if not isinstance(spec, GpuSpec) or not spec.nvlink_gbs_bidirectional:
        return None
    for row in _nvlink_rows():
        if row.get("architecture") == spec.architecture and _number(row.get("link_gbs_duplex")):
            links = spec.nvlink_gbs_bidirectional / row["link_gbs_duplex"]
            return round(links) if abs(links - round(links)) < 0.01 else None
    return None


# --------------------------------------------------------------------------- memory sizes people use

# The one home of the memory gates' rule.  A GPU's reported total sits below its marketed size: the driver
# holds some back (NVIDIA H100 80GB HBM3: NVML 81559 MiB = 79.6 GiB, 480 MiB "reserved" in `nvidia-smi -q`)
# and ECC on GDDR boards takes more (Tesla T4 15360 MiB = 15.0 GiB of 16 GB, L4 23034 MiB = 22.5 GiB of
# 24 GB, L40S 46068 MiB = 45.0 GiB of 48 GB: 6.25 % short; shared/fixtures A/telegraf-tesla-t4-*,
# C/gls-l4-*, C/gpuexporter-l40s-*).  A total at most this fraction below a marketed size counts as it.
MEMORY_SHORTFALL_FRACTION = 0.08


@dataclass(frozen=True)
class MemoryVerdict:
    """Whether one GPU meets a memory requirement, and the size it was counted as."""

    meets: bool
    reported_gib: float
    counted_gb: float  # the size compared: the marketed one the total counts as, else the reported total
    marketed: bool  # counted_gb is a marketed size (from the spec sheet, or the size asked for)
    from_spec: bool  # the spec sheet named the marketed size


def memory_rule_text() -> str:
    """The rule in words, for the gate's explanation and findings."""
    percent = f"{MEMORY_SHORTFALL_FRACTION * 100:g} %"
    return (
        "memory is compared as marketed: a GPU the knowledge base knows counts as the largest size it is sold "
        f"with that its reported total reaches within {percent}; another GPU meets N when its reported total is "
        f"at most {percent} below N (drivers reserve some memory; with ECC on, GDDR boards report 6.25 % less)"
    )


def _counts_as(reported_gib: float, size: float) -> bool:
    return reported_gib >= size * (1 - MEMORY_SHORTFALL_FRACTION)


def memory_verdict(name: object, total_mib: object, wanted_gb: float) -> MemoryVerdict | None:
    """Does a GPU named ``name`` with ``total_mib`` reported meet ``wanted_gb``?  None when the total is unknown.

    ``memory_verdict("NVIDIA H100 80GB HBM3", 81559, 80)`` meets (counted as 80); ``..., 81)`` does not;
    ``memory_verdict("Tesla V100S-PCIE-32GB", 32510, 32)`` meets by the tolerance (the table has no V100S).
    """
    number = _number(total_mib)
    if number is None or number < 0 or isinstance(wanted_gb, bool) or not isinstance(wanted_gb, (int, float)):
        return None
    reported = number / 1024
    spec = gpu_spec_for_name(name)
    sold = [size for size in (spec.memory_gb if spec else ()) if _counts_as(reported, size)]
    if sold:
        return MemoryVerdict(max(sold) >= wanted_gb, reported, max(sold), True, True)
    if spec is None and reported < wanted_gb and _counts_as(reported, wanted_gb):
        return MemoryVerdict(True, reported, float(wanted_gb), True, False)
    return MemoryVerdict(reported >= wanted_gb, reported, reported, False, False)
