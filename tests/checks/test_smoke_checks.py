"""SMOKE checks per scenario: acceleration real or not, matmul vs spec, training, links, peers, all-reduce.

The machine side of each scenario is REAL: nvidia-smi captures (tables, XML, topology matrices) and an
lspci link-status excerpt from ``../shared/fixtures``.  The smoke side is the real CPU record
(``tests/recorded/cpu-container-debian/smoke-torch.json``, when recorded) or a SYNTHETIC record
(``tests/synthetic/smoke_json.py``) for what only a GPU machine could print.  Putting them together is a
composed scenario ("this run on that machine"), which is what the checks judge.
"""

from __future__ import annotations

import copy
import json
import pathlib

import pytest

from gpudoctor.api import Severity
from gpudoctor.facts.lspci import parse_link_status
from gpudoctor.results import Status
from gpudoctor_checks import smoke
from tests.helpers.fixtures import real_fixtures_dir
from tests.synthetic import smoke_json as synthetic
from tests.synthetic.evidence import NO_GPU_SCAN, make_evidence, run

RECORDED = pathlib.Path(__file__).resolve().parent.parent / "recorded" / "cpu-container-debian" / "smoke-torch.json"
CHECKS = (
    smoke.acceleration_real,
    smoke.matmul_vs_spec,
    smoke.cnn_trains,
    smoke.bandwidth_vs_link,
    smoke.peer_to_peer,
    smoke.allreduce_works,
)

H100_X8_TABLE = "C/gls-8x-h100-sxm-565.57.01.txt"  # 8x H100 80GB HBM3, GPU 0 at 0000:18:00.0, 700 W cap
H100_X8_TOPO = "B/stas00-mleng-8x-h100-nv18-ht-affinity.txt"  # every pair NV18, NUMA 0/1
RTX3090_XML = "A/telegraf-rtx3090-525.147.05-v12.txt"  # power limit 200 W of default 350 W; idle at Gen1 of Gen4
GTX1050_XML = "A/datakit-gtx1050-515.65.01-nodtd.txt"  # PCIe Gen3, link x8 of x16
V100S_X8_XML = "A/datakit-8x-tesla-v100s-pcie-460.73.01-v11.txt"  # under load: python PID 37305 on each GPU
P100_X2_XML = "A/hadoop-2x-tesla-p100-pcie-375.66-v8-asf-header.txt"  # 2x P100 at 0000:04:00.0, 0000:82:00.0
PHB_TOPO = "B/stas00-mleng-2gpu-phb.txt"
RISER_LSPCI = "D/lspci-lnkcap-lnksta-rtx4090-riser-downgraded-2.5GTs-jan-183.txt"  # LnkSta 2.5GT/s of 16GT/s


def _real(name: str) -> str:
    path = real_fixtures_dir() / name
    if not path.is_file():
        pytest.skip(f"real fixture {path} not found")
    return path.read_text(encoding="utf-8", errors="replace")


def _messages(outcome) -> str:
    return "\n".join([outcome.summary] + [f.message for f in outcome.findings])


def _commands(outcome) -> list[str]:
    return [c for f in outcome.findings if f.fix for c in f.fix.commands]


# ----------------------------------------------------------------------------- no smoke run


@pytest.mark.parametrize("spec", CHECKS, ids=lambda s: s.code)
def test_every_check_is_not_applicable_without_a_smoke_run(spec):
    outcome = run(spec, make_evidence(nvidia_smi_txt=_real(H100_X8_TABLE)))
    assert outcome.status is Status.NOT_APPLICABLE
    assert "gpudoctor smoke" in outcome.summary and "check --smoke" in outcome.summary


@pytest.mark.parametrize("spec", CHECKS, ids=lambda s: s.code)
def test_every_check_has_the_three_doc_sections(spec):
    doc = spec.doc
    assert doc.index("What it checks:") < doc.index("Why it matters:") < doc.index("How to fix:")
    assert spec.area == "smoke" and spec.code.startswith("SMOKE")


# ----------------------------------------------------------------------------- SMOKE001


def test_cpu_only_machine_is_a_baseline_not_a_failure():
    record = json.loads(RECORDED.read_text()) if RECORDED.is_file() else synthetic.SYNTHETIC_SMOKE_CPU_ONLY_ON_GPU_BOX
    evidence = make_evidence(smoke_json=record, pci_devices_json=NO_GPU_SCAN)
    outcome = run(smoke.acceleration_real, evidence)
    assert outcome.status is Status.OK
    cpu_fp32 = next(r["tflops"] for r in record["matmul"] if r["device"] == "cpu" and r["dtype"] == "fp32")
    assert outcome.summary.startswith("CPU baseline: ")
    assert f"{cpu_fp32:.2f} TFLOP/s fp32 matmul" in outcome.summary or f"{cpu_fp32:.1f} TFLOP/s" in outcome.summary
    assert "no GPU on this machine" in outcome.summary
    assert outcome.data["cpu_matmul_tflops"] == cpu_fp32
    threads = next(d["threads"] for d in record["devices"] if d["id"] == "cpu")
    assert f"on {threads} thread" in outcome.summary and outcome.data["cpu_threads"] == threads
    for spec in (smoke.matmul_vs_spec, smoke.bandwidth_vs_link, smoke.peer_to_peer):
        assert run(spec, evidence).status is Status.NOT_APPLICABLE


def test_gpu_visible_but_the_smoke_ran_on_the_cpu_only():
    evidence = make_evidence(
        nvidia_smi_txt=_real(H100_X8_TABLE), smoke_json=synthetic.SYNTHETIC_SMOKE_CPU_ONLY_ON_GPU_BOX
    )
    outcome = run(smoke.acceleration_real, evidence)
    assert outcome.status is Status.PROBLEM
    assert "ran only on the CPU" in outcome.summary and "8× NVIDIA H100 80GB HBM3" in outcome.summary
    assert _commands(outcome) == ["gpudoctor check"]


def test_cpu_only_because_cuda_visible_devices_hides_the_gpus():
    evidence = make_evidence(
        nvidia_smi_txt=_real(H100_X8_TABLE),
        smoke_json=synthetic.SYNTHETIC_SMOKE_CPU_ONLY_ON_GPU_BOX,
        env_json={"variables": {"CUDA_VISIBLE_DEVICES": ""}, "present": []},
    )
    outcome = run(smoke.acceleration_real, evidence)
    assert outcome.status is Status.PROBLEM
    assert "CUDA_VISIBLE_DEVICES='' hides every GPU" in outcome.summary
    assert _commands(outcome)[0] == "unset CUDA_VISIBLE_DEVICES"


def test_the_frameworks_own_words_are_quoted_when_it_saw_no_gpu():
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_CPU_ONLY_ON_GPU_BOX)
    record["errors"] = {"cuda": "CUDA driver initialization failed, you might not have a CUDA gpu."}
    outcome = run(smoke.acceleration_real, make_evidence(nvidia_smi_txt=_real(H100_X8_TABLE), smoke_json=record))
    assert outcome.status is Status.PROBLEM
    assert '(cuda): "CUDA driver initialization failed, you might not have a CUDA gpu."' in outcome.summary


def test_acceleration_confirmed_with_speedups():
    evidence = make_evidence(nvidia_smi_txt=_real(H100_X8_TABLE), smoke_json=synthetic.SYNTHETIC_SMOKE_H100_HEALTHY)
    outcome = run(smoke.acceleration_real, evidence)
    assert outcome.status is Status.OK
    # bf16 733 / CPU fp32 1.9 = 386x; fp32 51.2 / 1.9 = 27x; CNN amp 512 / 12.5 = 41x.
    assert outcome.summary == (
        "Acceleration confirmed on cuda:0 (NVIDIA H100 80GB HBM3): matmul 386× the CPU "
        "(bf16; fp32 against fp32 27×), CNN step 41× (amp); CPU baseline on 32 threads"
    )
    assert outcome.data["matmul_speedup"] == pytest.approx(385.79, abs=0.01)
    assert outcome.data["cnn_speedup"] == pytest.approx(40.96)
    # The run used one of the eight GPUs the driver lists: said, not judged.
    assert [f.severity for f in outcome.findings] == [Severity.INFO]


def test_a_gpu_slower_than_the_cpu_is_a_problem():
    record = synthetic.single_gpu_bandwidth("NVIDIA GeForce GTX 1050", "0000:01:00.0", 6.4, 6.6, "6.1", matmul_fp32=1.7)
    outcome = run(smoke.acceleration_real, make_evidence(nvidia_smi_q_x_xml=_real(GTX1050_XML), smoke_json=record))
    assert outcome.status is Status.PROBLEM
    assert "slower than the CPU" in outcome.summary and "1.70 TFLOP/s" in outcome.summary


def test_every_accelerator_workload_failing_is_quoted():
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_H100_SLOW)
    error = "CUDA error: no kernel image is available for execution on the device"
    for row in record["matmul"] + record["cnn"]:
        if row["device"] == "cuda:0":
            row.update(tflops=None, steps_per_s=None, loss_decreased=None, loss_last=None, error=error)
    outcome = run(smoke.acceleration_real, make_evidence(nvidia_smi_txt=_real(H100_X8_TABLE), smoke_json=record))
    assert outcome.status is Status.PROBLEM
    assert error in outcome.summary


@pytest.mark.parametrize(
    ("record", "status", "words"),
    [
        ({"installed": False}, Status.WARNING, "is not installed in /home/ada/venv/bin/python"),
        (
            {"installed": True, "import_ok": False, "import_error": {"type": "OSError", "message": "libcudnn.so.9: x"}},
            Status.PROBLEM,
            "`import torch` fails",
        ),
    ],
)
def test_a_run_that_could_not_load_the_framework(record, status, words):
    base = {"probe": "smoke", "probe_version": 1, "python": synthetic.SYNTHETIC_PYTHON, "framework": "torch"}
    outcome = run(smoke.acceleration_real, make_evidence(smoke_json=dict(base, **record)))
    assert outcome.status is status and words in outcome.summary
    assert run(smoke.cnn_trains, make_evidence(smoke_json=dict(base, **record))).status is Status.NOT_APPLICABLE


def test_a_crashed_run_is_a_problem():
    outcome = run(smoke.acceleration_real, make_evidence(smoke_json="Segmentation fault (core dumped)"))
    assert outcome.status is Status.PROBLEM and outcome.summary.startswith("the smoke run crashed")


# ----------------------------------------------------------------------------- SMOKE002


def test_h100_matmul_at_30_percent_of_spec_is_a_warning():
    evidence = make_evidence(nvidia_smi_txt=_real(H100_X8_TABLE), smoke_json=synthetic.SYNTHETIC_SMOKE_H100_SLOW)
    outcome = run(smoke.matmul_vs_spec, evidence)
    assert outcome.status is Status.WARNING
    assert "fp32 20.1 TFLOP/s is 30% of the 67 of its spec" in outcome.summary
    assert "bf16 297 TFLOP/s is 30% of the 989 of its spec" in outcome.summary
    # The plain table shows no process and no lowered cap: the warning says the cause is not in the evidence.
    assert "shows no cause" in outcome.summary
    commands = _commands(outcome)
    assert "nvidia-smi -q -d PERFORMANCE -i 0" in commands
    assert "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv" in commands


def test_healthy_h100_is_reported_against_its_spec():
    evidence = make_evidence(nvidia_smi_txt=_real(H100_X8_TABLE), smoke_json=synthetic.SYNTHETIC_SMOKE_H100_HEALTHY)
    outcome = run(smoke.matmul_vs_spec, evidence)
    assert outcome.status is Status.OK
    assert "fp32 51.2 TFLOP/s (76% of 67)" in outcome.summary and "tf32 372 TFLOP/s (75% of 494.7)" in outcome.summary
    assert outcome.data["devices"]["cuda:0"]["spec"] == "H100 SXM5"


def test_a_lowered_power_limit_is_named_with_the_command_that_restores_it():
    record = synthetic.single_gpu_bandwidth(
        "NVIDIA GeForce RTX 3090", "0000:00:10.0", 24.5, 25.1, "8.6", matmul_fp32=10.0
    )
    outcome = run(smoke.matmul_vs_spec, make_evidence(nvidia_smi_q_x_xml=_real(RTX3090_XML), smoke_json=record))
    assert outcome.status is Status.WARNING
    assert "the power limit is 200 W, below the board's default 350 W" in outcome.summary
    assert "sudo nvidia-smi -i 0 -pl 350" in _commands(outcome)
    assert outcome.findings[0].fix.needs_root


def test_other_processes_and_a_power_cap_on_a_busy_v100s():
    # GPU 5 of the real capture has sw_power_cap Active; every GPU runs the same python training job.
    text = _real(V100S_X8_XML)
    from gpudoctor.facts.gpu_state import parse_gpu_states_xml

    states = parse_gpu_states_xml(text)
    busy = next(s for s in states if "sw_power_cap" in s.clock_reasons_active)
    device = {
        "id": "cuda:0",
        "kind": "cuda",
        "name": "Tesla V100S-PCIE-32GB",
        "capability": "7.0",
        "memory_total_mib": 32510,
        "memory_free_mib": 800,
        "pci_bus_id": busy.bus_id,
    }
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_H100_SLOW)
    record["devices"][1] = device
    evidence = make_evidence(nvidia_smi_q_x_xml=text, smoke_json=record)
    outcome = run(smoke.matmul_vs_spec, evidence)
    # No V100S row in the spec table (V100S is not the V100): measured, nothing to compare.
    assert outcome.status is Status.OK and "no spec sheet" in outcome.summary
    # The same GPU named as the V100 PCIe it is not would be judged; the causes come from the XML.
    record["devices"][1]["name"] = "Tesla V100-PCIE-32GB"
    record["matmul"] = [r for r in record["matmul"] if r["dtype"] == "fp32"]
    record["matmul"][1]["tflops"] = 4.0
    outcome = run(smoke.matmul_vs_spec, make_evidence(nvidia_smi_q_x_xml=text, smoke_json=record))
    assert outcome.status is Status.WARNING
    text_out = _messages(outcome)
    assert "software power cap" in text_out
    assert "other processes were using this GPU: python (PID 37305" in text_out
    assert "only 800 of 32510 MiB were free" in text_out


def test_tf32_at_the_fp32_rate_means_tf32_is_off():
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_H100_HEALTHY)
    next(r for r in record["matmul"] if r["device"] == "cuda:0" and r["dtype"] == "tf32")["tflops"] = 52.0
    outcome = run(smoke.matmul_vs_spec, make_evidence(nvidia_smi_txt=_real(H100_X8_TABLE), smoke_json=record))
    assert outcome.status is Status.WARNING
    assert "tf32 ran at the fp32 rate: TF32 is switched off" in outcome.summary
    assert "fp32" not in outcome.summary.split("below half of its spec sheet")[1].split(". Likely")[0]


def test_small_matrices_in_quick_mode_are_named_as_a_cause():
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_H100_SLOW)
    for row in record["matmul"]:
        row["n"] = 2048
    outcome = run(smoke.matmul_vs_spec, make_evidence(nvidia_smi_txt=_real(H100_X8_TABLE), smoke_json=record))
    assert "n=2048 may be too small" in outcome.summary and "--full" in outcome.summary


# ----------------------------------------------------------------------------- SMOKE003


def test_cnn_that_trains():
    outcome = run(smoke.cnn_trains, make_evidence(smoke_json=synthetic.SYNTHETIC_SMOKE_H100_HEALTHY))
    assert outcome.status is Status.OK
    assert "cuda:0 amp 2.31 → 0.42" in outcome.summary


def test_cnn_errors_are_quoted_verbatim():
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_H100_HEALTHY)
    error = (
        "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a "
        "non-contiguous input."
    )
    record["cnn"][1].update(error=error, steps_per_s=None, loss_last=None, loss_decreased=None)
    outcome = run(smoke.cnn_trains, make_evidence(smoke_json=record))
    assert outcome.status is Status.PROBLEM
    assert f'"{error}"' in outcome.summary
    assert "cuDNN failed" in outcome.findings[0].fix.summary


def test_a_loss_that_does_not_fall_is_a_problem():
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_H100_HEALTHY)
    record["cnn"][2].update(loss_last=None, loss_decreased=False)  # amp: the loss became NaN
    outcome = run(smoke.cnn_trains, make_evidence(smoke_json=record))
    assert outcome.status is Status.PROBLEM
    assert "cuda:0 (NVIDIA H100 80GB HBM3) amp" in outcome.summary
    assert "2.31 → not a finite number" in outcome.summary


# ----------------------------------------------------------------------------- SMOKE004


def test_a_link_trained_down_to_x8_is_a_warning():
    record = synthetic.single_gpu_bandwidth("NVIDIA GeForce GTX 1050", "0000:01:00.0", 6.4, 6.6, "6.1")
    outcome = run(smoke.bandwidth_vs_link, make_evidence(nvidia_smi_q_x_xml=_real(GTX1050_XML), smoke_json=record))
    assert outcome.status is Status.WARNING
    assert "fits the Gen3 x8 link it is on, but the GPU and slot can do Gen3 x16" in outcome.summary
    assert "trained down to x8 of its x16" in outcome.summary
    assert outcome.data["cuda:0"]["link"]["rate_now_gbps"] == pytest.approx(7.875)


def test_an_idle_downclocked_link_that_trains_up_under_load_is_fine():
    record = synthetic.single_gpu_bandwidth("NVIDIA GeForce RTX 3090", "0000:00:10.0", 24.5, 25.1, "8.6")
    outcome = run(smoke.bandwidth_vs_link, make_evidence(nvidia_smi_q_x_xml=_real(RTX3090_XML), smoke_json=record))
    assert outcome.status is Status.OK
    assert "80% of the Gen4 x16 link (31.5 GB/s)" in outcome.summary
    assert any(
        "showed Gen1 x16 when the evidence was read, slowed down while idle" in f.message for f in outcome.findings
    )


def test_a_link_stuck_at_gen1_under_load_is_a_warning():
    record = synthetic.single_gpu_bandwidth("NVIDIA GeForce RTX 3090", "0000:00:10.0", 3.3, 3.2, "8.6")
    outcome = run(smoke.bandwidth_vs_link, make_evidence(nvidia_smi_q_x_xml=_real(RTX3090_XML), smoke_json=record))
    assert outcome.status is Status.WARNING
    assert "runs at Gen1 of its Gen4 and stayed there under load" in outcome.summary
    assert "nvidia-smi -q -d PCIE -i 0" in _commands(outcome)


def test_riser_link_from_sysfs_with_low_pinned_bandwidth():
    # The link speeds are the real lspci LnkCap/LnkSta of an RTX 4090 on a riser; the sysfs scan record that
    # carries them is SYNTHETIC (the shape of gpudoctor's own scan_pci).
    link = parse_link_status(_real(RISER_LSPCI))
    assert link["sta_speed_gts"] == 2.5 and link["cap_speed_gts"] == 16.0
    scan = {
        "readable": True,
        "scanned": 4,
        "dmi": {},
        "devices": [
            {
                "address": "0000:01:00.0",
                "vendor": "0x10de",
                "device": "0x2684",
                "class": "0x030000",
                "driver": "nvidia",
                "numa_node": "-1",
                "current_link_speed": f"{link['sta_speed_gts']} GT/s PCIe",
                "current_link_width": str(link["sta_width"]),
                "max_link_speed": f"{link['cap_speed_gts']} GT/s PCIe",
                "max_link_width": str(link["cap_width"]),
            }
        ],
    }
    record = synthetic.single_gpu_bandwidth("NVIDIA GeForce RTX 4090", "0000:01:00.0", 3.1, 3.3)
    outcome = run(smoke.bandwidth_vs_link, make_evidence(pci_devices_json=scan, smoke_json=record))
    assert outcome.status is Status.WARNING
    assert "Gen1 x16 link it is on, but the GPU and slot can do Gen4 x16" in outcome.summary
    assert outcome.data["cuda:0"]["link"]["source"] == "sysfs"


def test_low_bandwidth_on_a_full_link_names_the_numa_node():
    record = synthetic.eight_h100([], synthetic.nccl(362.0))
    record["bandwidth"] = [
        {
            "device": "cuda:4",
            "direction": "h2d",
            "memory": "pinned",
            "bytes": 268435456,
            "repeats": 10,
            "gbps": 21.0,
            "error": None,
            "skipped": None,
        }
    ]
    evidence = make_evidence(
        nvidia_smi_txt=_real(H100_X8_TABLE), nvidia_smi_topo_m_txt=_real(H100_X8_TOPO), smoke_json=record
    )
    outcome = run(smoke.bandwidth_vs_link, evidence)
    assert outcome.status is Status.WARNING
    # The table has no link: judged against the Gen5 x16 the H100 SXM is built for (63 GB/s).
    assert "33% of the Gen5 x16 link" in outcome.summary
    assert "hangs off node 1" in outcome.summary
    assert "numactl --cpunodebind=1 --membind=1 gpudoctor smoke" in _commands(outcome)


def test_device_memory_copy_against_the_spec():
    evidence = make_evidence(nvidia_smi_txt=_real(H100_X8_TABLE), smoke_json=synthetic.SYNTHETIC_SMOKE_H100_HEALTHY)
    outcome = run(smoke.bandwidth_vs_link, evidence)
    assert outcome.status is Status.OK
    assert any("device memory copy 1350 GB/s (40% of the memory's 3350 GB/s" in f.message for f in outcome.findings)
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_H100_HEALTHY)
    record["bandwidth"][3]["gbps"] = 300.0
    outcome = run(smoke.bandwidth_vs_link, make_evidence(nvidia_smi_txt=_real(H100_X8_TABLE), smoke_json=record))
    assert outcome.status is Status.WARNING and "device memory copy 300 GB/s is 9%" in outcome.summary


# ----------------------------------------------------------------------------- SMOKE005 and SMOKE006


def _eight(pairs, allreduce):
    return make_evidence(
        nvidia_smi_txt=_real(H100_X8_TABLE),
        nvidia_smi_topo_m_txt=_real(H100_X8_TOPO),
        smoke_json=synthetic.eight_h100(pairs, allreduce),
    )


def test_nvlink_pairs_and_allreduce_at_speed():
    evidence = _eight([synthetic.p2p(0, j, True, 372.0) for j in range(1, 8)], synthetic.nccl(362.0))
    outcome = run(smoke.peer_to_peer, evidence)
    assert outcome.status is Status.OK and "cuda:0→cuda:1 (NV18) 372 GB/s" in outcome.summary
    allreduce = run(smoke.allreduce_works, evidence)
    assert allreduce.status is Status.OK
    assert "busbw 362 GB/s (80% of NVLink (450 GB/s per direction))" in allreduce.summary


def test_an_nvlink_pair_copying_slower_than_pcie_and_a_slow_allreduce():
    pairs = [synthetic.p2p(0, j, True, 372.0) for j in range(1, 8)]
    pairs[2] = synthetic.p2p(0, 3, True, 41.0)
    evidence = _eight(pairs, synthetic.nccl(38.0))
    outcome = run(smoke.peer_to_peer, evidence)
    assert outcome.status is Status.WARNING
    assert "cuda:0→cuda:3 (NV18) 41.0 GB/s is slower than even the PCIe link (63.0 GB/s)" in outcome.summary
    allreduce = run(smoke.allreduce_works, evidence)
    assert allreduce.status is Status.WARNING and "8% of the GPUs' links" in allreduce.summary


def test_no_peer_access_between_two_p100s():
    record = synthetic.eight_h100(
        [synthetic.p2p(0, 1, False, None), synthetic.p2p(1, 0, False, None)], synthetic.nccl(5.1, world_size=2)
    )
    record["devices"] = record["devices"][:3]
    for device, bus in zip(record["devices"][1:], ["0000:04:00.0", "0000:82:00.0"]):
        device.update(name="Tesla P100-PCIE-16GB", pci_bus_id=bus, capability="6.0")
    evidence = make_evidence(
        nvidia_smi_q_x_xml=_real(P100_X2_XML), nvidia_smi_topo_m_txt=_real(PHB_TOPO), smoke_json=record
    )
    outcome = run(smoke.peer_to_peer, evidence)
    assert outcome.status is Status.WARNING
    assert outcome.summary.startswith("no peer access cuda:0→cuda:1 (PHB)")
    assert "nvidia-smi topo -p2p r" in _commands(outcome) and "ACS" in outcome.findings[0].fix.summary


def test_a_peer_copy_error_is_a_problem():
    evidence = _eight(
        [synthetic.p2p(0, 1, True, None, error="CUDA error: peer access is not supported between these two devices")],
        synthetic.nccl(362.0),
    )
    outcome = run(smoke.peer_to_peer, evidence)
    assert outcome.status is Status.PROBLEM and "peer access is not supported" in outcome.summary


def test_allreduce_error_is_quoted_with_the_shm_fix():
    error = (
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n"
        "Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)"
    )
    outcome = run(smoke.allreduce_works, _eight([], synthetic.nccl(None, error=error)))
    assert outcome.status is Status.PROBLEM
    assert '"Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)"' in outcome.summary
    assert "--ipc=host" in outcome.findings[0].fix.summary


def test_gloo_on_cpu_is_informational():
    outcome = run(smoke.allreduce_works, make_evidence(smoke_json=synthetic.SYNTHETIC_SMOKE_CPU_ONLY_ON_GPU_BOX))
    assert outcome.status is Status.OK
    assert outcome.summary.startswith("gloo all-reduce of 8 MB across 2 ranks: busbw 0.63 GB/s")
    assert [f.severity for f in outcome.findings] == [Severity.INFO]


def test_a_data_parallel_step_out_of_time_is_not_an_all_reduce_failure():
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_CPU_ONLY_ON_GPU_BOX)
    record["allreduce"].update(
        ddp_step_s=None,
        ddp_loss_decreased=None,
        error="the DDP step did not finish in the time left (all-reduce measured)",
    )
    outcome = run(smoke.allreduce_works, make_evidence(smoke_json=record))
    assert outcome.status is Status.OK
    assert any("data-parallel step was not finished" in f.message for f in outcome.findings)


def test_single_gpu_has_no_peers():
    evidence = make_evidence(nvidia_smi_txt=_real(H100_X8_TABLE), smoke_json=synthetic.SYNTHETIC_SMOKE_H100_HEALTHY)
    assert run(smoke.peer_to_peer, evidence).status is Status.NOT_APPLICABLE
    assert run(smoke.allreduce_works, evidence).status is Status.NOT_APPLICABLE


# ----------------------------------------------------------------------------- the real CPU record, end to end


@pytest.mark.parametrize("name", ["smoke-torch.json", "smoke-tensorflow.json"])
def test_real_cpu_records_never_fail_on_a_cpu_machine(name):
    path = RECORDED.parent / name
    if not path.is_file():
        pytest.skip(f"the real CPU smoke record {path} has not been recorded yet")
    evidence = make_evidence(smoke_json=json.loads(path.read_text()), pci_devices_json=NO_GPU_SCAN)
    for spec in CHECKS:
        assert run(spec, evidence).status in (Status.OK, Status.NOT_APPLICABLE), spec.code
    assert run(smoke.acceleration_real, evidence).summary.startswith("CPU baseline: ")


def test_every_outcome_is_strict_json():
    """The JSON report must carry the data as it is: no NaN, no objects."""
    scenarios = [
        make_evidence(nvidia_smi_txt=_real(H100_X8_TABLE), smoke_json=synthetic.SYNTHETIC_SMOKE_H100_SLOW),
        make_evidence(
            nvidia_smi_q_x_xml=_real(RTX3090_XML),
            smoke_json=synthetic.single_gpu_bandwidth(
                "NVIDIA GeForce RTX 3090", "0000:00:10.0", 3.3, 3.2, "8.6", matmul_fp32=10.0
            ),
        ),
        _eight([synthetic.p2p(0, 1, True, 41.0)], synthetic.nccl(38.0)),
        make_evidence(smoke_json=synthetic.SYNTHETIC_SMOKE_CPU_ONLY_ON_GPU_BOX),
    ]
    for evidence in scenarios:
        for spec in CHECKS:
            outcome = run(spec, evidence)
            json.dumps(outcome.data, allow_nan=False)
            json.dumps([f.to_dict() for f in outcome.findings], allow_nan=False)


# SYNTHETIC: the record the torch smoke prints when torch is absent from the target Python.
_TORCH_ABSENT = {
    "probe": "smoke",
    "probe_version": 1,
    "framework": "torch",
    "installed": False,
    "python": {
        "executable": "/home/ada/venv/bin/python",
        "version": "3.12.3",
        "platform": "linux",
        "machine": "x86_64",
    },
}


def test_torch_missing_on_a_gpu_box_gets_the_wheel_for_this_driver():
    evidence = make_evidence(nvidia_smi_txt=_real("C/gls-8x-rtx4090-550.127.05.txt"), smoke_json=_TORCH_ABSENT)
    outcome = run(smoke.acceleration_real, evidence)
    command = outcome.findings[0].fix.commands[0]
    # Driver 550 runs CUDA 12.x wheels only: a cu12 index, never an unpinned download.
    assert command.startswith('/home/ada/venv/bin/python -m pip install "torch==')
    assert "--index-url https://download.pytorch.org/whl/cu12" in command


def test_torch_missing_without_gpu_gets_the_cpu_wheel():
    evidence = make_evidence(pci_devices_json=NO_GPU_SCAN, smoke_json=_TORCH_ABSENT)
    outcome = run(smoke.acceleration_real, evidence)
    assert outcome.findings[0].fix.commands == (
        "/home/ada/venv/bin/python -m pip install torch --index-url https://download.pytorch.org/whl/cpu",
    )
