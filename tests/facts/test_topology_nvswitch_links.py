"""The NVSwitch link counts per GPU generation (kb/data/nvlink.json) and the inference the topology draws from them.

The topologies here are SYNTHETIC (two GPUs, built in the test); the counts are the knowledge base's.
"""

from __future__ import annotations

from gpudoctor.facts.topology import nvswitch_fabric
from gpudoctor.facts.topology_model import GpuPair, MachineTopology, TopoGpu
from gpudoctor.kb.gpu_specs import nvswitch_pair_links
from gpudoctor.kb.loading import _load


def test_switch_link_counts_come_from_the_nvlink_table_with_sources():
    assert nvswitch_pair_links("NVIDIA H100 80GB HBM3") == 18
    assert nvswitch_pair_links("NVIDIA A100-SXM4-80GB") == 12
    assert nvswitch_pair_links("NVIDIA H200") == 18
    for no_switch in ("NVIDIA GeForce RTX 4090", "Tesla V100-SXM2-32GB", None, 42, "", "x" * 600):
        assert nvswitch_pair_links(no_switch) is None
    table = _load("nvlink.json")
    for row in table["rows"]:
        if row.get("nvswitch_pair_links"):
            assert row["nvswitch_sources"] and set(row["nvswitch_sources"]) <= set(table["sources"])
    assert "nvswitch_pair_links" in table["nvswitch_inference"]


def _synthetic_pair(name: str, path: str) -> MachineTopology:
    gpus = [TopoGpu(index=i, name=name, form_factor="sxm") for i in (0, 1)]
    return MachineTopology(gpus=gpus, pairs=[GpuPair(0, 1, path=path, path_source="nvidia-smi topo -m")])


def test_two_h100s_with_every_link_to_each_other_meet_in_a_switch():
    """A VM given two GPUs of an HGX board: NV18 to the one peer adds up to no more than one GPU has."""
    assert nvswitch_fabric(_synthetic_pair("NVIDIA H100 80GB HBM3", "NV18")) == "inferred"
    assert nvswitch_fabric(_synthetic_pair("NVIDIA A100-SXM4-80GB", "NV12")) == "inferred"
    # Fewer links than a switch gives, or a GPU the table does not know: no claim.
    assert nvswitch_fabric(_synthetic_pair("NVIDIA H100 80GB HBM3", "NV6")) is None
    assert nvswitch_fabric(_synthetic_pair("NVIDIA H100 NVL", "NV12")) is None
