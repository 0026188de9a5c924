"""parse_nvidia_smi_text / parse_nvidia_smi_list / classify_smi_error over real captures.

Real tables and error outputs are read in place from the fixtures corpus
(section C of its INDEX.md; one error from B).  Inputs written here by hand are
named SYNTHETIC_* and say where their wording comes from.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudoctor.facts.model import GpuInfo, SmiReport
from gpudoctor.facts.nvidia_smi_text import (
    ERROR_KINDS,
    classify_smi_error,
    parse_nvidia_smi_list,
    parse_nvidia_smi_text,
)
from tests.helpers.fixtures import fixture_files, read_fixture
from tests.helpers.strategies import Mutated, any_code_points, decoded_bytes, mutated

C_FILES = fixture_files("C")
LIST_FILES = [path for path in C_FILES if path.name.endswith("-nvidia-smi-L.txt")]
ERROR_FILES = [path for path in C_FILES if path.name.startswith("err-")]
TABLE_FILES = [path for path in C_FILES if path not in LIST_FILES and path not in ERROR_FILES]
C_TEXTS = [read_fixture(path) for path in C_FILES]
LIST_TEXTS = [read_fixture(path) for path in LIST_FILES]

# file -> (CUDA version in the header, GPUs in the table); the driver comes from the file name
TABLES = {
    "gls-10x-a40-550.127.05.txt": ("12.4", 10),
    "gls-2x-h100-nvl-550.54.14.txt": ("12.4", 2),
    "gls-4x-a100-sxm-555.42.02.txt": ("12.5", 4),
    "gls-8x-h100-sxm-565.57.01.txt": ("12.7", 8),
    "gls-8x-rtx4090-550.127.05.txt": ("12.4", 8),
    "gls-8x-v100-550.127.05.txt": ("12.4", 8),
    "gls-gh200-550.127.05.txt": ("12.4", 1),
    "gls-gtx1050ti-535.161.07.txt": ("12.2", 1),
    "gls-gtx680-470.256.02-old-layout.txt": ("11.4", 1),
    "gls-l4-550.90.07.txt": ("12.4", 1),
    "gls-rtx5090-570.124.06.txt": ("12.8", 1),
    "gpuexporter-h100-mig-enabled-590.48.01-idle.txt": ("13.1", 1),
    "gpuexporter-h100-mig-enabled-590.48.01-load-with-processes.txt": ("13.1", 1),
    "gpuexporter-h100-sxm-590.48.01-idle.txt": ("13.1", 1),
    "gpuexporter-h200-590.48.01-idle.txt": ("13.1", 1),
    "gpuexporter-h200-mig-enabled-590.48.01-idle.txt": ("13.1", 1),
    "gpuexporter-l40s-595.80-idle.txt": ("13.2", 1),
    "gpuexporter-rtx4080super-595.71.05-idle.txt": ("13.2", 1),
    "gpuexporter-rtx2080super-610.57.04-idle.txt": ("13.3", 1),  # 610 header: "KMD Version" / "CUDA UMD Version"
    "gpuexporter-windows-wddm-rtx2080super-610.62-idle.txt": ("13.3", 1),
    "gpuexporter-windows-wddm-rtx2080super-610.62-load-with-processes.txt": ("13.3", 1),
    "issue-gtx780-440.33.01-old-layout-NA-not-supported-tab-indented-pytorch-31007.txt": ("10.2", 1),
    "container-nvidia-smi-before-daemon-reload-510.68.02-nvidia-docker-1671-excerpt.txt": ("11.6", 0),
}

# file -> (kind, detail), each cause as stated in the file's source thread
ERRORS = {
    "err-couldnt-communicate-kernel-upgrade-gcp-pr18.txt": ("couldnt_communicate", None),
    "err-nvml-version-mismatch-reboot-illinois-60.txt": ("version_mismatch", None),  # older driver: no library line
    "err-container-nvml-unknown-error-after-daemon-reload-nvidia-docker-1671.txt": ("nvml_unknown_error", None),
}

_VERSION_IN_NAME = re.compile(r"-([0-9]{3}\.[0-9]+(?:\.[0-9]+)?)(?:-|\.txt$)")
_BUS_ID_FORM = re.compile(r"[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")


def _parse(name: str, fixtures_dir: pathlib.Path, subdir: str = "C") -> SmiReport:
    path = fixtures_dir / subdir / name
    if not path.is_file():
        pytest.skip(f"{name} not in the corpus")
    return parse_nvidia_smi_text(read_fixture(path))


def assert_well_formed(report: SmiReport) -> None:
    """What must hold for any input, however damaged."""
    assert isinstance(report, SmiReport)
    assert report.attached_gpus is None  # the table never states it
    if report.error is not None:
        assert report.error.kind in ERROR_KINDS
        assert not report.error.message.startswith("internal parser error"), report.error.message
    else:
        assert report.schema in ("table", "table-legacy")
    for gpu in report.gpus:
        assert isinstance(gpu.index, int)
        assert gpu.bus_id is None or _BUS_ID_FORM.fullmatch(gpu.bus_id), gpu.bus_id
        assert gpu.persistence_mode in (None, True, False)
        assert gpu.compute_mode in (None, "Default", "Exclusive_Process", "Exclusive_Thread", "Prohibited")
        assert gpu.mig_mode_current in (None, "Enabled", "Disabled")
        assert gpu.driver_model in (None, "WDDM", "TCC", "MCDM")
        assert gpu.name not in ("N/A", "ERR!", "")
        for mig in gpu.mig_devices:
            assert mig.gpu_index == gpu.index


# --------------------------------------------------------------------------- every real table


@pytest.mark.parametrize("path", TABLE_FILES, ids=lambda p: p.name)
def test_every_table(path: pathlib.Path) -> None:
    report = parse_nvidia_smi_text(read_fixture(path))
    assert_well_formed(report)
    assert report.error is None
    match = _VERSION_IN_NAME.search(path.name)
    assert match and report.driver_version == match.group(1)
    for position, gpu in enumerate(report.gpus):
        assert gpu.index == position
        assert gpu.name and gpu.bus_id
        assert gpu.memory_total_mib and gpu.memory_used_mib is not None
        assert gpu.compute_mode == "Default"  # no capture in the corpus uses another mode
    if path.name in TABLES:
        cuda, gpu_count = TABLES[path.name]
        assert (report.cuda_version, len(report.gpus)) == (cuda, gpu_count)


def test_every_listed_table_is_present(fixtures_dir: pathlib.Path) -> None:
    if not (fixtures_dir / "C").is_dir():
        pytest.skip(f"the nvidia-smi tables (fixtures C) are not at {fixtures_dir}")
    missing = [name for name in [*TABLES, *ERRORS] if not (fixtures_dir / "C" / name).is_file()]
    assert not missing


def test_ten_a40s_two_digit_layout(fixtures_dir: pathlib.Path) -> None:
    report = _parse("gls-10x-a40-550.127.05.txt", fixtures_dir)
    assert [gpu.index for gpu in report.gpus] == list(range(10))
    assert report.gpus[0].bus_id == "0000:4f:00.0" and report.gpus[9].bus_id == "0000:d6:00.0"
    assert all(gpu.name == "NVIDIA A40" and gpu.persistence_mode is True for gpu in report.gpus)
    assert all(gpu.memory_total_mib == 46068 and gpu.mig_mode_current is None for gpu in report.gpus)
    assert report.schema == "table"


def test_h100_mig_table(fixtures_dir: pathlib.Path) -> None:
    report = _parse("gpuexporter-h100-mig-enabled-590.48.01-idle.txt", fixtures_dir)
    gpu = report.gpus[0]
    assert (report.driver_version, report.cuda_version) == ("590.48.01", "13.1")
    assert (gpu.name, gpu.bus_id, gpu.mig_mode_current) == ("NVIDIA H100 80GB HBM3", "0000:00:09.0", "Enabled")
    assert (gpu.memory_used_mib, gpu.memory_total_mib) == (59, 81559)
    assert len(gpu.mig_devices) == 4
    assert [(m.gpu_instance_id, m.compute_instance_id, m.mig_device_index) for m in gpu.mig_devices] == [
        (2, 0, 0),
        (3, 0, 1),
        (9, 0, 2),
        (10, 0, 3),
    ]
    assert [m.memory_total_mib for m in gpu.mig_devices] == [40448, 20096, 9984, 9984]


def test_h100_mig_table_under_load_ignores_processes(fixtures_dir: pathlib.Path) -> None:
    report = _parse("gpuexporter-h100-mig-enabled-590.48.01-load-with-processes.txt", fixtures_dir)
    assert len(report.gpus) == 1 and len(report.gpus[0].mig_devices) == 4
    assert report.gpus[0].memory_used_mib == 11125


def test_h200_mig_two_compute_instances_in_one_gpu_instance(fixtures_dir: pathlib.Path) -> None:
    gpu = _parse("gpuexporter-h200-mig-enabled-590.48.01-idle.txt", fixtures_dir).gpus[0]
    assert [(m.gpu_instance_id, m.compute_instance_id) for m in gpu.mig_devices] == [
        (2, 0),
        (2, 1),
        (3, 0),
        (9, 0),
        (10, 0),
    ]


def test_mig_disabled_and_not_supported(fixtures_dir: pathlib.Path) -> None:
    assert {g.mig_mode_current for g in _parse("gls-2x-h100-nvl-550.54.14.txt", fixtures_dir).gpus} == {"Disabled"}
    assert _parse("gls-8x-rtx4090-550.127.05.txt", fixtures_dir).gpus[0].mig_mode_current is None


@pytest.mark.parametrize(
    "name",
    [
        "gpuexporter-windows-wddm-rtx2080super-610.62-idle.txt",
        "gpuexporter-windows-wddm-rtx2080super-610.62-load-with-processes.txt",
    ],
)
def test_windows_driver_model_column(name: str, fixtures_dir: pathlib.Path) -> None:
    report = _parse(name, fixtures_dir)
    assert (report.driver_version, report.cuda_version) == ("610.62", "13.3")
    assert len(report.gpus) == 1  # the long C+G process list adds no GPU
    gpu = report.gpus[0]
    assert (gpu.driver_model, gpu.persistence_mode) == ("WDDM", None)
    assert (gpu.name, gpu.bus_id, gpu.memory_total_mib) == ("NVIDIA GeForce RTX 2080 ...", "0000:0c:00.0", 8192)


def test_gtx780_tab_indented_old_layout(fixtures_dir: pathlib.Path) -> None:
    report = _parse("issue-gtx780-440.33.01-old-layout-NA-not-supported-tab-indented-pytorch-31007.txt", fixtures_dir)
    assert (report.driver_version, report.cuda_version, report.schema) == ("440.33.01", "10.2", "table-legacy")
    gpu = report.gpus[0]
    assert (gpu.index, gpu.name, gpu.persistence_mode, gpu.bus_id) == (0, "GeForce GTX 780", True, "0000:01:00.0")
    assert (gpu.memory_used_mib, gpu.memory_total_mib, gpu.mig_mode_current) == (488, 3016, None)


def test_gtx680_old_layout_truncated_name(fixtures_dir: pathlib.Path) -> None:
    report = _parse("gls-gtx680-470.256.02-old-layout.txt", fixtures_dir)
    assert report.schema == "table-legacy"
    gpu = report.gpus[0]
    assert (gpu.name, gpu.persistence_mode, gpu.bus_id) == ("NVIDIA GeForce ...", False, "0000:08:00.0")
    assert (gpu.memory_used_mib, gpu.memory_total_mib, gpu.mig_mode_current) == (0, 2000, None)


def test_535_header_spacing(fixtures_dir: pathlib.Path) -> None:
    report = _parse("gls-gtx1050ti-535.161.07.txt", fixtures_dir)
    assert (report.driver_version, report.cuda_version, report.schema) == ("535.161.07", "12.2", "table")
    assert report.gpus[0].name == "NVIDIA GeForce GTX 1050 Ti"


def test_header_only_excerpt(fixtures_dir: pathlib.Path) -> None:
    report = _parse("container-nvidia-smi-before-daemon-reload-510.68.02-nvidia-docker-1671-excerpt.txt", fixtures_dir)
    assert (report.driver_version, report.cuda_version, report.gpus, report.error) == ("510.68.02", "11.6", [], None)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("path", ERROR_FILES, ids=lambda p: p.name)
def test_every_error_output(path: pathlib.Path) -> None:
    report = parse_nvidia_smi_text(read_fixture(path))
    assert_well_formed(report)
    assert report.error is not None and report.error.kind != "unparsable"
    assert (report.driver_version, report.gpus) == (None, [])
    if path.name in ERRORS:
        assert (report.error.kind, report.error.detail) == ERRORS[path.name]
    assert (
        "nvidia-smi" not in report.error.message.lower() or report.error.kind == "couldnt_communicate"
    )  # prompt line dropped


def test_windows_option_error(fixtures_dir: pathlib.Path) -> None:
    report = _parse("gpuexporter-windows-rtx2080s-591.86-topo-m-error.txt", fixtures_dir, subdir="B")
    assert report.error is not None and report.error.kind == "option_error"
    assert report.error.message.startswith("ERROR: Option -m is missing its value")


# SYNTHETIC, written from the documented messages, not captured:
# the two-line mismatch of newer drivers (failure-modes.md row 1).
SYNTHETIC_MISMATCH_WITH_LIBRARY = (
    "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124\n"
)
# nvidia-smi's own text when libnvidia-ml.so cannot be loaded.
SYNTHETIC_LIBRARY_NOT_FOUND = (
    "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display "
    "Driver is properly installed and present in your system.\n"
    "Please also try adding directory that contains libnvidia-ml.so to your system PATH.\n"
)
SYNTHETIC_NO_PERMISSION = "Failed to initialize NVML: Insufficient Permissions\n"
SYNTHETIC_NO_DEVICES = "No devices were found\n"
SYNTHETIC_NVML_OTHER = "Failed to initialize NVML: GPU access blocked by the operating system\n"  # WSL wording
SYNTHETIC_GPU_UNKNOWN_ERROR = "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n"
SYNTHETIC_COMMAND_NOT_FOUND = "bash: nvidia-smi: command not found\n"

# SYNTHETIC: a lost GPU next to a healthy one, in the 550 layout.  nvidia-smi
# prints the per-GPU message, then the table of the GPUs it can still see.
SYNTHETIC_TABLE_WITH_LOST_GPU = """\
Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost.  Reboot the system to recover this GPU
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA A100-PCIE-40GB          On  |   00000000:01:00.0 Off |                    0 |
| N/A   31C    P0             35W /  250W |       4MiB /  40960MiB |      0%   E. Process |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
"""

# SYNTHETIC: the <=470 layout with a GPU showing ERR! (as users describe Xid 79 cases),
# a second GPU in compute mode Prohibited, and a header whose CUDA field is N/A.
SYNTHETIC_TABLE_WITH_ERR = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: N/A      |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  ERR!                ERR! | 00000000:03:00.0 ERR!|                 ERR! |
|ERR!  ERR! ERR!    ERR! / ERR! |      0MiB / 11178MiB |    ERR!         ERR! |
|                               |                      |                 ERR! |
+-------------------------------+----------------------+----------------------+
|   1  NVIDIA GeForce ...  Off  | 00000000:04:00.0 Off |                  N/A |
| 23%   30C    P8     9W / 250W |      1MiB / 11178MiB |      0%   Prohibited |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
"""


@pytest.mark.parametrize(
    ("text", "kind", "detail"),
    [
        (SYNTHETIC_MISMATCH_WITH_LIBRARY, "version_mismatch", "570.124"),
        (SYNTHETIC_LIBRARY_NOT_FOUND, "library_not_found", None),
        (SYNTHETIC_NO_PERMISSION, "no_permission", None),
        (SYNTHETIC_NO_DEVICES, "no_devices", None),
        (SYNTHETIC_NVML_OTHER, "nvml_init_failed", "GPU access blocked by the operating system"),
        (SYNTHETIC_GPU_UNKNOWN_ERROR, "gpu_lost", "0000:3b:00.0"),
        (SYNTHETIC_COMMAND_NOT_FOUND, "command_not_found", None),
        ("$ nvidia-smi\n" + SYNTHETIC_NO_DEVICES, "no_devices", None),
    ],
)
def test_synthetic_error_messages(text: str, kind: str, detail: str | None) -> None:
    report = parse_nvidia_smi_text(text)
    assert report.error is not None
    assert (report.error.kind, report.error.detail) == (kind, detail)
    assert report.gpus == [] and report.schema is None


def test_synthetic_lost_gpu_beside_a_table() -> None:
    report = parse_nvidia_smi_text(SYNTHETIC_TABLE_WITH_LOST_GPU)
    assert report.error is not None and (report.error.kind, report.error.detail) == ("gpu_lost", "0000:02:00.0")
    assert report.error.message.endswith("Reboot the system to recover this GPU")
    assert report.driver_version == "550.54.15" and len(report.gpus) == 1
    gpu = report.gpus[0]
    assert (gpu.bus_id, gpu.compute_mode, gpu.mig_mode_current) == ("0000:01:00.0", "Exclusive_Process", "Disabled")


def test_synthetic_err_cells() -> None:
    report = parse_nvidia_smi_text(SYNTHETIC_TABLE_WITH_ERR)
    assert_well_formed(report)
    assert (report.driver_version, report.cuda_version, report.schema) == ("470.82.01", None, "table-legacy")
    assert report.error is not None and (report.error.kind, report.error.detail) == ("gpu_error_state", "0000:03:00.0")
    broken, healthy = report.gpus
    assert (broken.index, broken.name, broken.persistence_mode, broken.compute_mode) == (0, None, None, None)
    assert (broken.memory_used_mib, broken.memory_total_mib) == (0, 11178)
    assert (healthy.index, healthy.compute_mode, healthy.persistence_mode) == (1, "Prohibited", False)


def test_error_kinds_are_documented() -> None:
    required = {
        "couldnt_communicate",
        "version_mismatch",
        "nvml_unknown_error",
        "nvml_init_failed",
        "no_devices",
        "gpu_lost",
        "no_permission",
        "library_not_found",
        "option_error",
        "unparsable",
    }
    assert required <= set(ERROR_KINDS)
    assert all(meaning and "\n" not in meaning for meaning in ERROR_KINDS.values())


def test_classify_ignores_tables_and_prose(fixtures_dir: pathlib.Path) -> None:
    for path in TABLE_FILES:
        assert classify_smi_error(read_fixture(path)) is None, path.name
    assert classify_smi_error("") is None
    assert classify_smi_error("| No devices were found |") is None  # a table cell, not the message


@pytest.mark.parametrize("text", ["", "\n\n", "hello world", "Tue Jul 14 09:00:43 2026"])
def test_unparsable(text: str) -> None:
    report = parse_nvidia_smi_text(text)
    assert report.error is not None and report.error.kind == "unparsable" and report.gpus == []


@pytest.mark.integration
def test_this_machines_nvidia_smi() -> None:
    """Whatever the local nvidia-smi says (a table or a failure) is understood."""
    binary = shutil.which("nvidia-smi")
    if binary is None:
        pytest.skip("no nvidia-smi on this machine")
    result = subprocess.run([binary], capture_output=True, text=True, timeout=60, check=False)
    report = parse_nvidia_smi_text(result.stdout + result.stderr)
    assert_well_formed(report)
    if result.returncode == 0:
        assert report.driver_version and report.gpus
    else:
        assert report.error is not None and report.error.kind != "unparsable"


# --------------------------------------------------------------------------- -L


def test_list_with_mig_devices(fixtures_dir: pathlib.Path) -> None:
    path = fixtures_dir / "C" / "gpuexporter-h100-mig-nvidia-smi-L.txt"
    if not path.is_file():
        pytest.skip("-L capture not in the corpus")
    (gpu,) = parse_nvidia_smi_list(read_fixture(path))
    assert (gpu.index, gpu.name, gpu.uuid) == (0, "NVIDIA H100 80GB HBM3", "GPU-00000000-0000-0000-0000-000000000000")
    assert [(m.gpu_index, m.mig_device_index, m.profile) for m in gpu.mig_devices] == [
        (0, 0, "3g.40gb"),
        (0, 1, "2g.20gb"),
        (0, 2, "1g.10gb"),
        (0, 3, "1g.10gb"),
    ]
    assert gpu.mig_devices[3].uuid == "MIG-00000003-0000-0000-0000-000000000003"


# SYNTHETIC: the R450/R460 -L form, whose MIG UUIDs embed the GPU UUID and GI/CI ids,
# with a second GPU without MIG; UUIDs invented.
SYNTHETIC_LIST_R450 = """\
GPU 0: A100-SXM4-40GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)
  MIG 3g.20gb Device 0: (UUID: MIG-GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77/1/0)
  MIG 3g.20gb Device 1: (UUID: MIG-GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77/2/0)
GPU 1: A100-SXM4-40GB (UUID: GPU-0a1b2c3d-0000-1111-2222-333344445555)
"""


def test_synthetic_list_r450_form() -> None:
    gpus = parse_nvidia_smi_list(SYNTHETIC_LIST_R450)
    assert [(g.index, g.name, len(g.mig_devices)) for g in gpus] == [(0, "A100-SXM4-40GB", 2), (1, "A100-SXM4-40GB", 0)]
    assert gpus[0].mig_devices[1].uuid == "MIG-GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77/2/0"


def test_list_of_an_error_is_empty(fixtures_dir: pathlib.Path) -> None:
    for path in ERROR_FILES:
        assert parse_nvidia_smi_list(read_fixture(path)) == []


# --------------------------------------------------------------------------- property tests

_NOISE = "|+-= \t\n:./0123456789ABCDEFMiBN/AOnOffERR!WDDM"  # what a table is made of


@settings(deadline=None, database=None)
@given(st.text())
def test_any_text(text: str) -> None:
    assert_well_formed(parse_nvidia_smi_text(text))
    assert all(isinstance(gpu, GpuInfo) for gpu in parse_nvidia_smi_list(text))


@settings(deadline=None, database=None)
@given(any_code_points())
def test_any_code_points(text: str) -> None:
    assert_well_formed(parse_nvidia_smi_text(text))
    assert isinstance(parse_nvidia_smi_list(text), list)


@settings(deadline=None, database=None)
@given(decoded_bytes())
def test_any_bytes(text: str) -> None:
    assert_well_formed(parse_nvidia_smi_text(text))
    assert isinstance(parse_nvidia_smi_list(text), list)


@settings(deadline=None, database=None)
@given(
    st.lists(
        st.lists(st.text(alphabet="0123456789 ABCDEF:.MiB/NA-Ofn", max_size=25), min_size=1, max_size=5), max_size=8
    )
)
def test_table_like_rows(rows: list[list[str]]) -> None:
    # Random cells in the table's own shape reach the row parsers, which plain text rarely does.
    text = "\n".join("|" + "|".join(cells) + "|" for cells in rows)
    assert_well_formed(parse_nvidia_smi_text("| MIG devices: |\n" + text))
    assert_well_formed(parse_nvidia_smi_text(text))


@pytest.mark.skipif(not C_TEXTS, reason="real captured fixtures not found")
@settings(deadline=None, database=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(C_TEXTS, [path.name for path in C_FILES], noise_alphabet=_NOISE))
def test_mutated_real_outputs(text: Mutated) -> None:
    text = str(text)
    report = parse_nvidia_smi_text(text)
    assert_well_formed(report)
    # Whatever survives was in the input: nothing is made up.
    if report.driver_version is not None:
        assert report.driver_version in text
    for gpu in report.gpus:
        assert gpu.name is None or gpu.name in text


@pytest.mark.skipif(not LIST_TEXTS, reason="-L capture not found")
@settings(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(LIST_TEXTS, [path.name for path in LIST_FILES], noise_alphabet=_NOISE))
def test_mutated_real_list(text: Mutated) -> None:
    text = str(text)
    gpus = parse_nvidia_smi_list(text)
    assert isinstance(gpus, list)
    for gpu in gpus:
        assert isinstance(gpu.index, int) and (gpu.name is None or gpu.name in text)
        assert all(mig.gpu_index == gpu.index and mig.profile in text for mig in gpu.mig_devices)
