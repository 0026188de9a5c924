"""The merged MachineTopology: which source wins, the CPU scan live, and junk in any source."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.system_scan import scan_cpu_topology
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.nvml_topology import parse_cpu_list
from gpudoctor.facts.topology import build_topology, fabric_manager_state, form_factor
from tests.helpers.fixtures import fixture_text
from tests.helpers.strategies import any_code_points, json_like
from tests.synthetic import nvml_records
from tests.synthetic.evidence import make_evidence, pci_scan


def test_live_cpu_scan_is_this_process_affinity():
    record = scan_cpu_topology()
    assert record["process_cpus"] == sorted(os.sched_getaffinity(0))
    assert all(key.isdigit() for key in record["numa_nodes"])
    topo = build_topology(Facts(make_evidence(cpu_topology_json=record)))
    assert parse_cpu_list(topo.process_cpus) == set(os.sched_getaffinity(0))


def test_fabric_manager_state_in_one_word():
    assert fabric_manager_state("LoadState=loaded\nActiveState=active\nSubState=running\n") == "active"
    assert fabric_manager_state("LoadState=loaded\nActiveState=failed\nSubState=failed\n") == "failed"
    assert fabric_manager_state("LoadState=not-found\nActiveState=inactive\nSubState=dead\n") == "not-installed"
    assert fabric_manager_state("System has not been booted with systemd as init system (PID 1).") is None
    assert fabric_manager_state(None) is None


@given(any_code_points())
def test_fabric_manager_state_takes_any_text(text):
    assert fabric_manager_state(text) is None or isinstance(fabric_manager_state(text), str)


def test_form_factor_from_the_name_and_the_spec_sheet():
    assert form_factor("NVIDIA H100 80GB HBM3") == "sxm"  # the SXM5 board's name carries no "SXM"
    assert form_factor("Tesla V100-SXM2-32GB") == "sxm"
    assert form_factor("NVIDIA H100 PCIe") == "pcie"
    assert form_factor("NVIDIA GeForce RTX 4090") == "pcie"
    assert form_factor("NVIDIA H200 NVL") == "pcie"
    assert form_factor("Graphics Device") is None and form_factor(None) is None


def test_nvml_link_beats_the_xml_and_sysfs_fills_the_numa_node():
    """SYNTHETIC NVML + sysfs: NVML says Gen4 x8 for GPU 1; sysfs knows its nearest CPUs."""
    record = nvml_records.pcie_quad()
    scan = pci_scan(*[(f"0000:{bus:02x}:00.0", "0x26b9", "nvidia") for bus in (0x17, 0x18, 0xCA, 0xCB)])
    scan["devices"][1].update(numa_node="0", local_cpulist="0-55,112-167", current_link_width="16", max_link_width="16")
    topo = build_topology(Facts(make_evidence(nvml_json=record, pci_devices_json=scan)))
    gpu = topo.gpu(1)
    assert (gpu.pcie.width_current, gpu.pcie.source) == (8, "nvml")
    assert gpu.cpu_affinity == "0-55,112-167" and gpu.numa_node == 0
    assert topo.pair(0, 1).path == "PIX" and topo.pair(0, 1).path_source == "nvml"


def test_printed_matrix_beats_nvml_for_the_path_words():
    """The real 8-GPU two-socket matrix with a SYNTHETIC NVML record of four GPUs: topo -m's words win."""
    evidence = make_evidence(
        nvml_json=nvml_records.pcie_quad(),
        nvidia_smi_topo_m_txt=fixture_text("B/nccl-1439-8gpu-pcie-pix-phb-sys-2socket.txt"),
    )
    topo = build_topology(Facts(evidence))
    assert [gpu.index for gpu in topo.gpus] == [0, 1, 2, 3]  # the driver's GPUs, not the pasted matrix's
    assert topo.pair(2, 3).path == "PIX" and topo.pair(2, 3).path_source == "nvidia-smi topo -m"


def test_nics_and_their_nearest_gpus_from_the_matrix():
    topo = build_topology(
        Facts(
            make_evidence(
                nvidia_smi_topo_m_txt=fixture_text(
                    "B/nchc-nano4-8x-h200-nv18-10nics-slurm-cgroup-cpu-affinity-empty.txt"
                )
            )
        )
    )
    nearest = {nic.name: nic.nearest_gpus for nic in topo.nics}
    assert nearest["mlx5_0"] == [0] and nearest["mlx5_9"] == [7] and nearest["mlx5_1"] == []
    assert topo.nics_links[(0, "NIC0")] == "PIX"


@given(
    st.dictionaries(
        st.sampled_from(["cpu-topology.json", "fabricmanager.txt", "nvml.json", "pci-devices.json"]),
        json_like(),
        max_size=4,
    )
)
def test_any_json_in_the_topology_sources_never_breaks_the_merge(sources):
    evidence = make_evidence(**{name.replace("-", "_").replace(".", "_"): value for name, value in sources.items()})
    topo = build_topology(Facts(evidence))
    assert isinstance(topo.gpus, list)


def test_nvswitch_fabric_present_inferred_or_none():
    from dataclasses import replace

    from gpudoctor.facts.topology import nvswitch_fabric
    from gpudoctor.facts.topology_model import GpuPair, MachineTopology, TopoGpu
    from gpudoctor.kb.gpu_specs import max_nvlinks_per_gpu
    from tests.synthetic.topologies import synthetic_dgx1_v100, synthetic_h100_nvswitch

    most = max_nvlinks_per_gpu()  # the most NVLinks any GPU has (kb/data/nvlink.json)
    assert most is not None and 2 <= most < 7 * 18
    h100 = synthetic_h100_nvswitch()
    assert nvswitch_fabric(h100) == "present"
    bare = replace(h100, nvswitches=0)  # NV18 to 7 peers is 126 links on one GPU: only a switch does that
    assert nvswitch_fabric(bare) == "inferred"
    assert nvswitch_fabric(synthetic_dgx1_v100()) is None  # hybrid cube mesh: some pairs are SYS
    # One link more on GPU 0 than any GPU has needs a switch; exactly as many could still be direct cabling.
    first = most // 2
    three = MachineTopology(
        gpus=[TopoGpu(i) for i in range(3)],
        pairs=[GpuPair(0, 1, f"NV{first}"), GpuPair(0, 2, f"NV{most + 1 - first}"), GpuPair(1, 2, "NV1")],
    )
    assert nvswitch_fabric(three) == "inferred"
    three = replace(three, pairs=[three.pairs[0], replace(three.pairs[1], path=f"NV{most - first}"), three.pairs[2]])
    assert nvswitch_fabric(three) is None
    assert nvswitch_fabric(three, {0}) is None  # one GPU meets nobody
