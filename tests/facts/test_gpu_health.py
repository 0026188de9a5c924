"""GPU hardware health: ``nvidia-smi -q -x`` of every schema (real captures), NVML records (synthetic), the table.

The XML assertions read the real fixtures in ``shared/fixtures/A``.  NVML records come from
``tests/synthetic/nvml_records.py`` (no real probe capture on a GPU machine exists yet), and the
tables with lost GPUs are real captures edited by hand, named synthetic below.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.model import EvidenceItem
from gpudoctor.facts.gpu_health import (
    clock_reasons,
    gpu_health,
    health_from_nvml,
    health_from_table,
    health_from_xml,
)
from gpudoctor.facts.health_model import EccCounts, GpuHealth
from tests.helpers.fixtures import fixture_files, read_fixture
from tests.helpers.strategies import any_code_points, fixture_named, json_like, mutated, mutated_json
from tests.synthetic import nvml_records
from tests.synthetic.evidence import make_evidence

XML = fixture_files("A")
TABLES = fixture_files("C")


def _xml(name: str) -> list[GpuHealth]:
    return health_from_xml(read_fixture(fixture_named(XML, name)))


# --------------------------------------------------------------------------- nvidia-smi -q -x, real captures


def test_a100_80gb_mig_v12_ecc_reset_status_and_four_instances():
    [gpu] = _xml("a100-sxm4-80gb-535")
    assert gpu.index is None  # the capture lists 1 of 4 attached GPUs, so its position is not its index
    assert (gpu.bus_id, gpu.name, gpu.brand, gpu.source) == (
        "0000:01:00.0",
        "NVIDIA A100-SXM4-80GB",
        "NVIDIA",
        "nvidia-smi -q -x",
    )
    assert gpu.ecc_enabled is True and gpu.ecc_pending is True
    assert gpu.ecc == EccCounts(0, 0, 0, 0)
    assert gpu.mig_enabled is True and gpu.mig_instances == 4
    assert gpu.reset_required is False and gpu.drain_and_reset_recommended is False
    # MIG on: row remapping and page retirement print N/A, which is "unknown", not zero
    assert gpu.remapped_rows_correctable is None and gpu.remapped_rows_pending is None
    assert gpu.retired_pages_sbe is None and gpu.retired_pages_pending is None
    assert (gpu.temperature_c, gpu.slowdown_temp_c, gpu.shutdown_temp_c) == (27, 89, 92)
    assert gpu.inforom_image == "G506.0212.00.01"
    assert gpu.fabric_state is None and gpu.fabric_status is None  # <state>N/A</state>
    assert gpu.lost is False


def test_a100_40gb_mig_v11_two_instances_and_volatile_counters_unknown():
    [gpu] = _xml("a100-sxm4-40gb-mig")
    assert gpu.mig_enabled is True and gpu.mig_instances == 2
    assert gpu.ecc == EccCounts(
        volatile_corrected=None, volatile_uncorrected=None, aggregate_corrected=0, aggregate_uncorrected=0
    )
    assert gpu.reset_required is None  # v11 has no gpu_reset_status
    assert gpu.compute_processes == 0


def test_busy_8x_v100s_processes_power_cap_and_page_retirement():
    gpus = _xml("8x-tesla-v100s")
    assert [gpu.index for gpu in gpus] == list(range(8))
    assert all(gpu.compute_processes == 1 and gpu.brand == "Tesla" for gpu in gpus)
    assert all(
        gpu.retired_pages_sbe == 0 and gpu.retired_pages_dbe == 0 and gpu.retired_pages_pending is False for gpu in gpus
    )
    assert all(gpu.ecc == EccCounts(0, 0, 0, 0) and gpu.persistence_mode is False for gpu in gpus)
    assert [gpu.index for gpu in gpus if "sw_power_cap" in gpu.clock_reasons_active] == [3, 6]
    assert gpus[0].temperature_c == 66 and gpus[0].mig_enabled is None and gpus[0].mig_instances is None


def test_v8_hadoop_two_p100s():
    gpus = _xml("hadoop-2x-tesla-p100")
    assert [(gpu.index, gpu.bus_id) for gpu in gpus] == [(0, "0000:04:00.0"), (1, "0000:82:00.0")]
    for gpu in gpus:
        assert gpu.ecc_enabled is True and gpu.ecc == EccCounts(0, 0, 0, 0)
        assert (gpu.retired_pages_sbe, gpu.retired_pages_dbe, gpu.retired_pages_pending) == (0, 0, False)
        assert gpu.remapped_rows_correctable is None and gpu.mig_enabled is None
        assert (gpu.slowdown_temp_c, gpu.shutdown_temp_c) == (82, 85)
        assert gpu.inforom_image == "H400.0202.00.01" and gpu.compute_processes == 0
    assert [gpu.temperature_c for gpu in gpus] == [31, 34]


def test_p100_with_corrected_errors_in_its_life():
    [gpu] = _xml("netdata-tesla-p100")
    assert gpu.ecc == EccCounts(
        volatile_corrected=0, volatile_uncorrected=0, aggregate_corrected=3, aggregate_uncorrected=0
    )


def test_windows_wddm_geforce():
    [gpu] = _xml("rtx2080-windows")
    assert gpu.persistence_mode is None  # no persistence mode on Windows
    assert gpu.ecc_enabled is None and gpu.ecc == EccCounts()
    assert gpu.compute_processes == 26  # every WDDM process is "C+G"
    assert gpu.inforom_image == "G001.0000.02.04" and gpu.brand == "GeForce"
    [v12] = _xml("rtx3080-536.40-windows")
    assert v12.reset_required is False and v12.drain_and_reset_recommended is None


def test_trimmed_gtx1070ti_knows_only_temperature_and_compute_mode():
    [gpu] = _xml("gtx1070ti-v10-trimmed")
    assert gpu.index is None and gpu.bus_id == "0000:01:00.0" and gpu.name == "GeForce GTX 1070 Ti"
    assert gpu.temperature_c == 39 and gpu.compute_mode == "Default"
    assert gpu.compute_processes is None  # no <processes> element: unknown, not zero
    assert gpu.ecc == EccCounts() and gpu.inforom_image is None and gpu.persistence_mode is None


def test_newer_schemas_row_remapping_and_deprecated_reset_status():
    [ada] = _xml("rtx4000-sff-ada-595")
    assert (ada.remapped_rows_correctable, ada.remapped_rows_uncorrectable) == (0, 0)
    assert ada.remapped_rows_pending is False and ada.remapped_rows_failure is False
    assert ada.ecc_enabled is False and ada.brand == "NVIDIA RTX"
    # thresholds printed relative to T.Limit ("-7 C") are not the absolute slowdown/shutdown temperatures
    assert ada.slowdown_temp_c is None and ada.shutdown_temp_c is None
    assert ada.compute_processes == 2  # of 4 processes, "python" (C) and chromium (C+G) use CUDA
    [rtx3060] = _xml("rtx3060-570")
    assert rtx3060.reset_required is None  # "Requested functionality has been deprecated"
    [rtx3090] = _xml("rtx3090-525")
    assert rtx3090.inforom_image is None  # "[REDACTED]" by whoever shared it


@pytest.mark.parametrize("path", XML, ids=lambda p: p.name)
def test_every_real_xml_reads(path):
    gpus = health_from_xml(read_fixture(path))
    assert gpus and all(isinstance(gpu, GpuHealth) and gpu.source == "nvidia-smi -q -x" for gpu in gpus)
    for gpu in gpus:
        assert gpu.bus_id is not None and gpu.lost is False
        assert gpu.temperature_c is not None and 0 < gpu.temperature_c < 130
        for count in (*vars(gpu.ecc).values(), gpu.retired_pages_sbe, gpu.compute_processes, gpu.mig_instances):
            assert count is None or count >= 0
        assert all(reason.islower() for reason in gpu.clock_reasons_active)


# --------------------------------------------------------------------------- NVML records (synthetic)


def test_synthetic_healthy_hgx_h100():
    gpus = health_from_nvml(nvml_records.healthy_8x_h100_sxm())
    assert [gpu.index for gpu in gpus] == list(range(8))
    for gpu in gpus:
        assert gpu.source == "nvml" and gpu.brand == "Tesla" and gpu.lost is False
        assert gpu.ecc == EccCounts(0, 0, 0, 0) and gpu.ecc_enabled is True
        assert gpu.inforom_valid is True and gpu.inforom_error is None
        assert gpu.fabric_state == "completed" and gpu.fabric_status == "NVML_SUCCESS"
        assert gpu.clock_reasons_active == ["gpu_idle"] and gpu.mig_enabled is False and gpu.mig_instances is None
        assert gpu.reset_required is None  # NVML never says "no reset needed"
    assert gpus[4].bus_id == "0000:9a:00.0"


def test_synthetic_a100_pending_row_remap():
    [gpu] = health_from_nvml(nvml_records.a100_pending_row_remap())
    assert (gpu.remapped_rows_correctable, gpu.remapped_rows_uncorrectable) == (0, 1)
    assert gpu.remapped_rows_pending is True and gpu.remapped_rows_failure is False
    assert gpu.ecc.volatile_uncorrected == 1 and gpu.ecc.aggregate_corrected == 12
    assert gpu.clock_reasons_active == ["sw_power_cap", "hw_thermal_slowdown"]
    assert gpu.fabric_state is None


def test_synthetic_lost_gpu():
    good, lost = health_from_nvml(nvml_records.lost_gpu())
    assert good.lost is False and good.name == "NVIDIA A100-SXM4-40GB"
    assert lost.index == 1 and lost.lost is True and lost.lost_detail == "NVML_ERROR_GPU_IS_LOST"
    assert lost.bus_id is None and lost.ecc == EccCounts()


def test_synthetic_v100_seventy_retired_pages_and_corrupt_inforom():
    [gpu] = health_from_nvml(nvml_records.v100_retired_pages())
    assert (gpu.retired_pages_sbe, gpu.retired_pages_dbe, gpu.retired_pages_pending) == (68, 2, True)
    assert gpu.inforom_valid is False and gpu.inforom_error == "NVML_ERROR_CORRUPTED_INFOROM"
    assert gpu.remapped_rows_correctable is None and gpu.persistence_mode is False
    assert gpu.clock_reasons_active == []


def test_synthetic_reset_required_from_an_error():
    record = nvml_records.healthy_8x_h100_sxm()
    record["devices"][2]["errors"]["ecc_volatile_corrected"] = nvml_records.error(16)
    gpus = health_from_nvml(record)
    assert gpus[2].reset_required is True and gpus[1].reset_required is None


def test_driver_not_loaded_gives_nothing():
    assert health_from_nvml(nvml_records.driver_not_loaded()) == []
    assert health_from_nvml(None) == []


def test_clock_reason_bits():
    assert clock_reasons(0x1 | 0x8 | 0x100) == ["gpu_idle", "hw_slowdown", "display_clocks_setting"]
    assert clock_reasons(0x8000000000) == [] and clock_reasons(-1) == [] and clock_reasons(True) == []


# --------------------------------------------------------------------------- the plain table


def _table_with_broken_gpus() -> str:
    """SYNTHETIC: the real 8x V100 table with GPU 3 showing ERR! and a lost GPU's line on top, as nvidia-smi
    prints them for a GPU that fell off the bus."""
    text = read_fixture(fixture_named(TABLES, "gls-8x-v100"))
    lines = text.splitlines()
    row = next(i for i, line in enumerate(lines) if "00000000:00:07.0" in line)
    lines[row] = lines[row].replace("Off |                    0 |", "Off |                 ERR! |")
    lines[row + 1] = "| ERR!  ERR!    ERR!           ERR! / ERR! |       1MiB /  16384MiB |    ERR!      Default |"
    return "Unable to determine the device handle for GPU0000:00:0A.0: GPU is lost\n" + "\n".join(lines)


def test_synthetic_table_lost_and_err_gpus():
    lost, err = health_from_table(_table_with_broken_gpus())
    assert lost.bus_id == "0000:00:0a.0" and lost.lost is True and "GPU is lost" in lost.lost_detail
    assert err.bus_id == "0000:00:07.0" and err.index == 3 and err.lost is True
    assert err.lost_detail == "nvidia-smi shows ERR! in 7 cells"


def test_synthetic_table_single_err_cell_is_not_lost():
    text = read_fixture(fixture_named(TABLES, "gls-8x-v100")).replace(
        "Off |                    0 |", "Off |                 ERR! |", 1
    )
    [gpu] = health_from_table(text)
    assert gpu.index == 0 and gpu.lost is False and gpu.lost_detail == "nvidia-smi shows ERR! in 1 cell"


@pytest.mark.parametrize("path", TABLES, ids=lambda p: p.name)
def test_real_tables_show_no_broken_gpu(path):
    assert health_from_table(read_fixture(path)) == []


# --------------------------------------------------------------------------- merged


def test_synthetic_nvml_gaps_filled_from_the_real_xml_of_the_same_gpu():
    record = nvml_records.v100_retired_pages()
    record["devices"][0]["pci_bus_id"] = "00000000:21:01.0"  # the bus of the real datakit V100 capture
    record["devices"][0]["health"]["compute_processes"] = None
    evidence = make_evidence(
        nvml_json=record, nvidia_smi_q_x_xml=read_fixture(fixture_named(XML, "tesla-v100-pcie-32gb"))
    )
    [gpu] = gpu_health(evidence)
    assert gpu.source == "nvml" and gpu.retired_pages_sbe == 68  # NVML's word stands
    assert gpu.inforom_valid is False and gpu.inforom_image == "G503.0201.00.04"
    assert gpu.compute_processes == 4 and gpu.temperature_c == 31  # XML filled the first; NVML knew the second
    assert gpu.clock_reasons_active == []  # NVML did not know them, nor does this XML show one active


def test_xml_alone_when_nvml_is_not_loaded():
    evidence = make_evidence(
        nvml_json=nvml_records.driver_not_loaded(),
        nvidia_smi_q_x_xml=read_fixture(fixture_named(XML, "8x-tesla-v100s")),
    )
    gpus = gpu_health(evidence)
    assert len(gpus) == 8 and {gpu.source for gpu in gpus} == {"nvidia-smi -q -x"}


def test_synthetic_lost_gpu_named_by_the_table():
    record = nvml_records.lost_gpu()
    record["devices"][0]["pci_bus_id"] = "00000000:00:07.0"  # the table's GPU 3, which shows ERR!
    evidence = make_evidence(nvml_json=record, nvidia_smi_txt=_table_with_broken_gpus())
    gpus = gpu_health(evidence)
    assert [(gpu.index, gpu.bus_id, gpu.lost) for gpu in gpus] == [(0, "0000:00:07.0", True), (1, "0000:00:0a.0", True)]
    # NVML's GPU 0 (bus 07 in the record) is the table's ERR! GPU: one GPU, not two
    assert gpus[0].source == "nvml" and gpus[0].lost_detail == "nvidia-smi shows ERR! in 7 cells"


def test_lost_line_on_the_xml_query_stderr_counts():
    """SYNTHETIC stderr line; the XML is a real capture."""
    evidence = make_evidence(nvidia_smi_q_x_xml=read_fixture(fixture_named(XML, "tesla-t4")))
    evidence.add(
        EvidenceItem(
            name="nvidia-smi-q-x.xml",
            kind="command",
            text=evidence.text("nvidia-smi-q-x.xml"),
            stderr="Unable to determine the device handle for GPU 0000:00:1F.0: Unknown Error",
        )
    )
    t4, lost = gpu_health(evidence)
    assert t4.bus_id == "0000:00:1e.0" and t4.lost is False
    assert lost.bus_id == "0000:00:1f.0" and lost.lost is True and "Unknown Error" in lost.lost_detail


def test_no_evidence_no_health():
    assert gpu_health(None) == [] and gpu_health(make_evidence()) == []


# --------------------------------------------------------------------------- garbage in, no exception


RECORDS = [
    nvml_records.healthy_8x_h100_sxm(),
    nvml_records.a100_pending_row_remap(),
    nvml_records.lost_gpu(),
    nvml_records.v100_retired_pages(),
    nvml_records.pcie_quad(),
]


@given(json_like())
def test_nvml_health_takes_any_json(value):
    assert all(isinstance(gpu, GpuHealth) for gpu in health_from_nvml(value))


@given(st.sampled_from(range(len(RECORDS))).flatmap(lambda i: mutated_json(copy.deepcopy(RECORDS[i]))))
def test_nvml_health_takes_damaged_records(value):
    for gpu in health_from_nvml(value):
        assert gpu.index is None or isinstance(gpu.index, int)
        assert all(isinstance(reason, str) for reason in gpu.clock_reasons_active)
    json.dumps([vars(gpu.ecc) for gpu in health_from_nvml(value)])


@given(any_code_points())
def test_xml_and_table_health_take_any_text(text):
    assert isinstance(health_from_xml(text), list)
    assert isinstance(health_from_table(text), list)


@pytest.mark.skipif(not XML, reason="the real nvidia-smi -q -x captures (fixtures A) are absent")
@given(mutated([read_fixture(p) for p in XML], [p.name for p in XML], noise_alphabet="<>/ab01 NA\n"))
def test_xml_health_takes_damaged_captures(text):
    for gpu in health_from_xml(text):
        assert gpu.temperature_c is None or 0 <= gpu.temperature_c < 1000


@pytest.mark.skipif(not TABLES, reason="the real nvidia-smi tables (fixtures C) are absent")
@given(mutated([_table_with_broken_gpus()] if TABLES else [], ["broken-table"], noise_alphabet="|ERR! 0:\n"))
def test_table_health_takes_damaged_tables(text):
    assert all(gpu.bus_id for gpu in health_from_table(text))


@given(json_like(), json_like(), any_code_points())
def test_merged_health_takes_garbage_evidence(nvml, xml, table):
    evidence = make_evidence(
        nvml_json=nvml, nvidia_smi_q_x_xml=xml if isinstance(xml, str) else json.dumps(xml), nvidia_smi_txt=table
    )
    assert all(isinstance(gpu, GpuHealth) for gpu in gpu_health(evidence))
