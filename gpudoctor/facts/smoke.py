"""The smoke probe's JSON (``smoke.json``), read into :class:`~gpudoctor.facts.smoke_model.SmokeFacts`.

The keys are the contract in :mod:`gpudoctor.facts.smoke_model`.  Like every parser here it never
raises: a value of the wrong type is unknown (``None``), a record that is not an object is skipped,
and lists are capped so a runaway record cannot become a huge fact.

How the run went is read like the framework probes' (:func:`~gpudoctor.facts.framework_probe.probe_run`):
"not_collected" (no evidence), "timed_out", "crashed" (no result), "not_installed" / "import_error"
(the framework could not be loaded), "ok".  Unlike a framework probe, a smoke run is measurements
that arrive one after the other, so what arrived is kept even when the run did not finish: an item
whose error says it was interrupted (Ctrl-C) and a timed-out item keep every workload that is in
their JSON, and ``stopped_by`` says why the rest is missing.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, TypeVar

from gpudoctor.evidence.model import EvidenceItem
from gpudoctor.facts.framework_model import ProbeRun
from gpudoctor.facts.framework_probe import (
    MAX_ITEMS,
    MAX_TEXT,
    _bool,
    _float,
    _probe_json,
    _str,
    _tail,
    capability,
    parse_python_target,
    probe_run,
)
from gpudoctor.facts.json_values import json_dict, json_int
from gpudoctor.facts.smoke_model import (
    AllreduceResult,
    BandwidthResult,
    CnnResult,
    MatmulResult,
    P2pResult,
    SmokeDevice,
    SmokeFacts,
)

Parsed = TypeVar("Parsed")

_WORKLOAD_KEYS = ("devices", "matmul", "cnn", "bandwidth", "p2p", "allreduce")
_STOPPED_BY = ("interrupt", "budget", "timeout")


def _text(value: object) -> str | None:
    """An error or a skip reason, verbatim (only trimmed and capped)."""
    return _str(value)


def _nonnegative(value: object) -> float | None:
    number = _float(value)
    return number if number is not None and number >= 0 else None


def _count(value: object) -> int | None:
    number = json_int(value)
    return number if number is not None and number >= 0 else None


def _loss(value: object) -> float | None:
    """A loss value; NaN and infinities are not numbers a report can carry, so they are unknown."""
    number = _float(value)
    return number if number is not None and math.isfinite(number) else None


def _records(value: object) -> list[dict[str, object]]:
    if not isinstance(value, list):
        return []
    return [record for record in value[:MAX_ITEMS] if isinstance(record, dict)]


def _device(record: dict[str, object]) -> SmokeDevice | None:
    device_id = _str(record.get("id"))
    if device_id is None:
        return None
    kind = _str(record.get("kind")) or ("cpu" if device_id == "cpu" else device_id.split(":")[0])
    return SmokeDevice(
        id=device_id,
        kind=kind.lower(),
        name=_str(record.get("name")),
        capability=capability(record.get("capability")),
        memory_total_mib=_count(record.get("memory_total_mib")),
        memory_free_mib=_count(record.get("memory_free_mib")),
        pci_bus_id=_str(record.get("pci_bus_id")),
        threads=_count(record.get("threads")),
    )


def _matmul(record: dict[str, object]) -> MatmulResult | None:
    device, dtype = _str(record.get("device")), _str(record.get("dtype"))
    if device is None or dtype is None:
        return None
    return MatmulResult(
        device=device,
        dtype=dtype.lower(),
        n=_count(record.get("n")),
        repeats=_count(record.get("repeats")),
        seconds=_nonnegative(record.get("seconds")),
        tflops=_nonnegative(record.get("tflops")),
        error=_text(record.get("error")),
        skipped=_text(record.get("skipped")),
        spread=_nonnegative(record.get("spread")),
        warmup=_count(record.get("warmup")),
        threads=_count(record.get("threads")),
        cpu_share=_nonnegative(record.get("cpu_share")),
    )


def _cnn(record: dict[str, object]) -> CnnResult | None:
    device, precision = _str(record.get("device")), _str(record.get("precision"))
    if device is None or precision is None:
        return None
    return CnnResult(
        device=device,
        precision=precision.lower(),
        batch=_count(record.get("batch")),
        steps=_count(record.get("steps")),
        seconds_per_step=_nonnegative(record.get("seconds_per_step")),
        steps_per_s=_nonnegative(record.get("steps_per_s")),
        loss_first=_loss(record.get("loss_first")),
        loss_last=_loss(record.get("loss_last")),
        loss_decreased=_bool(record.get("loss_decreased")),
        error=_text(record.get("error")),
        skipped=_text(record.get("skipped")),
        repeats=_count(record.get("repeats")),
        spread=_nonnegative(record.get("spread")),
        warmup=_count(record.get("warmup")),
        threads=_count(record.get("threads")),
        cpu_share=_nonnegative(record.get("cpu_share")),
    )


def _bandwidth(record: dict[str, object]) -> BandwidthResult | None:
    device, direction, memory = _str(record.get("device")), _str(record.get("direction")), _str(record.get("memory"))
    if device is None or direction is None:
        return None
    return BandwidthResult(
        device=device,
        direction=direction.lower(),
        memory=(memory or "").lower() or "unknown",
        bytes=_count(record.get("bytes")),
        repeats=_count(record.get("repeats")),
        gbps=_nonnegative(record.get("gbps")),
        error=_text(record.get("error")),
        skipped=_text(record.get("skipped")),
        spread=_nonnegative(record.get("spread")),
        warmup=_count(record.get("warmup")),
    )


def _p2p(record: dict[str, object]) -> P2pResult | None:
    src, dst = _str(record.get("src")), _str(record.get("dst"))
    if src is None or dst is None:
        return None
    return P2pResult(
        src=src,
        dst=dst,
        access=_bool(record.get("access")),
        gbps=_nonnegative(record.get("gbps")),
        error=_text(record.get("error")),
        skipped=_text(record.get("skipped")),
    )


def _allreduce(value: object) -> AllreduceResult | None:
    if not isinstance(value, dict):
        return None
    return AllreduceResult(
        backend=_str(value.get("backend")),
        world_size=_count(value.get("world_size")),
        device_kind=_str(value.get("device_kind")),
        bytes=_count(value.get("bytes")),
        repeats=_count(value.get("repeats")),
        seconds=_nonnegative(value.get("seconds")),
        algbw_gbps=_nonnegative(value.get("algbw_gbps")),
        busbw_gbps=_nonnegative(value.get("busbw_gbps")),
        ddp_step_s=_nonnegative(value.get("ddp_step_s")),
        ddp_loss_decreased=_bool(value.get("ddp_loss_decreased")),
        error=_text(value.get("error")),
        skipped=_text(value.get("skipped")),
    )


def _parsed(records: list[dict[str, object]], parse: Callable[[dict[str, object]], Parsed | None]) -> list[Parsed]:
    return [result for result in (parse(record) for record in records) if result is not None]


def _is_smoke_record(data: dict[str, object]) -> bool:
    return data.get("probe") == "smoke" or any(key in data for key in _WORKLOAD_KEYS)


def _interrupted(item: EvidenceItem) -> bool:
    return isinstance(item.error, str) and "interrupt" in item.error.lower()


def smoke_run(item: EvidenceItem | None, data: object) -> ProbeRun:
    """How the smoke run went; what arrived stays usable even when it was cut short."""
    if item is None:
        return ProbeRun(status="not_collected")
    if item.timed_out:
        # Measurements that arrived before the limit are still read.
        return replace(probe_run(item, None), status="timed_out")
    if not isinstance(data, dict):
        return probe_run(item, data)
    if data.get("installed") is False or data.get("import_ok") is False:
        return probe_run(item, data)
    exit_code, duration_s = json_int(item.exit_code), _float(item.duration_s)
    if not _is_smoke_record(data):
        return ProbeRun(
            status="crashed",
            error=_str(item.error) or "the probe printed an incomplete result",
            output_tail=_tail(item.stderr, item.text),
            exit_code=exit_code,
            duration_s=duration_s,
        )
    error: str | None = None
    output_tail: str | None = None
    probe_error = data.get("probe_error")
    if isinstance(probe_error, str) and probe_error.strip():
        lines = [line.strip() for line in probe_error.splitlines() if line.strip()]
        error = f"the probe failed: {lines[-1][:MAX_TEXT]}"
        output_tail = _tail(probe_error)
    elif _interrupted(item):
        error = _str(item.error)
    return ProbeRun(status="ok", error=error, output_tail=output_tail, exit_code=exit_code, duration_s=duration_s)


def _record_from_timed_out(item: EvidenceItem) -> dict[str, object] | None:
    """A timed-out run's stdout, if the probe got to print its record before it was stopped."""
    shown = EvidenceItem(name=item.name, kind=item.kind, text=item.text)
    return _probe_json(shown)


def parse_smoke(item: EvidenceItem | None) -> SmokeFacts:
    """The smoke run's facts from its evidence item (``None``: not collected)."""
    if item is None:
        return SmokeFacts(run=ProbeRun(status="not_collected"))
    data = _record_from_timed_out(item) if item.timed_out else _probe_json(item)
    run = smoke_run(item, data)
    if not isinstance(data, dict):
        return SmokeFacts(run=run, stopped_by="timeout" if item.timed_out else None)
    stopped = _str(data.get("stopped_by"))
    stopped_by = stopped if stopped in _STOPPED_BY else None
    if stopped_by is None and _interrupted(item):
        stopped_by = "interrupt"
    if stopped_by is None and item.timed_out:
        stopped_by = "timeout"
    facts = SmokeFacts(
        run=run,
        framework=_str(data.get("framework")),
        framework_version=_str(data.get("framework_version")) or _str(data.get("version")),
        python=parse_python_target(data),
        mode=_str(data.get("mode")),
        budget_s=_nonnegative(data.get("budget_s")),
        elapsed_s=_nonnegative(data.get("elapsed_s")),
        stopped_by=stopped_by,
        errors={
            key[:200]: value[:MAX_TEXT]
            for key, value in json_dict(data.get("errors")).items()
            if isinstance(key, str) and isinstance(value, str) and key and value.strip()
        },
    )
    if run.status not in ("ok", "timed_out"):
        return facts
    devices: list[SmokeDevice] = []
    seen: set[str] = set()
    for device in _parsed(_records(data.get("devices")), _device):  # the first of each id
        if device.id not in seen:
            seen.add(device.id)
            devices.append(device)
    return replace(
        facts,
        devices=devices,
        matmul=_parsed(_records(data.get("matmul")), _matmul),
        cnn=_parsed(_records(data.get("cnn")), _cnn),
        bandwidth=_parsed(_records(data.get("bandwidth")), _bandwidth),
        p2p=_parsed(_records(data.get("p2p")), _p2p),
        allreduce=_allreduce(data.get("allreduce")),
    )
