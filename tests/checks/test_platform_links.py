"""PLAT003 (the interconnect the instance type has) and ``kb.cloud_instances.nvlink_expected``.

Every record here is SYNTHETIC: platform.json from ``synthetic_platform`` (the DMI of an AWS Nitro instance),
``nvidia-smi topo -m`` and ``nvidia-smi nvlink -s`` text printed by :func:`synthetic_topo_m` /
:func:`synthetic_nvlink_s` from the hand-written topologies of ``tests/synthetic/topologies.py``, and a
systemctl line for the fabric manager.  The checks read them through the real parsers.  What each type has is
read from the knowledge base itself, never restated here.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.api import Severity
from gpudoctor.facts.topology_model import GpuPair, MachineTopology, NvLinkPort, NvLinkState
from gpudoctor.kb.cloud_instances import InstanceType, instance_type, instance_types, nvlink_expected
from gpudoctor.results import Status
from gpudoctor_checks import platform_links as links
from tests.checks.test_platform_checks import synthetic_azure_platform, synthetic_platform
from tests.synthetic.evidence import judge, make_evidence
from tests.synthetic.topologies import (
    synthetic_dgx1_v100,
    synthetic_h100_nvswitch,
    synthetic_pcie_8gpu_2socket,
)

A100_40GB = "NVIDIA A100-SXM4-40GB"
# SYNTHETIC systemctl show lines (the shape facts.topology.fabric_manager_state reads): the service running.
SYNTHETIC_FM_ACTIVE = "LoadState=loaded\nActiveState=active\nSubState=running\n"


def synthetic_topo_m(topo: MachineTopology) -> str:
    """SYNTHETIC ``nvidia-smi topo -m`` text (tab-separated, as nvidia-smi writes it) of a topology's GPU pairs."""
    indices = [gpu.index for gpu in topo.gpus]
    lines = ["\t" + "\t".join(f"GPU{i}" for i in indices) + "\tCPU Affinity\tNUMA Affinity"]
    for gpu in topo.gpus:
        cells = [
            "X" if other == gpu.index else (topo.pair(gpu.index, other) or GpuPair(0, 0)).path for other in indices
        ]
        lines.append(
            f"GPU{gpu.index}\t" + "\t".join(c or "SYS" for c in cells) + f"\t{gpu.cpu_affinity}\t{gpu.numa_node}"
        )
    return "\n".join(lines) + "\n"


def synthetic_nvlink_s(topo: MachineTopology) -> str:
    """SYNTHETIC ``nvidia-smi nvlink -s`` text of a topology's NVLink ports (25 GB/s up, <inactive> down)."""
    lines = []
    for gpu in topo.gpus:
        lines.append(f"GPU {gpu.index}: {gpu.name} (UUID: GPU-synthetic-{gpu.index})")
        for port in gpu.nvlink.ports if gpu.nvlink else []:
            lines.append(f"\t Link {port.link}: {'25 GB/s' if port.active else '<inactive>'}")
    return "\n".join(lines) + "\n"


def synthetic_p4d(sys_pairs: tuple[tuple[int, int], ...] = (), down: dict[int, tuple[int, ...]] | None = None):
    """SYNTHETIC 8× A100 SXM4 40GB through NVSwitches (NV12 between every pair, 12 links each): the H100 builder's
    machine with A100s; ``sys_pairs`` over SYS instead, ``down`` links inactive per GPU."""
    base = synthetic_h100_nvswitch()
    down = down or {}
    gpus = [
        replace(
            gpu,
            name=A100_40GB,
            nvlink=NvLinkState([NvLinkPort(n, n not in down.get(gpu.index, ()), 3) for n in range(12)], "nvml"),
        )
        for gpu in base.gpus
    ]
    pairs = [replace(pair, path="SYS" if (pair.a, pair.b) in sys_pairs else "NV12") for pair in base.pairs]
    return replace(base, gpus=gpus, pairs=pairs)


def evidence_for(product: str, topo: MachineTopology | None, nvlink: bool = True, **more: object):
    sources: dict[str, object] = {"platform_json": synthetic_platform(product), **more}
    if topo is not None:
        sources["nvidia_smi_topo_m_txt"] = synthetic_topo_m(topo)
        if nvlink:
            sources["nvidia_smi_nvlink_s_txt"] = synthetic_nvlink_s(topo)
    return make_evidence(**sources)


def test_synthetic_p4d_precondition_the_kb_says_nvswitch() -> None:
    row = instance_type("aws", "p4d.24xlarge")
    assert row is not None and nvlink_expected(row) is True and links.links_every_pair(row.gpu_interconnect)


def test_synthetic_p4d_with_a_full_nv12_matrix_is_ok() -> None:
    result = judge(links.instance_interconnect, evidence_for("p4d.24xlarge", synthetic_p4d()))
    assert result.status is Status.OK, result.summary
    assert "28 GPU pairs linked by NVLink (NV12)" in result.summary and "96 of 96 NVLinks up" in result.summary
    assert result.data["pairs_judged"] == 28 and result.data["pairs_over_pcie"] == []
    assert result.data["expected_interconnect"] == instance_type("aws", "p4d.24xlarge").gpu_interconnect


def test_synthetic_p4d_with_two_pairs_over_sys_is_a_problem_naming_them() -> None:
    topo = synthetic_p4d(sys_pairs=((0, 3), (1, 2)))
    result = judge(links.instance_interconnect, evidence_for("p4d.24xlarge", topo))
    assert result.status is Status.PROBLEM
    [finding] = result.findings
    assert finding.severity is Severity.PROBLEM
    assert finding.message.startswith("AWS p4d.24xlarge's 8× NVIDIA A100")
    assert "linked by NVSwitch;" in finding.message
    assert "2 GPU pairs over PCIe only: GPU0↔GPU3, GPU1↔GPU2 (SYS)" in finding.message
    assert "GPU0↔GPU1" not in finding.message
    assert "TOPO003" in finding.message and "TOPO004" in finding.message
    assert result.data["pairs_over_pcie"] == [{"a": 0, "b": 3, "path": "SYS"}, {"a": 1, "b": 2, "path": "SYS"}]
    # The fabric manager is not known to run: its fix first (the topology checks' own), then the host's.
    assert any("nvidia-fabricmanager" in command for command in finding.fix.commands)
    assert "stop and start the instance" in finding.fix.summary and "AWS support" in finding.fix.summary


def test_synthetic_p4d_with_links_down_and_the_fabric_manager_running_gets_the_stop_start_fix() -> None:
    topo = synthetic_p4d(down={2: (4, 5)})
    evidence = evidence_for("p4d.24xlarge", topo, fabricmanager_txt=SYNTHETIC_FM_ACTIVE)
    result = judge(links.instance_interconnect, evidence)
    assert result.status is Status.PROBLEM
    [finding] = result.findings
    assert "GPU 2: NVLink 4, 5 down (10 of 12 up)" in finding.message
    assert result.data["links_down"] == {"2": [4, 5]}
    assert not finding.fix.commands and "stop and start the instance" in finding.fix.summary
    assert finding.fix.url and "stop-start" in finding.fix.url


def test_synthetic_p4d_with_all_links_inactive_from_nvlink_s_alone_is_a_problem() -> None:
    # SYNTHETIC nvidia-smi nvlink -s lines in the shape nvidia-smi prints when no link of a GPU is up.
    text = "".join(
        f"GPU {i}: {A100_40GB} (UUID: GPU-synthetic-{i})\n"
        "NVML: Unable to retrieve NVLink information as all links are inActive\n"
        for i in range(8)
    )
    evidence = make_evidence(platform_json=synthetic_platform("p4d.24xlarge"), nvidia_smi_nvlink_s_txt=text)
    result = judge(links.instance_interconnect, evidence)
    assert result.status is Status.PROBLEM
    assert "GPU 0: no NVLink up" in result.summary and "GPU 7: no NVLink up" in result.summary
    assert result.data["gpus_without_links_up"] == list(range(8))


def test_synthetic_p4d_without_topology_is_not_applicable_saying_what_settles_it() -> None:
    result = judge(links.instance_interconnect, evidence_for("p4d.24xlarge", None))
    assert result.status is Status.NOT_APPLICABLE
    assert "`nvidia-smi topo -m`" in result.summary and "`nvidia-smi nvlink -s`" in result.summary


def test_synthetic_p4d_matrix_without_link_state_is_judged_by_its_pairs() -> None:
    result = judge(links.instance_interconnect, evidence_for("p4d.24xlarge", synthetic_p4d(), nvlink=False))
    assert result.status is Status.OK
    assert "the state of each link was not collected (`nvidia-smi nvlink -s`" in result.summary


def test_synthetic_g5_12xlarge_without_a_documented_interconnect_is_not_applicable() -> None:
    row = instance_type("aws", "g5.12xlarge")
    assert row is not None and row.whole_gpus == 4 and nvlink_expected(row) is None
    pcie = synthetic_pcie_8gpu_2socket()
    four = replace(pcie, gpus=pcie.gpus[:4], pairs=[p for p in pcie.pairs if p.b < 4])
    result = judge(links.instance_interconnect, evidence_for("g5.12xlarge", four))
    assert result.status is Status.NOT_APPLICABLE
    assert "states no GPU interconnect" in result.summary and "not the same as PCIe only" in result.summary


def test_synthetic_one_gpu_type_and_unknown_types_are_not_applicable() -> None:
    one = judge(links.instance_interconnect, evidence_for("g5.xlarge", synthetic_p4d()))
    assert one.status is Status.NOT_APPLICABLE and "no GPU pair" in one.summary
    unknown = judge(links.instance_interconnect, evidence_for("r7iz.large", synthetic_p4d()))
    assert unknown.status is Status.NOT_APPLICABLE
    bare = judge(links.instance_interconnect, make_evidence(nvidia_smi_topo_m_txt=synthetic_topo_m(synthetic_p4d())))
    assert bare.status is Status.NOT_APPLICABLE


def test_synthetic_amd_infinity_fabric_type_is_not_judged_as_nvlink() -> None:
    row = next((r for r in instance_types("azure") if r.gpu_vendor == "amd" and r.gpu_interconnect), None)
    assert row is not None and nvlink_expected(row) is False
    evidence = make_evidence(platform_json=synthetic_azure_platform(row.name))
    result = judge(links.instance_interconnect, evidence)
    assert result.status is Status.NOT_APPLICABLE and "not NVLink" in result.summary


def _p3_16xlarge() -> InstanceType:
    row = instance_type("aws", "p3.16xlarge")
    assert row is not None and nvlink_expected(row) is True and not links.links_every_pair(row.gpu_interconnect)
    return row


def test_synthetic_p3_hybrid_cube_mesh_sys_pairs_are_the_design_not_a_fault() -> None:
    _p3_16xlarge()
    result = judge(links.instance_interconnect, evidence_for("p3.16xlarge", synthetic_dgx1_v100()))
    assert result.status is Status.OK, result.summary
    assert "each of 8 GPUs reaches another over NVLink (NV1, NV2)" in result.summary
    assert "12 pairs over PCIe" in result.summary


def test_synthetic_p3_gpu_with_no_nvlink_peer_is_a_problem() -> None:
    _p3_16xlarge()
    mesh = synthetic_dgx1_v100()
    cut = replace(mesh, pairs=[replace(p, path="SYS") if 5 in (p.a, p.b) else p for p in mesh.pairs])
    result = judge(links.instance_interconnect, evidence_for("p3.16xlarge", cut, nvlink=False))
    assert result.status is Status.PROBLEM
    assert "GPU 5 reaches no other GPU over NVLink, only over PCIe (SYS)" in result.summary
    assert "TOPO004" not in result.summary  # no NVSwitch on this type: no fabric manager to point to
    assert result.data["gpus_without_nvlink_peer"] == [5]
    assert not result.findings[0].fix.commands and "stop and start" in result.findings[0].fix.summary


def test_nvlink_expected_agrees_with_every_kb_row() -> None:
    for row in instance_types():
        verdict = nvlink_expected(row)
        if row.gpu_interconnect is None:
            assert verdict is None, row.name
        else:
            assert verdict is ("nvlink" in row.gpu_interconnect.lower() or "nvswitch" in row.gpu_interconnect.lower())


@given(st.one_of(st.none(), st.text(max_size=80)))
def test_nvlink_expected_and_every_pair_take_any_text(text: str | None) -> None:
    row = InstanceType("aws", "synthetic.row", "nvidia", "NVIDIA A100", 8, gpu_interconnect=text, source="x")
    assert nvlink_expected(row) in (True, False, None)
    assert isinstance(links.links_every_pair(text), bool)


@given(st.text(max_size=400), st.text(max_size=400))
def test_synthetic_garbage_topology_and_link_text_never_crash(topo: str, nvlink: str) -> None:
    evidence = make_evidence(
        platform_json=synthetic_platform("p4d.24xlarge"), nvidia_smi_topo_m_txt=topo, nvidia_smi_nvlink_s_txt=nvlink
    )
    result = judge(links.instance_interconnect, evidence)
    assert result.status in (Status.OK, Status.PROBLEM, Status.NOT_APPLICABLE)
