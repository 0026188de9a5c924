"""Google TPU facts, merged from every source that names the chips or what holds them.

The PCI bus (vendor 1ae0 with a TPU device id) and ``/dev/accelN`` say which chips the machine has; JAX (its
probe, or a pasted ``jax.devices()`` listing) says what a program sees; the libtpu lock file and the logs say
whether another process owns the TPU. One process owns the TPU at a time: a second one gets "The TPU is already
in use by process with pid N" and JAX falls back to the CPU, with a warning that wrongly blames a missing
libtpu (https://github.com/jax-ml/jax/issues/22070, https://github.com/jax-ml/jax/issues/10192).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.accelerators import Accelerator, Vendor
from gpudoctor.facts.json_values import json_dict, json_int, json_list
from gpudoctor.facts.pci_accelerators import functions_of
from gpudoctor.facts.tpu_model import TpuChip, TpuDevice, TpuFacts
from gpudoctor.kb.accelerator_pci import tpu_generation

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts
    from gpudoctor.facts.jax_devices import JaxDeviceListing

_ACCEL = re.compile(r"^/dev/accel(\d{1,4})$")
_VFIO = re.compile(r"^/dev/vfio/(\d{1,5})$")
_IN_USE_PID = re.compile(r"already in use by process with pid (\d{1,10})", re.IGNORECASE)
_IN_USE = re.compile(r"libtpu\.so already in use by another process|TPU is already in use", re.IGNORECASE)
_OPEN_DENIED = re.compile(
    r"Couldn't open device: (/dev/accel\d{1,4} \([^()\n]{1,80}\))|PERMISSION_DENIED: open\((/dev/accel\d{1,4})\)"
)
# JAX's own words when it found no accelerator backend: "No GPU/TPU found, falling back to CPU." (older
# releases), "... is not installed. Falling back to cpu." (newer).
_FELL_BACK = re.compile(r"No GPU/TPU found, falling back to CPU|libtpu is not installed\. Falling back to cpu", re.I)
_MISLEADING = "either a TPU-enabled jaxlib or libtpu is not installed"
# Generations with one /dev/accelN per chip (v5e and later show VFIO groups instead).
_ACCEL_GENERATIONS = ("v2/v3", "v4")
_TEXT_KINDS = ("file", "paste-section")
_MAX_TEXT = 2_000_000


def _texts(facts: Facts) -> list[str]:
    """The free texts a person gave (pastes, logs) and what JAX logged while probed."""
    texts = [
        item.output[:_MAX_TEXT]
        for item in facts.evidence.items.values()
        if item.kind in _TEXT_KINDS and (item.text or item.stderr)
    ]
    jax = facts.jax
    texts.extend(jax.log_lines)
    texts.extend(jax.backend_errors)
    return texts


def _numbered(paths: list[str], pattern: re.Pattern[str]) -> tuple[str, ...]:
    found = [(int(m.group(1)), path) for path in paths if (m := pattern.match(path))]
    return tuple(path for _, path in sorted(found))


def _chips(facts: Facts, accel: tuple[str, ...]) -> tuple[TpuChip, ...]:
    functions = functions_of(facts.pci_accelerators, "google")
    chips = [
        TpuChip(bus_id=d.address, device_id=d.device_id, generation=tpu_generation(d.device_id)) for d in functions
    ]
    if chips and len(accel) == len(chips) and all(c.generation in _ACCEL_GENERATIONS for c in chips):
        # One node per chip, numbered in bus order (how libtpu and PyTorch/XLA count them).
        chips = [TpuChip(c.bus_id, c.device_id, c.generation, node) for c, node in zip(chips, accel)]
    if not chips:
        chips = [TpuChip(device_node=node) for node in accel]
    return tuple(chips)


def _listing(texts: list[str]) -> JaxDeviceListing | None:
    listing = None
    for text in texts:
        if not any(word in text for word in ("Device", "TpuDe", "CpuDe", "GpuDe")):  # a listing, even terminal-wrapped
            continue
        from gpudoctor.facts.jax_devices import parse_jax_devices  # only for texts that may list devices

        found = parse_jax_devices(text)
        if found is not None:
            listing = found
    return listing


def _runtime(data: object) -> tuple[dict[str, object], tuple[int, ...], bool]:
    record = json_dict(data)
    lockfile = json_dict(record.get("lockfile"))
    holders = tuple(
        pid for pid in (json_int(json_dict(h).get("pid")) for h in json_list(record.get("holders"))) if pid is not None
    )
    return lockfile, holders, record.get("holders_complete") is True


def tpu_facts(facts: Facts) -> TpuFacts:
    paths = list(facts.accel_nodes.nodes)
    accel = _numbered(paths, _ACCEL)
    vfio = _numbered(paths, _VFIO)
    texts = _texts(facts)
    joined = "\n".join(texts)
    pid_match = _IN_USE_PID.search(joined)
    denied = _OPEN_DENIED.search(joined)
    jax = facts.jax
    devices: tuple[TpuDevice, ...] | None = None
    backend: str | None = None
    source: str | None = None
    if jax.run.status == "ok":
        devices, backend, source = jax.tpu_devices, jax.default_backend, "probe"
    else:
        listing = _listing(texts)
        if listing is not None:
            devices, source = listing.tpu_devices, "paste"
            backend = (
                "tpu" if listing.tpu_devices else (listing.other_platforms[0] if listing.other_platforms else None)
            )
    if backend is None and _FELL_BACK.search(joined):
        backend, source = "cpu", "log"
    libtpu = jax.libtpu
    lockfile, holders, complete = _runtime(facts.evidence.json(Ev.TPU_RUNTIME.value))
    exists = lockfile.get("exists") is True
    mtime = lockfile.get("mtime")
    return TpuFacts(
        chips=_chips(facts, accel),
        devices=devices,
        libtpu_version=next((v for v in libtpu.values() if v), None) if libtpu else None,
        lockfile=str(lockfile.get("path") or "/tmp/libtpu_lockfile") if exists else None,
        in_use_by_pid=int(pid_match.group(1)) if pid_match else None,
        lockfile_mtime=float(mtime) if exists and isinstance(mtime, (int, float)) else None,
        lockfile_uid=json_int(lockfile.get("uid")) if exists else None,
        lock_holders=holders,
        holders_complete=complete,
        runtime_collected=facts.collected(Ev.TPU_RUNTIME),
        in_use_reported=pid_match is not None or _IN_USE.search(joined) is not None,
        device_open_error=(denied.group(1) or denied.group(2)) if denied else None,
        misleading_libtpu_warning=_MISLEADING in joined,
        accel_nodes=accel,
        vfio_nodes=vfio,
        jax_backend=backend,
        jax_source=source,
        libtpu_installed=bool(libtpu) if libtpu is not None else None,
    )


def tpu_evidence(tpu: TpuFacts) -> bool:
    """Anything at all says this is (or was meant to be) a TPU machine."""
    return bool(
        tpu.present
        or tpu.lockfile
        or tpu.in_use_reported
        or tpu.device_open_error
        or tpu.libtpu_version
        or tpu.jax_backend == "tpu"
    )


def chips_seen_by_jax(devices: tuple[TpuDevice, ...]) -> int:
    """How many chips a device list spans: one per (host, coordinates), since v2/v3 list two cores per chip."""
    keyed = {(d.process_index, d.coords) for d in devices if d.coords is not None}
    return len(keyed) if keyed else len(devices)


def tpu_accelerators(facts: Facts) -> tuple[Accelerator, ...]:
    tpu = facts.tpu
    sees = tpu.jax_backend == "tpu"
    if tpu.chips:
        return tuple(
            Accelerator(
                vendor=Vendor.GOOGLE,
                index=index,
                name=None,
                bus_id=chip.bus_id,
                memory_total_mib=None,
                architecture=chip.generation if chip.generation != "testing only" else None,
                driver_sees=sees,
                source="pci" if chip.bus_id else "driver",
                tpu=chip,
            )
            for index, chip in enumerate(tpu.chips)
        )
    if tpu.devices:
        # Only JAX names them (a pasted listing): one accelerator per chip it spans.
        return tuple(
            Accelerator(
                vendor=Vendor.GOOGLE,
                index=index,
                name=None,
                bus_id=None,
                memory_total_mib=None,
                architecture=None,
                driver_sees=True,
                source="driver",
                tpu=TpuChip(),
            )
            for index in range(chips_seen_by_jax(tpu.devices))
        )
    return ()
