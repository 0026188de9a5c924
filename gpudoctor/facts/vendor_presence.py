"""Which accelerator vendors the evidence says anything about, read cheaply from the raw evidence.

A machine (or a report) without AMD, Intel, Apple or TPU evidence should pay nothing for those vendors: their
parsers, models and checks are not loaded, and their checks are not applicable. So this answers, without importing
any vendor's model, whether anything at all names the vendor: a tool that printed something, a file it leaves, a
PCI function, a framework build, an environment variable, a word in a pasted text. Each test is a superset of what
that vendor's facts read: a vendor it names is parsed in full (and may still turn out to have no device), one it
does not name is absent.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.evidence.model import PASTE_SECTION_KIND
from gpudoctor.facts.json_values import json_dict
from gpudoctor.kb.accelerator_pci import KERNEL_DRIVERS, vendor_of

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts

# The words that, in a pasted text or a log, may carry a vendor's facts (an error its checks read, a listing):
# each a literal found with str.find in the lower-cased text (fast on a megabyte of log), then, where the word could
# sit inside another ("output" holds "tpu", "chip" holds "hip", "jumps" holds "mps"), confirmed at a word start
# in a few characters around it.
_TEXT_WORDS: dict[str, tuple[tuple[str, re.Pattern[str] | None], ...]] = {
    "amd": (
        ("amdgpu", None),
        ("rocm", re.compile(r"\brocm")),
        ("/dev/kfd", None),
        ("hip", re.compile(r"\bhip(?:error|_| error)")),
        ("hsa_", re.compile(r"\bhsa_")),
    ),
    "intel": (
        ("level_zero", None),
        ("level zero", None),
        ("xpu", re.compile(r"\bxpu")),
        ("sycl", re.compile(r"\bsycl")),
        ("intel(r) arc", None),
    ),
    "apple": (
        ("mps", re.compile(r"\bmps\b")),
        ("macos", re.compile(r"\bmacos")),
        ("apple m", re.compile(r"\bapple m\d")),
        ("darwin", re.compile(r"\bdarwin")),
        ("metal", re.compile(r"\bmetal\b")),
    ),
    "google": (("tpu", re.compile(r"\btpu|libtpu")),),
}
_WINDOW = 12  # characters kept on each side of a literal to confirm it
_MAX_HITS = 2_000  # occurrences of one literal looked at before giving up on it (a log full of "output")
# The free texts: what a person pasted, the kernel log, and the frameworks' logs.
_TEXT_SOURCES = (Ev.PASTE, Ev.TORCH_COLLECT_ENV, Ev.TENSORFLOW_LOG, Ev.KERNEL_LOG)
_ENV = {
    "amd": ("HSA_OVERRIDE_GFX_VERSION", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ROCM_PATH", "HIP_PATH"),
    "intel": ("ZE_AFFINITY_MASK", "ONEAPI_DEVICE_SELECTOR", "SYCL_DEVICE_FILTER"),
    "apple": ("PYTORCH_ENABLE_MPS_FALLBACK",),
    "google": ("TPU_VISIBLE_DEVICES", "TPU_ACCELERATOR_TYPE", "ALLOW_MULTIPLE_LIBTPU_LOAD"),
}
_TOOLS = {
    "amd": (Ev.AMD_SMI, Ev.AMD_SMI_LIST, Ev.ROCM_SMI, Ev.ROCMINFO),
    "intel": (Ev.XPU_SMI, Ev.SYCL_LS),
    "apple": (Ev.MAC_DISPLAYS,),
    "google": (),
}
_NODES = {"amd": ("/dev/kfd",), "intel": (), "apple": (), "google": ("/dev/accel", "/dev/vfio/")}
_MAX_TEXT = 2_000_000


def vendors_in_evidence(facts: Facts) -> frozenset[str]:
    """The vendors ("amd", "intel", "apple", "google") anything in the evidence names."""
    found = {vendor for vendor in _TOOLS if _names(facts, vendor)}
    return frozenset(found)


def _names(facts: Facts, vendor: str) -> bool:
    evidence = facts.evidence
    if any((evidence.output(key.value) or "").strip() for key in _TOOLS[vendor]):
        return True
    if any(vendor_of(device.vendor_id) == vendor for device in facts.pci_accelerators):
        return True
    if any(facts.env.get(name) is not None for name in _ENV[vendor]):
        return True
    modules = facts.loaded_modules or {}
    if any(name in modules for name in KERNEL_DRIVERS.get(vendor, ())):
        return True
    nodes = json_dict(json_dict(evidence.json(Ev.ACCEL_DEVICE_NODES.value)).get("nodes"))
    if any(path.startswith(prefix) for path in nodes for prefix in _NODES[vendor]):
        return True
    if _framework_says(facts, vendor) or _files_say(facts, vendor):
        return True
    return _texts_say(facts, vendor)


def _framework_says(facts: Facts, vendor: str) -> bool:
    torch, tensorflow, jax, report = facts.torch, facts.tensorflow, facts.jax, facts.collect_env
    if vendor == "amd":
        return bool(torch.hip or tensorflow.rocm_build or (report and (report.rocm_build or report.gpu_gfx)))
    if vendor == "intel":
        return bool(torch.xpu_built or torch.xpu_available or (report and (report.xpu_build or report.xpu_gpu_names)))
    if vendor == "apple":
        pythons = [fw.python for fw in (torch, tensorflow, jax, facts.cupy) if fw.python is not None]
        mac_report = report is not None and "macos" in f"{report.os} {report.python_platform}".lower()
        return bool(torch.mps_built or tensorflow.metal_plugin or mac_report or any(p.os == "macos" for p in pythons))
    return bool(jax.libtpu or jax.default_backend == "tpu" or jax.tpu_devices)


def _files_say(facts: Facts, vendor: str) -> bool:
    evidence = facts.evidence
    if vendor == "amd":
        kfd = json_dict(evidence.json(Ev.KFD_TOPOLOGY.value)).get("nodes")
        installs = json_dict(evidence.json(Ev.ROCM_INSTALL.value)).get("installs")
        return bool(kfd) or bool(installs)
    if vendor == "apple":
        return json_dict(evidence.json(Ev.MACOS.value)).get("is_macos") is True
    if vendor == "google":
        return json_dict(json_dict(evidence.json(Ev.TPU_RUNTIME.value)).get("lockfile")).get("exists") is True
    return False


def _texts_say(facts: Facts, vendor: str) -> bool:
    """A pasted text, a log or a framework's own log lines with one of the vendor's words."""
    names = {key.value for key in _TEXT_SOURCES}
    texts = [
        item.output[:_MAX_TEXT].lower()
        for item in facts.evidence.items.values()
        if (item.name in names or item.kind == PASTE_SECTION_KIND) and (item.text or item.stderr)
    ]
    texts += [line.lower() for line in facts.jax.log_lines + facts.jax.backend_errors]
    return any(_has_word(text, literal, confirm) for text in texts for literal, confirm in _TEXT_WORDS[vendor])


def _has_word(text: str, literal: str, confirm: re.Pattern[str] | None) -> bool:
    start = text.find(literal)
    if confirm is None or start < 0:
        return start >= 0
    for _ in range(_MAX_HITS):
        if start < 0:
            return False
        window = text[max(0, start - _WINDOW) : start + len(literal) + _WINDOW]
        if confirm.search(window):
            return True
        start = text.find(literal, start + 1)
    return False
