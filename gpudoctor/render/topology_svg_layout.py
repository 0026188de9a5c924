"""Where things go in the topology picture: grouping GPUs and NICs under PCIe switches and NUMA nodes,
and the arithmetic that places them (``topology_svg`` draws what this places).

GPUs that are pairwise PIX/PXB (or PIX/PXB to one NIC) form a PCIe switch group; a group sits in the
NUMA node of its first GPU; NICs near no GPU's switch go to the node of the GPUs they reach without
crossing sockets, or into a last row.  Everything is placed by arithmetic on the sorted model, so the
same model always gives the same coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpudoctor.facts.pci_address import normalize_bus_id
from gpudoctor.facts.topology_model import MachineTopology, TopoGpu
from gpudoctor.render.topology_text_shared import gpu_indices, nic_labels, path_kind

# Sizes in px.
MARGIN = 20
TITLE_H = 46
GPU_W, GPU_H = 150, 70
NIC_W, NIC_H = 74, 26
NIC_ROWS = 2  # NICs stack two high beside their GPUs
GAP = 16
BOX_PAD = 14
NUMA_GAP = 48
CPU_TOP, CPU_H = 30, 26  # the CPU bar, below the NUMA box's label
UNIT_TOP = CPU_TOP + CPU_H + 30  # room for the PCIe uplinks
SWITCH_HEAD = 22  # the PCIe switch box's label row
SWITCH_PAD = 10
ARC_MIN = 64  # the shallowest NVLink curve still clears the NUMA box under the GPUs
ARC_STEP = 22
CHAR_W = 6.4  # average glyph width at 11px, to shorten text that would overflow its box

NEAR = ("PIX", "PXB")


@dataclass
class Unit:
    """What sits side by side under a CPU bar: a PCIe switch group (GPUs and NICs pairwise PIX/PXB), a lone
    GPU, or the NICs of the node near no GPU."""

    gpus: list[int]
    nics: list[str] = field(default_factory=list)
    switch: str | None = None  # "sw1" when drawn as a switch box
    x: float = 0.0

    @property
    def nic_columns(self) -> int:
        return -(-len(self.nics) // NIC_ROWS)

    @property
    def inner_width(self) -> float:
        gpus = len(self.gpus) * GPU_W + max(len(self.gpus) - 1, 0) * GAP
        nics = self.nic_columns * NIC_W + max(self.nic_columns - 1, 0) * 8
        return gpus + (GAP if gpus and nics else 0) + nics

    @property
    def width(self) -> float:
        return self.inner_width + (2 * SWITCH_PAD if self.switch else 0)


@dataclass
class NumaBox:
    node: int | None
    cpus: str | None
    units: list[Unit] = field(default_factory=list)
    x: float = 0.0

    @property
    def width(self) -> float:
        content = sum(unit.width for unit in self.units) + max(len(self.units) - 1, 0) * GAP
        return max(content + 2 * BOX_PAD, 220.0)


class SvgLayout:
    """The model's GPUs and NICs in drawing order, grouped and placed."""

    def __init__(self, topo: MachineTopology):
        self.topo = topo
        self.gpus = gpu_indices(topo)
        self.nics = nic_labels(topo)
        self.by_index: dict[int, TopoGpu] = {}
        for gpu in topo.gpus:
            self.by_index.setdefault(gpu.index, gpu)
        self.gpu_set = set(self.gpus)
        self.gpu_xy: dict[int, tuple[float, float]] = {}
        self.nic_xy: dict[str, tuple[float, float]] = {}
        self.gpu_y = 0.0

    def components(self) -> list[list[int]]:
        """GPUs behind one PCIe switch (PIX/PXB to each other or to one NIC), each sorted, by first GPU."""
        parent = {gpu: gpu for gpu in self.gpus}

        def root(gpu: int) -> int:
            while parent[gpu] != gpu:
                parent[gpu] = parent[parent[gpu]]
                gpu = parent[gpu]
            return gpu

        def join(a: int, b: int) -> None:
            low, high = sorted((root(a), root(b)))
            parent[high] = low

        for pair in self.topo.pairs:
            if pair.a in parent and pair.b in parent and path_kind(pair.path) in NEAR:
                join(pair.a, pair.b)
        # An NVLink pair's topo -m cell says NV#, hiding that the two may also share a PCIe switch; a NIC
        # both are PIX/PXB to gives it away (DGX-1: GPU2 and GPU3 are NV1 and both PIX to mlx5_0).
        for nic in self.nics:
            near = self.near_gpus(nic, NEAR)
            for gpu in near[1:]:
                join(near[0], gpu)
        groups: dict[int, list[int]] = {}
        for gpu in self.gpus:
            groups.setdefault(root(gpu), []).append(gpu)
        return sorted(groups.values(), key=lambda group: group[0])

    def numa(self, gpu: int) -> int | None:
        node = getattr(self.by_index.get(gpu), "numa_node", None)
        return node if isinstance(node, int) and not isinstance(node, bool) else None

    def near_gpus(self, nic: str, kinds: tuple[str, ...]) -> list[int]:
        near = {
            gpu
            for (gpu, label), path in self.topo.nics_links.items()
            if label == nic and path_kind(path) in kinds and gpu in self.gpu_set
        }
        if kinds == NEAR:
            named = next((n for n in self.topo.nics if n.label == nic), None)
            near.update(g for g in (named.nearest_gpus if named else []) if g in self.gpu_set)
        return sorted(near)

    def boxes(self) -> tuple[list[NumaBox], list[str]]:
        self.gpu_set = set(self.gpus)
        units: list[Unit] = [Unit(list(group)) for group in self.components()]
        unit_of = {gpu: unit for unit in units for gpu in unit.gpus}
        loose: dict[int | None, list[str]] = {}
        unplaced: list[str] = []
        for nic in self.nics:
            near = self.near_gpus(nic, NEAR)
            if near:
                unit_of[near[0]].nics.append(nic)
                continue
            # Not behind a GPU's switch: on the socket of the GPUs it reaches without crossing sockets.
            local = [node for node in (self.numa(g) for g in self.near_gpus(nic, ("PHB", "NODE"))) if node is not None]
            if local:
                loose.setdefault(min(local), []).append(nic)
            else:
                unplaced.append(nic)
        number = 0
        for unit in units:
            if len(unit.gpus) + len(unit.nics) > 1:
                number += 1
                unit.switch = f"sw{number}"
        # A unit sits in the NUMA node of its first GPU (a PIX pair across sockets would be a bad merge).
        nodes = {self.numa(unit.gpus[0]) for unit in units}
        nodes.update(node for node in self.topo.numa_nodes if isinstance(node, int) and not isinstance(node, bool))
        nodes.update(loose)
        ordered = sorted(node for node in nodes if node is not None) + ([None] if None in nodes else [])
        boxes = []
        for node in ordered:
            box = NumaBox(node, self.topo.numa_nodes.get(node) if node is not None else None)
            box.units = [unit for unit in units if self.numa(unit.gpus[0]) == node]
            if loose.get(node):
                box.units.append(Unit([], loose[node]))
            boxes.append(box)
        return boxes, unplaced

    def arrange(self) -> tuple[list[NumaBox], list[str], float]:
        """Place everything: the NUMA boxes, their units, every GPU and NIC; returns the boxes, the NICs
        placed nowhere yet, and the bottom edge of the boxes."""
        boxes, unplaced = self.boxes()
        x: float = MARGIN
        top: float = TITLE_H
        for box in boxes:
            box.x = x
            ux = x + BOX_PAD
            for unit in box.units:
                unit.x = ux
                ux += unit.width + GAP
            x += box.width + NUMA_GAP
        self.gpu_y = top + UNIT_TOP + SWITCH_HEAD
        box_bottom = self.gpu_y + GPU_H + SWITCH_PAD + BOX_PAD
        self.place(boxes)
        return boxes, unplaced, box_bottom

    def place(self, boxes: list[NumaBox]) -> None:
        for box in boxes:
            for unit in box.units:
                x = unit.x + (SWITCH_PAD if unit.switch else 0)
                for gpu in unit.gpus:
                    self.gpu_xy[gpu] = (x, self.gpu_y)
                    x += GPU_W + GAP
                nic_x = x
                for j, nic in enumerate(unit.nics):
                    column, row = divmod(j, NIC_ROWS)
                    self.nic_xy[nic] = (nic_x + column * (NIC_W + 8), self.gpu_y + 4 + row * (NIC_H + 14))

    def pair_paths(self) -> dict[tuple[int, int], str]:
        paths: dict[tuple[int, int], str] = {}
        for pair in self.topo.pairs:
            if pair.a in self.gpu_set and pair.b in self.gpu_set and pair.a != pair.b and pair.path:
                paths.setdefault((min(pair.a, pair.b), max(pair.a, pair.b)), pair.path)
        return paths

    def down_links(self, gpu: int) -> list[tuple[int, str | None]]:
        """The GPU's down NVLinks as (link, normalised remote bus id or None)."""
        state = getattr(self.by_index.get(gpu), "nvlink", None)
        if state is None:
            return []
        return [(port.link, normalize_bus_id(port.remote_bus_id)) for port in state.ports if port.active is False]

    def bus_of(self, gpu: int) -> str | None:
        return normalize_bus_id(getattr(self.by_index.get(gpu), "bus_id", None))
