"""``gpudoctor kb`` tables of the hardware: GPU names, specs, PCIe links, Xid codes (one code too) and health
limits."""

from __future__ import annotations

from typing import Any

from gpudoctor.kb import loading
from gpudoctor.kb.describe_format import header, keys, sources_block, table
from gpudoctor.kb.errors import KnowledgeError
from gpudoctor.kb.loading import as_dict
from gpudoctor.kb.versions import version_key


def gpus_table() -> list[str]:
    data = loading._gpu_data()
    lines = header("GPU names -> compute capability", data)
    rows = [
        [r.get("match"), r.get("compute_capability"), r.get("architecture"), keys(r)]
        for r in data.get("gpus", [])
        if isinstance(r, dict)
    ]
    rows.sort(key=lambda r: (version_key(str(r[1])), str(r[0])), reverse=True)
    lines += table(["GPU", "cc", "architecture", "sources"], rows)
    return lines + sources_block(data)


def specs_table() -> list[str]:
    from gpudoctor.kb.gpu_spec_tables import spec_data

    data = spec_data()  # NVIDIA's compiled table with the AMD rows merged in
    lines = header("GPU spec sheets (dense TFLOP/s, GB/s = 10^9 bytes per second)", data)
    rows = []
    for r in data.get("gpus", []):
        if not isinstance(r, dict):
            continue
        memory = "/".join(f"{v:g}" for v in r.get("memory_gb", []) if isinstance(v, (int, float)))
        pcie = f"Gen{r['pcie_gen']} x{r['pcie_width']}" if r.get("pcie_gen") and r.get("pcie_width") else None
        board = (
            f" (board of {r['devices_per_board']})"
            if (r.get("devices_per_board") or 1) > 1 and "board" not in str(r.get("gpu"))
            else ""
        )
        rows.append(
            [
                f"{r.get('gpu')}{board}",
                r.get("compute_capability"),
                memory or None,
                r.get("memory_bandwidth_gbs"),
                r.get("fp32_tflops"),
                r.get("tf32_tensor_dense_tflops"),
                r.get("fp16_tensor_dense_tflops"),
                r.get("bf16_tensor_dense_tflops"),
                pcie,
                r.get("nvlink_gbs_bidirectional"),
                keys(r),
            ]
        )
    lines += table(
        ["GPU", "cc", "memory GB", "mem GB/s", "FP32", "TF32", "FP16", "BF16", "PCIe", "NVLink (bidir)", "sources"],
        rows,
    )
    matched = [
        f"  {r.get('gpu')}: {', '.join(r.get('names', []))}"
        for r in data.get("gpus", [])
        if isinstance(r, dict) and r.get("names")
    ]
    lines += ["", "Names matched (nvidia-smi spellings; a trailing memory size such as -32GB is allowed):"] + matched
    notes = [
        f"- {r.get('gpu')}: {r.get('note')}" for r in data.get("gpus", []) if isinstance(r, dict) and r.get("note")
    ]
    notes += [
        f"- {r.get('gpu')} TF32: {r.get('tf32_note')} [{keys(r, 'tf32_sources')}]"
        for r in data.get("gpus", [])
        if isinstance(r, dict) and r.get("tf32_note")
    ]
    if notes:
        lines += ["", "Notes:"] + notes
    generations = [g for g in data.get("nvlink_generations", []) if isinstance(g, dict)]
    if generations:
        lines += [
            "",
            "NVLink generations (per GPU, both directions): "
            + "; ".join(
                f"{g.get('gen')} ({g.get('gpus')}) {g.get('duplex_gbs'):g} GB/s"
                for g in generations
                if isinstance(g.get("duplex_gbs"), (int, float))
            ),
        ]
    cited = [r for r in data.get("gpus", []) if isinstance(r, dict)]
    cited += [{"sources": r.get("tf32_sources")} for r in cited] + [{"sources": g.get("sources")} for g in generations]
    return lines + sources_block(data, cited)


def pcie_table() -> list[str]:
    data = loading._pcie_data()
    lines = header("PCIe bandwidth by generation (GB = 10^9 bytes, per direction unless duplex)", data)
    rows = [
        [
            r.get("gen"),
            r.get("gt_s"),
            r.get("encoding"),
            r.get("gb_s_per_lane_per_dir"),
            r.get("x16_gb_s_per_dir"),
            r.get("x16_gb_s_duplex"),
            keys(r),
        ]
        for r in data.get("rows", [])
        if isinstance(r, dict)
    ]
    lines += table(["gen", "GT/s", "encoding", "GB/s per lane", "x16 GB/s", "x16 duplex", "sources"], rows)
    notes = [
        f"- Gen{r.get('gen')}: {r.get('note')}" for r in data.get("rows", []) if isinstance(r, dict) and r.get("note")
    ]
    if data.get("measured_note"):
        notes.append(f"- {data['measured_note']}")
    if notes:
        lines += [""] + notes
    return lines + sources_block(data)


def _xid_data() -> dict[str, Any]:
    from gpudoctor.kb import xid

    return loading._load(xid.XID_FILE)


def xid_table() -> list[str]:
    data = _xid_data()
    lines = header("NVIDIA Xid codes by meaning (one code: gpudoctor kb xid:CODE)", data)
    rows = [
        [r.get("code"), r.get("severity"), r.get("category"), r.get("meaning"), r.get("nvidia_immediate"), keys(r)]
        for r in data.get("xids", [])
        if isinstance(r, dict)
    ]
    lines += table(["Xid", "severity", "category", "meaning", "NVIDIA action", "sources"], rows)
    severities = as_dict(data.get("severities"))
    if severities:
        lines += ["", "Severity: " + "; ".join(f"{k} = {v}" for k, v in severities.items())]
    if data.get("note"):
        lines.append(f"- {data['note']}")
    return lines + sources_block(data, [r for r in data.get("xids", []) if isinstance(r, dict)])


def xid_item(item: str) -> list[str]:
    from gpudoctor.kb import xid

    info = xid.xid_info(item)
    if info is None:
        if xid._as_code(item) is None:
            raise KnowledgeError(f"not an Xid code: {str(item)[:40]!r} (e.g. gpudoctor kb xid 79)")
        return [xid.describe_xid(item)]
    severities = _xid_data().get("severities")
    meaning = severities.get(info.severity) if isinstance(severities, dict) else None
    lines = [f"Xid {info.code}: {info.meaning}"]
    if info.mnemonic:
        lines.append(f"  mnemonic:  {info.mnemonic}")
    lines.append(f"  severity:  {info.severity}" + (f" ({meaning})" if meaning else ""))
    lines.append(f"  category:  {info.category}")
    if info.applies:
        lines.append(f"  applies:   {info.applies}")
    lines.append(f"  action:    {info.action}")
    if info.commands:
        lines.append("  commands (<index> = the GPU's index):")
        for line, why in zip(info.commands, info.command_reasons):
            lines.append(f"    {line}" + (f"    # {why}" if why else ""))
    lines.append(
        f"  NVIDIA:    immediate {info.nvidia_immediate or '-'}, investigatory {info.nvidia_investigatory or '-'}"
    )
    if info.note:
        lines.append(f"  note:      {info.note}")
    return lines + sources_block(_xid_data(), [{"sources": list(info.sources)}])


def health_table() -> list[str]:
    from gpudoctor.kb import health_limits

    data = loading._load(health_limits.HEALTH_FILE)
    lines = header("GPU health limits (what the HEALTH checks judge against)", data)
    limits = [r for r in data.get("limits", []) if isinstance(r, dict)]
    rows = [
        [
            r.get("name"),
            r.get("value"),
            r.get("unit"),
            r.get("rule"),
            keys(r) + (" (gpudoctor default)" if r.get("gpudoctor_default") else ""),
        ]
        for r in limits
    ]
    lines += table(["limit", "value", "unit", "rule", "sources"], rows)
    notes = [f"- {r.get('name')}: {r.get('note')}" for r in limits if r.get("note")]
    notes += [f"- {r.get('name')} applies to {r.get('applies')}" for r in limits if r.get("applies")]
    if notes:
        lines += ["", "Notes:"] + notes
    persistence = as_dict(data.get("persistence"))
    cited = list(limits)
    if persistence:

        def names(key: str) -> str:
            values = persistence.get(key)
            return ", ".join(str(v) for v in values) if isinstance(values, list) and values else "-"

        lines += [
            "",
            f"Persistence mode [{keys(persistence)}]: {persistence.get('rule')}",
            f"  data-center brands: {names('datacenter_brands')}",
            f"  other brands:       {names('other_brands')}",
            f"  brand unknown, data center by name: {names('datacenter_name_prefixes')}; {names('datacenter_models')}",
        ]
        if persistence.get("note"):
            lines.append(f"  note: {persistence['note']}")
        cited.append(persistence)
    return lines + sources_block(data, cited)
