"""The AMD part of ``gpudoctor topo``'s text: a GPU×GPU matrix of XGMI links, the XGMI hives, one line per GPU.

Lines are (text, style) spans, as in ``topology_text``, which places them after the NVIDIA part (or alone, on a
machine with AMD GPUs only). AMD GPUs are numbered in KFD node order, as rocm-smi and amd-smi usually do.
"""

from __future__ import annotations

from gpudoctor.facts.topology_model import AmdTopoGpu, MachineTopology
from gpudoctor.facts.topology_xgmi import xgmi_hives
from gpudoctor.render.topology_text_shared import clean, or_unknown

Span = tuple[str, str]
Line = list[Span]

XGMI_STYLE = "green"
PCIE_STYLE = "yellow"
SEP = "  "
XGMI_MEANING = "a direct XGMI link between the two GPUs (KFD io_link type 11)"
PCIE_MEANING = "no XGMI link: over PCIe, through the CPU or a PCIe switch"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def xgmi_head(topo: MachineTopology) -> str:
    """ "AMD GPU topology: 8 GPUs in 2 XGMI hives" (also the SVG's title on an AMD-only machine)."""
    hives = xgmi_hives(topo.amd_gpus)
    head = f"AMD GPU topology: {_plural(len(topo.amd_gpus), 'GPU')}"
    partitions = sum(gpu.partitions for gpu in topo.amd_gpus)
    if partitions > len(topo.amd_gpus):
        head += f" ({partitions} compute partitions)"
    if hives:
        head += f" in {_plural(len(hives), 'XGMI hive')}"
    return head


def pair_word(topo: MachineTopology, a: int, b: int) -> str:
    """ "X" for itself, "XGMI" for a linked pair, "PCIe" for any other pair."""
    if a == b:
        return "X"
    return "XGMI" if topo.xgmi_link(a, b) is not None else "PCIe"


def xgmi_lines(topo: MachineTopology, width: int) -> list[Line]:
    """The AMD section; empty when no AMD GPU is known."""
    gpus = sorted(topo.amd_gpus, key=lambda gpu: gpu.index)
    if not gpus:
        return []
    lines: list[Line] = [[(xgmi_head(topo), "bold")], []]
    lines += _matrix(topo, gpus, width)
    lines += _hive_lines(topo)
    lines += _gpu_lines(gpus)
    return lines


def _matrix(topo: MachineTopology, gpus: list[AmdTopoGpu], width: int) -> list[Line]:
    labels = [f"GPU{gpu.index}" for gpu in gpus]
    label_width = max(len(label) for label in labels)
    cell = max(4, label_width)
    numa = [clean(or_unknown(gpu.numa_node)) for gpu in gpus]
    numa_width = max([4] + [len(n) for n in numa])
    if label_width + len(gpus) * (len(SEP) + cell) + len(SEP) + numa_width > width:
        return [[("(too many GPUs for a matrix at this width; the hives below say which are linked)", "dim")]]
    header: Line = [(" " * label_width, "")] + [(SEP + label.ljust(cell), "bold") for label in labels]
    header.append((SEP + "NUMA".ljust(numa_width), "bold"))
    lines: list[Line] = [header]
    for row, gpu in enumerate(gpus):
        line: Line = [(labels[row].ljust(label_width), "bold")]
        for other in gpus:
            word = pair_word(topo, gpu.index, other.index)
            style = {"XGMI": XGMI_STYLE, "PCIe": PCIE_STYLE}.get(word, "dim")
            line += [(SEP, ""), (word, style), (" " * (cell - len(word)), "")]
        line.append((SEP + numa[row], ""))
        lines.append(line)
    lines += [
        [],
        [("Legend:", "bold")],
        [("  ", ""), ("XGMI", XGMI_STYLE), (f" = {XGMI_MEANING}", "")],
        [("  ", ""), ("PCIe", PCIE_STYLE), (f" = {PCIE_MEANING}", "")],
    ]
    return lines


def _hive_lines(topo: MachineTopology) -> list[Line]:
    hives = xgmi_hives(topo.amd_gpus)
    if not hives:
        return [[], [("XGMI: ", "bold"), ("no XGMI hive (every GPU pair talks over PCIe)", "")]]
    lines: list[Line] = [[], [("XGMI hives:", "bold")]]
    for number, (hive, members) in enumerate(hives.items()):
        pairs = [(a, b) for i, a in enumerate(members) for b in members[i + 1 :]]
        linked = sum(1 for a, b in pairs if topo.xgmi_link(a, b) is not None)
        if len(members) == 1:
            shape = "a hive of one"
        elif linked == len(pairs):
            shape = "every pair linked"
        else:
            shape = f"{linked} of {len(pairs)} pairs linked directly"
        gpus = ", ".join(f"GPU{index}" for index in members)
        lines.append([("  ", ""), (f"hive {number}", "bold"), (f"  {gpus} ({shape}); id {clean(hive)}", "")])
    lonely = [gpu.index for gpu in topo.amd_gpus if not gpu.hive_id]
    if lonely:
        lines.append([("  ", ""), ("no hive", "bold"), ("  " + ", ".join(f"GPU{i}" for i in lonely), "")])
    return lines


def _gpu_lines(gpus: list[AmdTopoGpu]) -> list[Line]:
    label_width = max(len(f"GPU{gpu.index}") for gpu in gpus)
    lines: list[Line] = [[], [("AMD GPUs:", "bold")]]
    for gpu in gpus:
        what = clean(gpu.name) or "AMD GPU"
        details = [d for d in (clean(gpu.gfx_target), f"device {clean(gpu.device_id)}" if gpu.device_id else "") if d]
        if details:
            what += f" ({', '.join(details)})"
        line: Line = [("  ", ""), (f"GPU{gpu.index}".ljust(label_width), "bold"), ("  " + what, "")]
        if gpu.bus_id:
            line.append(("  " + clean(gpu.bus_id), ""))
        if gpu.numa_node is not None:
            line.append((f"  NUMA {clean(gpu.numa_node)}", ""))
        if gpu.partitions > 1:
            line.append((f"  {gpu.partitions} compute partitions", ""))
        if gpu.render_minors:
            first, last = min(gpu.render_minors), max(gpu.render_minors)
            nodes = f"renderD{first}" + (f"-{last}" if last != first else "")
            line.append(("  " + nodes, "dim"))
        lines.append(line)
    return lines
