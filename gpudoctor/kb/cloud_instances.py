"""GPU instance types of the main clouds (``data/cloud_instances.json``, a source on every row): the GPU model and
count, GPU memory, interconnect, host link, network, and the driver images the provider ships.

Read by the platform checks (GPUs visible against the type's), the smoke checks (figures judged against the
type's expected ones), the machine line of the report and ``gpudoctor kb instances``.

Besides the rows, the data holds each provider's *family rules* (which name prefixes are sold with GPUs, which
without, which carry other accelerators) so that a type missing from the table can still be told apart, and the
provider's GPU *series* (Google Cloud's A2/A3/G2 and N1-with-attached-GPUs) and *images* (AWS Deep Learning AMIs,
Azure HPC images).  Provider keys are the cloud identity helper's: "aws", "gcp", "azure", "oci", "lambda".

Every lookup is a pure function of its arguments and the data; junk in gives ``None`` (or an empty tuple), never
an exception.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from gpudoctor.kb.loading import _load, as_dict, as_list

DATA_FILE = "cloud_instances.json"
PROVIDERS = ("aws", "gcp", "azure", "oci", "lambda")
_AZURE_PREFIX = "standard_"
_MAX_NAME = 120  # longer "names" are not instance types; they are never looked up


@dataclass(frozen=True)
class InstanceType:
    provider: str  # "aws", "gcp", "azure", "oci", "lambda", ...
    name: str  # as the provider spells it: "p4d.24xlarge", "a3-highgpu-8g", "Standard_ND96asr_v4"
    gpu_vendor: str  # "nvidia", "amd", "intel", "google" (TPU), "aws" (Trainium/Inferentia)
    gpu_model: str  # the provider's name for the GPU ("NVIDIA A10G"); the driver's name where the page gives it
    gpu_count: float  # whole GPUs; a fraction for a vGPU share (Azure NVadsA10_v5: 1/6)
    gpu_memory_gib: float | None = None  # per GPU as sold; for a vGPU share, the share's memory
    gpu_interconnect: str | None = None  # "NVSwitch ..."; None: none documented (PCIe only, or the page is silent)
    host_link: str | None = None  # "PCIe Gen4 x16"; None where the provider does not say
    network: str | None = None  # "4x 100 Gigabit, 400 Gbps aggregate (ENA, EFA)", "InfiniBand ..."
    driver_images: tuple[str, ...] = ()  # the provider's GPU images for this type
    source: str = ""  # URL of the provider's page the row is read from
    note: str | None = None
    gpu_share: str | None = None  # "1/6" for a fractional vGPU size, else None
    host_arch: str | None = None  # "aarch64" where the host CPU is Arm (AWS G5g); None: x86-64 or not stated

    @property
    def is_fractional(self) -> bool:
        """True for a size that gets a share of one GPU (a vGPU), not whole GPUs."""
        return self.gpu_share is not None

    @property
    def expected(self) -> str:
        """'1× NVIDIA A10G 24 GB' (or '1/6 of an NVIDIA A10 (4 GB)' for a vGPU share): what the type should show."""
        memory = _gb(self.gpu_memory_gib)
        if memory and memory.replace(" ", "").lower() in self.gpu_model.replace(" ", "").lower():
            memory = None  # "NVIDIA H100 80GB" already says it
        if self.gpu_share is not None:
            # "an NVIDIA A10", "an AMD ...": the article follows the sound of the model's first word
            article = "an" if self.gpu_model[:1].lower() in "aeiou" or self.gpu_model.startswith("NVIDIA") else "a"
            return f"{self.gpu_share} of {article} {self.gpu_model}" + (f" ({memory})" if memory else "")
        return f"{_count(self.gpu_count)}× {self.gpu_model}" + (f" {memory}" if memory else "")

    @property
    def whole_gpus(self) -> int:
        """The GPUs the guest sees as devices: the count, or 1 for a share of one GPU."""
        return max(1, int(self.gpu_count)) if self.gpu_count > 0 else 0


def _gb(value: float | None) -> str | None:
    return f"{value:g} GB" if value else None


def _count(value: float) -> str:
    return f"{value:g}"


# --------------------------------------------------------------------------- loading


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if value >= 0 else None


def _share(value: object) -> tuple[float, str | None] | None:
    """A GPU count: a number, or "1/6" for a vGPU share; None when it does not parse."""
    if isinstance(value, str):
        try:
            share = Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            return None
        if not 0 < share < 1:
            return None
        return float(share), f"{share.numerator}/{share.denominator}"
    number = _number(value)
    return (number, None) if number is not None else None


def _row(raw: Any, images: tuple[dict[str, Any], ...]) -> InstanceType | None:
    row = as_dict(raw)
    provider, name, model, source = (_text(row.get(k)) for k in ("provider", "name", "gpu_model", "source"))
    count = _share(row.get("gpu_count"))
    if provider is None or name is None or model is None or source is None or count is None:
        return None
    lowered = name.lower()
    found = tuple(
        str(image["name"])
        for image in images
        if image.get("provider") == provider
        and any(lowered.startswith(str(prefix).lower()) for prefix in as_list(image.get("applies_to")))
    )
    return InstanceType(
        provider=provider,
        name=name,
        gpu_vendor=_text(row.get("gpu_vendor")) or "nvidia",
        gpu_model=model,
        gpu_count=count[0],
        gpu_memory_gib=_number(row.get("gpu_memory_gib")),
        gpu_interconnect=_text(row.get("gpu_interconnect")),
        host_link=_text(row.get("host_link")),
        network=_text(row.get("network")),
        driver_images=found,
        source=source,
        note=_text(row.get("note")),
        gpu_share=count[1],
        host_arch=_text(row.get("host_arch")),
    )


def _images() -> tuple[dict[str, Any], ...]:
    rows = (as_dict(raw) for raw in as_list(_load(DATA_FILE).get("images")))
    return tuple(row for row in rows if _text(row.get("name")) and _text(row.get("provider")))


@functools.lru_cache(maxsize=1)
def _all_rows() -> tuple[InstanceType, ...]:
    images = _images()
    rows = (_row(raw, images) for raw in as_list(_load(DATA_FILE).get("instances")))
    return tuple(row for row in rows if row is not None)


@functools.lru_cache(maxsize=1)
def _index() -> dict[tuple[str, str], InstanceType]:
    return {(row.provider, _key(row.provider, row.name)): row for row in _all_rows()}


def _key(provider: str, name: str) -> str:
    """The lookup form of a name: lower case, trimmed; Azure names without their "Standard_" prefix."""
    key = name.strip().lower()
    if provider == "azure" and key.startswith(_AZURE_PREFIX):
        key = key[len(_AZURE_PREFIX) :]
    return key


def _clean(provider: object, name: object) -> tuple[str, str] | None:
    if not isinstance(provider, str) or not isinstance(name, str):
        return None
    wanted, key = provider.strip().lower(), _key(provider.strip().lower(), name)
    if not key or len(key) > _MAX_NAME or not key.isprintable():
        return None
    return wanted, key


# --------------------------------------------------------------------------- lookups


def instance_type(provider: str, name: str) -> InstanceType | None:
    """The row for ``name`` on ``provider`` (the provider's spelling, case-insensitive, surrounding space ignored;
    Azure names with or without "Standard_"); None when not known."""
    cleaned = _clean(provider, name)
    return _index().get(cleaned) if cleaned else None


def instance_types(provider: str | None = None) -> tuple[InstanceType, ...]:
    """Every row (of one provider when given), in the data's order."""
    if provider is None:
        return _all_rows()
    wanted = provider.strip().lower() if isinstance(provider, str) else ""
    return tuple(row for row in _all_rows() if row.provider == wanted)


def _families(provider: str) -> dict[str, Any]:
    return as_dict(as_dict(_load(DATA_FILE).get("families")).get(provider))


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(item).lower() for item in as_list(value) if isinstance(item, str) and item)


def _family_verdict(provider: str, key: str) -> bool | None:
    rules = _families(provider)
    if provider == "oci":
        parts = key.split(".")
        if any(part.startswith(str(rules.get("gpu_token") or "gpu")) for part in parts[1:2]):
            return True
        return False if len(parts) > 1 and parts[1] in _strings(rules.get("no_gpu_tokens")) else None
    if provider == "aws":
        key = key.split(".", 1)[0]  # the family: "p4d", "g5", "m5"
    if any(key.startswith(prefix) for prefix in _strings(rules.get("gpu"))):
        return True
    if accelerator_note(provider, key) is not None:
        return False
    if any(key.startswith(prefix) for prefix in _strings(rules.get("attach"))):
        return None  # GPUs attached at creation (GCP N1): the type alone does not say
    if any(key.startswith(prefix) for prefix in _strings(rules.get("no_gpu"))):
        return False
    return None


def has_gpus(provider: str, name: str) -> bool | None:
    """True: a GPU type (known, or of a GPU family); False: a family the provider sells without GPUs (m5, n2,
    Standard_D...), or with accelerators that are not GPUs (AWS inf/trn/f1, see ``accelerator_note``); None: not
    known either way (Google Cloud N1 included: GPUs are attached to an N1 VM when it is created)."""
    cleaned = _clean(provider, name)
    if cleaned is None:
        return None
    wanted, key = cleaned
    if (wanted, key) in _index():
        return _index()[(wanted, key)].gpu_count > 0
    return _family_verdict(wanted, key)


def accelerator_note(provider: str, name: str) -> str | None:
    """For a family with accelerators that are not GPUs ("inf2.xlarge"): what it carries; None otherwise."""
    cleaned = _clean(provider, name)
    if cleaned is None:
        return None
    family = cleaned[1].split(".", 1)[0]
    notes = as_dict(_families(cleaned[0]).get("accelerators"))
    for prefix, note in notes.items():
        if isinstance(prefix, str) and isinstance(note, str) and family.startswith(prefix.lower()):
            return note
    return None


def gpus_attachable(provider: str, name: str) -> bool:
    """True for a type that takes GPUs attached at creation (Google Cloud N1)."""
    cleaned = _clean(provider, name)
    if cleaned is None:
        return False
    return any(cleaned[1].startswith(prefix) for prefix in _strings(_families(cleaned[0]).get("attach")))


def series(provider: str | None = None) -> tuple[dict[str, Any], ...]:
    """The provider's GPU series rows (label, prefix, gpu_model, network, source), for families without size rows."""
    rows = (as_dict(raw) for raw in as_list(_load(DATA_FILE).get("series")))
    return tuple(row for row in rows if provider is None or row.get("provider") == provider)


def gpu_type_suggestions(provider: str) -> tuple[str, ...]:
    """What to pick instead of a type without GPUs, one line each, smallest useful first ('g4dn.xlarge: 1× NVIDIA
    T4 16 GB'): the table's one-GPU types (one per GPU model, x86 hosts, NVIDIA first, least memory first), then
    the provider's GPU series (Google Cloud's G2, N1 with attached GPUs, A2 ...), then larger types; at most 6
    lines, empty for a provider the table does not know."""
    wanted = provider.strip().lower() if isinstance(provider, str) else ""
    first_of_model: dict[str, tuple[int, InstanceType]] = {}
    for index, row in enumerate(instance_types(wanted)):
        if row.is_fractional or row.gpu_count < 1 or row.host_arch not in (None, "x86_64"):
            continue
        first_of_model.setdefault(row.gpu_model, (index, row))

    def rank(item: tuple[int, InstanceType]) -> tuple[float, bool, bool, float, int]:
        index, row = item
        # fewest GPUs, NVIDIA before others, known memory, least memory, then later families (newer) first
        memory = _ranking_memory(row)
        return (row.gpu_count, row.gpu_vendor != "nvidia", memory is None, memory or 0.0, -index)

    ranked = [row for _, row in sorted(first_of_model.values(), key=rank)]
    single = [f"{row.name}: {row.expected}" for row in ranked if row.gpu_count == 1][:4]
    lines = list(single)
    seen = {row.gpu_model for row in ranked if row.gpu_count == 1}
    for entry in series(wanted):
        label, model = _text(entry.get("label")), _text(entry.get("gpu_model"))
        if len(lines) < 6 and label and model and model not in seen:
            attach = " (GPUs can be attached to N1 VMs when they are created)" if entry.get("attached") else ""
            lines.append(f"{label} ({entry.get('prefix')}*): {model}{attach}")
            seen.add(model)
    for row in ranked:
        if len(lines) < 3 and row.gpu_count > 1:
            lines.append(f"{row.name}: {row.expected}")
    return tuple(lines[:6])


def _ranking_memory(row: InstanceType) -> float | None:
    """The row's memory per GPU, or where its source does not state it (Google Cloud's G2) the GPU's own from its
    spec sheet: only to order the suggestions (an L4 before an A100), never shown as the type's."""
    if row.gpu_memory_gib is not None:
        return row.gpu_memory_gib
    from gpudoctor.kb.gpu_specs import gpu_spec_for_name  # lazily: gpu_specs.json is only read when suggesting

    spec = gpu_spec_for_name(row.gpu_model)
    return min(spec.memory_gb) if spec is not None and spec.memory_gb else None


def expected_host_link(provider: str, name: str) -> str | None:
    """The host link the type's GPUs should train at, for the smoke checks.

    The provider's own figure where its page states one (the row's ``host_link``; no row has one today), else the
    GPU's own link from its spec sheet (kb/data/gpu_specs.json), said as the GPU's and not the VM's: "PCIe Gen4 x16
    (the NVIDIA L4's own link, from its spec sheet; the provider does not state the VM's)".  None for an unknown
    type, a vGPU share (the guest sees a virtual device), or a model the spec table cannot tell apart ("NVIDIA
    A100" may be SXM4 or PCIe) or gives no link for.
    """
    row = instance_type(provider, name)
    return row_host_link(row) if row is not None else None


def row_host_link(row: InstanceType) -> str | None:
    """:func:`expected_host_link` for a row in hand."""
    if row.host_link:
        return row.host_link
    return None if row.is_fractional else gpu_host_link(row.gpu_model)


def gpu_host_link(gpu_model: str) -> str | None:
    """The GPU's own host link from its spec sheet, worded as the GPU's ("PCIe Gen4 x16 (the NVIDIA L4's own
    link, ...)"); None when the spec table does not know the model or gives no link."""
    from gpudoctor.kb.gpu_specs import gpu_spec_for_name  # only the smoke checks ask: loads gpu_specs.json lazily

    spec = gpu_spec_for_name(gpu_model)
    if spec is None or spec.pcie_gen is None or spec.pcie_width is None:
        return None
    return (
        f"PCIe Gen{spec.pcie_gen} x{spec.pcie_width} (the {gpu_model}'s own link, from its spec sheet;"
        " the provider does not state the VM's)"
    )


def nvlink_expected(row: InstanceType) -> bool | None:
    """Whether the type's GPUs are linked by NVLink (directly or through NVSwitches), as its row states it.

    True where the interconnect names NVLink or NVSwitch; False where it names another GPU link (AMD Infinity
    Fabric); None where the row states none: its source documents none, which may be PCIe only or a page that is
    silent, so None is never to be read as "PCIe only".
    """
    text = row.gpu_interconnect if isinstance(row, InstanceType) else None
    if not isinstance(text, str) or not text.strip():
        return None
    words = text.lower()
    return "nvlink" in words or "nvswitch" in words


def family_note(provider: str) -> str | None:
    """The provider's family rule in a sentence (for the kb view)."""
    return _text(_families(provider.strip().lower() if isinstance(provider, str) else "").get("note"))


def sources() -> dict[str, dict[str, Any]]:
    return {str(k): as_dict(v) for k, v in as_dict(_load(DATA_FILE).get("sources")).items()}


def as_of() -> str:
    return str(_load(DATA_FILE).get("as_of") or "unknown")
