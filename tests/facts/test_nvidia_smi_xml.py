"""parse_nvidia_smi_xml over every real ``nvidia-smi -q -x`` capture, plus damage and fuzzing.

Real captures are read in place from the fixtures corpus (section A of its
INDEX.md).  Inputs written here by hand are named SYNTHETIC_* and say so.
"""

from __future__ import annotations

import pathlib
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudoctor.facts.model import SmiReport
from gpudoctor.facts.nvidia_smi_text import ERROR_KINDS
from gpudoctor.facts.nvidia_smi_xml import parse_nvidia_smi_xml
from tests.helpers.fixtures import fixture_files, fixture_text, read_fixture
from tests.helpers.strategies import Mutated, any_code_points, decoded_bytes, mutated

XML_FILES = fixture_files("A")
XML_TEXTS = [read_fixture(path) for path in XML_FILES]

# file -> (driver, CUDA, GPU elements in the file, DTD), as INDEX.md section A lists them
EXPECTED = {
    "telegraf-a100-sxm4-80gb-535.54.03-v12.txt": ("535.54.03", "12.2", 1, "v12"),
    "telegraf-a10g-515.105.01-v11.txt": ("515.105.01", "11.7", 1, "v11"),
    "telegraf-tesla-t4-515.105.01-v11.txt": ("515.105.01", "11.7", 1, "v11"),
    "telegraf-quadro-p2000-525.125.06-v12.txt": ("525.125.06", "12.0", 1, "v12"),
    "telegraf-quadro-p400-418.43-nodtd.txt": ("418.43", "10.1", 1, None),
    "telegraf-gtx1660ti-graphics-device-418.43-nodtd.txt": ("418.43", "10.1", 1, None),
    "telegraf-gtx1070ti-v10-trimmed.txt": (None, None, 1, "v10"),
    "telegraf-rtx3060-570.124.04-v12.txt": ("570.124.04", "12.8", 1, "v12"),
    "telegraf-rtx3080-536.40-windows-v12.txt": ("536.40", "12.2", 1, "v12"),
    "telegraf-rtx3080-595.58.03-v13.txt": ("595.58.03", "13.2", 1, "v13"),
    "telegraf-rtx3090-525.147.05-v12.txt": ("525.147.05", "12.0", 1, "v12"),
    "telegraf-rtx4000-sff-ada-595.84-v13.txt": ("595.84", "13.2", 1, "v13"),
    "netdata-a100-sxm4-40gb-mig-enabled-510.47.03-v11.txt": ("510.47.03", "11.6", 1, "v11"),
    "netdata-rtx2080-windows-516.59-v11.txt": ("516.59", "11.7", 1, "v11"),
    "netdata-rtx3060-laptop-515.65.01-v11.txt": ("515.65.01", "11.7", 1, "v11"),
    "netdata-rtx4090-535.86.05-v12.txt": ("535.86.05", "12.2", 1, "v12"),
    "netdata-tesla-p100-pcie-510.47.03-v11.txt": ("510.47.03", "11.6", 1, "v11"),
    "datakit-8x-tesla-v100s-pcie-460.73.01-v11.txt": ("460.73.01", "11.2", 8, "v11"),
    "datakit-tesla-v100-pcie-32gb-460.39-v11.txt": ("460.39", "11.2", 1, "v11"),
    "datakit-gtx1050-515.65.01-nodtd.txt": ("515.65.01", "11.7", 1, None),
    "hadoop-2x-tesla-p100-pcie-375.66-v8-asf-header.txt": ("375.66", None, 2, "v8"),
}

_VERSION_IN_NAME = re.compile(r"-([0-9]{3}\.[0-9]+(?:\.[0-9]+)?)(?:-|\.txt$)")
_BUS_ID_FORM = re.compile(r"[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")


def _parse(name: str, fixtures_dir: pathlib.Path) -> SmiReport:
    path = fixtures_dir / "A" / name
    if not path.is_file():
        pytest.skip(f"{name} not in the corpus")
    return parse_nvidia_smi_xml(read_fixture(path))


def assert_well_formed(report: SmiReport) -> None:
    """What must hold for any input, however damaged."""
    assert isinstance(report, SmiReport)
    if report.error is not None:
        assert report.error.kind in ERROR_KINDS
        assert not report.error.message.startswith("internal parser error"), report.error.message
    for gpu in report.gpus:
        assert gpu.bus_id is None or _BUS_ID_FORM.fullmatch(gpu.bus_id), gpu.bus_id
        for number in (gpu.memory_total_mib, gpu.memory_used_mib, gpu.pcie_width_max, gpu.pcie_gen_max):
            assert number is None or (isinstance(number, int) and number >= 0)
        assert gpu.persistence_mode in (None, True, False)
        for value in (gpu.name, gpu.mig_mode_current, gpu.driver_model, gpu.compute_mode):
            assert value not in ("N/A", "[N/A]", "Not Supported", "[Not Supported]", "")


# --------------------------------------------------------------------------- every real file


@pytest.mark.parametrize("path", XML_FILES, ids=lambda p: p.name)
def test_every_capture_parses_cleanly(path: pathlib.Path) -> None:
    report = parse_nvidia_smi_xml(read_fixture(path))
    assert_well_formed(report)
    assert report.error is None
    assert report.gpus, "every capture holds at least one <gpu>"
    match = _VERSION_IN_NAME.search(path.name)
    assert report.driver_version == (match.group(1) if match else None)
    for gpu in report.gpus:
        assert gpu.name and gpu.uuid and gpu.uuid.startswith("GPU-")
        assert gpu.bus_id is not None
        assert gpu.memory_total_mib and gpu.memory_total_mib > 0
        assert gpu.compute_capability is None  # no schema up to v13 carries it


@pytest.mark.parametrize("path", XML_FILES, ids=lambda p: p.name)
def test_matches_the_index(path: pathlib.Path) -> None:
    if path.name not in EXPECTED:
        pytest.skip("no expectations recorded for this capture")
    driver, cuda, gpu_count, schema = EXPECTED[path.name]
    report = parse_nvidia_smi_xml(read_fixture(path))
    assert (report.driver_version, report.cuda_version, len(report.gpus), report.schema) == (
        driver,
        cuda,
        gpu_count,
        schema,
    )


def test_every_listed_capture_is_present(fixtures_dir: pathlib.Path) -> None:
    if not (fixtures_dir / "A").is_dir():
        pytest.skip(f"the nvidia-smi -q -x captures (fixtures A) are not at {fixtures_dir}")
    missing = [name for name in EXPECTED if not (fixtures_dir / "A" / name).is_file()]
    assert not missing


# --------------------------------------------------------------------------- specific files


def test_eight_v100s_in_bus_order(fixtures_dir: pathlib.Path) -> None:
    report = _parse("datakit-8x-tesla-v100s-pcie-460.73.01-v11.txt", fixtures_dir)
    assert report.attached_gpus == 8
    assert [gpu.index for gpu in report.gpus] == list(range(8))
    assert {gpu.name for gpu in report.gpus} == {"Tesla V100S-PCIE-32GB"}
    assert [gpu.bus_id for gpu in report.gpus] == [f"0000:00:{device:02x}.0" for device in range(0x0D, 0x15)]
    assert [gpu.minor_number for gpu in report.gpus] == list(range(8))
    assert len({gpu.uuid for gpu in report.gpus}) == 8
    first = report.gpus[0]
    assert (first.memory_total_mib, first.memory_used_mib) == (32510, 31689)
    assert first.brand == "Tesla" and first.persistence_mode is False and first.compute_mode == "Default"
    assert first.mig_mode_current is None  # "N/A" on Volta


def test_a100_with_mig_devices(fixtures_dir: pathlib.Path) -> None:
    report = _parse("netdata-a100-sxm4-40gb-mig-enabled-510.47.03-v11.txt", fixtures_dir)
    gpu = report.gpus[0]
    assert (gpu.mig_mode_current, gpu.mig_mode_pending) == ("Enabled", "Enabled")
    assert gpu.architecture == "Ampere" and gpu.brand == "NVIDIA"
    assert [(m.mig_device_index, m.gpu_instance_id, m.compute_instance_id) for m in gpu.mig_devices] == [
        (0, 1, 0),
        (1, 2, 0),
    ]
    assert all(m.memory_total_mib == 19968 and m.gpu_index == 0 for m in gpu.mig_devices)
    assert all(m.profile is None for m in gpu.mig_devices)  # the XML names no profile


def test_a100_80gb_trimmed_to_one_of_four_gpus(fixtures_dir: pathlib.Path) -> None:
    report = _parse("telegraf-a100-sxm4-80gb-535.54.03-v12.txt", fixtures_dir)
    assert report.attached_gpus == 4 and len(report.gpus) == 1
    gpu = report.gpus[0]
    assert gpu.index is None  # one <gpu> of four: its position is not its index
    assert gpu.mig_mode_current == "Enabled" and len(gpu.mig_devices) == 4
    assert [m.gpu_instance_id for m in gpu.mig_devices] == [3, 4, 5, 6]
    assert gpu.minor_number == 1


@pytest.mark.parametrize("name", ["telegraf-rtx3080-536.40-windows-v12.txt", "netdata-rtx2080-windows-516.59-v11.txt"])
def test_windows_wddm(name: str, fixtures_dir: pathlib.Path) -> None:
    gpu = _parse(name, fixtures_dir).gpus[0]
    assert gpu.driver_model == "WDDM"
    assert gpu.persistence_mode is None  # "N/A" on Windows
    assert gpu.minor_number is None


def test_gtx1050_link_width_and_no_prolog(fixtures_dir: pathlib.Path) -> None:
    report = _parse("datakit-gtx1050-515.65.01-nodtd.txt", fixtures_dir)
    gpu = report.gpus[0]
    assert (gpu.pcie_width_max, gpu.pcie_width_current) == (16, 8)
    assert (gpu.pcie_gen_max, gpu.pcie_gen_current) == (3, 3)
    assert gpu.persistence_mode is True and gpu.architecture == "Pascal"
    assert report.schema is None


@pytest.mark.parametrize(
    ("name", "product"),
    [
        ("telegraf-quadro-p400-418.43-nodtd.txt", "Quadro P400"),
        ("telegraf-gtx1660ti-graphics-device-418.43-nodtd.txt", "Graphics Device"),
    ],
)
def test_no_doctype(name: str, product: str, fixtures_dir: pathlib.Path) -> None:
    report = _parse(name, fixtures_dir)
    assert report.schema is None and report.driver_version == "418.43" and report.cuda_version == "10.1"
    assert report.gpus[0].name == product
    assert report.gpus[0].bus_id == "0000:43:00.0"
    assert report.gpus[0].architecture is None  # the element came with schema v11


def test_hadoop_v8_two_p100s_without_cuda_version(fixtures_dir: pathlib.Path) -> None:
    report = _parse("hadoop-2x-tesla-p100-pcie-375.66-v8-asf-header.txt", fixtures_dir)
    assert report.schema == "v8" and report.cuda_version is None and report.error is None
    assert [gpu.bus_id for gpu in report.gpus] == ["0000:04:00.0", "0000:82:00.0"]
    assert [gpu.index for gpu in report.gpus] == [0, 1]
    assert [gpu.serial for gpu in report.gpus] == ["0320717030197", "0320717031755"]
    assert all(gpu.mig_mode_current is None and gpu.driver_model is None for gpu in report.gpus)


def test_trimmed_telegraf_file_gives_what_is_there(fixtures_dir: pathlib.Path) -> None:
    report = _parse("telegraf-gtx1070ti-v10-trimmed.txt", fixtures_dir)
    assert (report.driver_version, report.cuda_version, report.attached_gpus) == (None, None, None)
    gpu = report.gpus[0]
    assert gpu.index is None
    assert (gpu.name, gpu.bus_id, gpu.memory_total_mib, gpu.memory_used_mib) == (
        "GeForce GTX 1070 Ti",
        "0000:01:00.0",
        4096,
        42,
    )
    assert (gpu.pcie_gen_current, gpu.pcie_width_current, gpu.pcie_gen_max, gpu.pcie_width_max) == (1, 16, None, None)
    assert gpu.brand is None and gpu.persistence_mode is None


def test_v13_schema(fixtures_dir: pathlib.Path) -> None:
    report = _parse("telegraf-rtx4000-sff-ada-595.84-v13.txt", fixtures_dir)
    gpu = report.gpus[0]
    assert (report.schema, report.cuda_version) == ("v13", "13.2")
    assert (gpu.name, gpu.brand, gpu.architecture) == (
        "NVIDIA RTX 4000 SFF Ada Generation",
        "NVIDIA RTX",
        "Ada Lovelace",
    )
    assert gpu.mig_devices == [] and gpu.mig_mode_current is None  # <mig_devices>None</mig_devices>


# --------------------------------------------------------------------------- damage and junk


def test_prompt_before_and_after_the_xml() -> None:
    # Mutation of a real capture: a shell prompt line on either side, as in pasted terminals.
    clean = fixture_text("A/netdata-tesla-p100-pcie-510.47.03-v11.txt")
    report = parse_nvidia_smi_xml("user@host:~$ nvidia-smi -q -x\n" + clean + "\nuser@host:~$ ")
    assert report.error is None and report.schema == "v11" and report.gpus[0].name == "Tesla P100-PCIE-16GB"


def test_truncated_capture_keeps_what_came_before() -> None:
    text = fixture_text("A/datakit-8x-tesla-v100s-pcie-460.73.01-v11.txt")
    cut = text.index('<gpu id="00000000:00:10.0">')  # the fourth GPU starts here
    report = parse_nvidia_smi_xml(text[:cut])
    assert report.error is not None and report.error.kind == "truncated"
    assert report.driver_version == "460.73.01" and report.attached_gpus == 8
    assert [gpu.bus_id for gpu in report.gpus] == ["0000:00:0d.0", "0000:00:0e.0", "0000:00:0f.0"]
    assert all(gpu.index is None for gpu in report.gpus)  # 3 of 8 listed: positions prove nothing


def test_value_cut_mid_element_is_not_reported() -> None:
    text = fixture_text("A/datakit-tesla-v100-pcie-32gb-460.39-v11.txt")
    cut = text.index("<driver_version>") + len("<driver_version>460.3")
    report = parse_nvidia_smi_xml(text[:cut])
    assert report.driver_version is None  # not "460.3"
    assert report.error is not None and report.error.kind == "truncated"


def test_error_text_instead_of_xml() -> None:
    # nvidia-smi -q -x prints the same message as the table when the driver is not loaded
    text = fixture_text("C/err-couldnt-communicate-kernel-upgrade-gcp-pr18.txt")
    report = parse_nvidia_smi_xml(text)
    assert report.error is not None and report.error.kind == "couldnt_communicate" and not report.gpus


@pytest.mark.parametrize("text", ["", "hello", "<nvidia_smi_log", "<?xml version='1.0'?>\n<other/>"])
def test_unparsable(text: str) -> None:
    report = parse_nvidia_smi_xml(text)
    assert report == SmiReport(error=report.error) and report.error is not None
    assert report.error.kind == "unparsable"


# SYNTHETIC: written here, not captured.  An entity declared in the DOCTYPE must
# not be expanded (billion-laughs style snapshots); the parser drops the prolog.
SYNTHETIC_ENTITY = (
    '<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY v "535.54.03">]>\n'
    "<nvidia_smi_log><driver_version>&v;</driver_version></nvidia_smi_log>\n"
)

# SYNTHETIC: a schema that names the compute capability (none up to v13 does).
SYNTHETIC_COMPUTE_CAP = (
    '<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v99.dtd">\n'
    "<nvidia_smi_log><driver_version>999.1</driver_version><attached_gpus>1</attached_gpus>"
    '<gpu id="00000000:01:00.0"><product_name>Future GPU</product_name><compute_cap>12.0</compute_cap>'
    "</gpu></nvidia_smi_log>"
)

# SYNTHETIC: two documents back to back, as `nvidia-smi -q -x -l 1` prints them.
SYNTHETIC_TWO_DOCUMENTS = (
    "<nvidia_smi_log><driver_version>1.0</driver_version></nvidia_smi_log>\n"
    "<nvidia_smi_log><driver_version>2.0</driver_version></nvidia_smi_log>\n"
)


def test_synthetic_entities_are_not_expanded() -> None:
    report = parse_nvidia_smi_xml(SYNTHETIC_ENTITY)
    assert report.driver_version is None and report.error is not None


def test_synthetic_compute_cap_is_taken_with_its_source() -> None:
    report = parse_nvidia_smi_xml(SYNTHETIC_COMPUTE_CAP)
    gpu = report.gpus[0]
    assert (report.schema, gpu.index, gpu.compute_capability, gpu.compute_capability_source) == (
        "v99",
        0,
        "12.0",
        "nvidia-smi",
    )


def test_synthetic_first_of_several_documents() -> None:
    report = parse_nvidia_smi_xml(SYNTHETIC_TWO_DOCUMENTS)
    assert report.driver_version == "1.0" and report.error is None


# --------------------------------------------------------------------------- property tests

_NOISE = "<>/&;\"'= \t\n|:.-x0123456789ABCDEFN/A"  # what the XML is made of


@settings(deadline=None, database=None)
@given(st.text())
def test_any_text(text: str) -> None:
    assert_well_formed(parse_nvidia_smi_xml(text))


@settings(deadline=None, database=None)
@given(any_code_points())
def test_any_code_points_inside_the_root(text: str) -> None:
    assert_well_formed(
        parse_nvidia_smi_xml(f"<nvidia_smi_log><driver_version>{text}</driver_version></nvidia_smi_log>")
    )


@settings(deadline=None, database=None)
@given(decoded_bytes())
def test_any_bytes(text: str) -> None:
    assert_well_formed(parse_nvidia_smi_xml(text))


@settings(deadline=None, database=None)
@given(
    st.text(), st.sampled_from(["<nvidia_smi_log>", '<?xml version="1.0" ?>\n<nvidia_smi_log>', "</nvidia_smi_log>"])
)
def test_text_around_a_root_tag(text: str, tag: str) -> None:
    assert_well_formed(parse_nvidia_smi_xml(tag + text))
    assert_well_formed(parse_nvidia_smi_xml(text + tag))


@pytest.mark.skipif(not XML_TEXTS, reason="real captured fixtures not found")
@settings(
    deadline=None,
    database=None,
    max_examples=300,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated(XML_TEXTS, [path.name for path in XML_FILES], noise_alphabet=_NOISE, max_lines=20))
def test_mutated_real_captures(text: Mutated) -> None:
    text = str(text)
    report = parse_nvidia_smi_xml(text)
    assert_well_formed(report)
    # Whatever survives was written in the input between its own tags: nothing is made up.
    # (Entity and CR normalisation would change a value's spelling; leave those inputs out.)
    if "&" in text or "\r" in text:
        return
    if report.driver_version is not None:
        assert _between("driver_version", report.driver_version, text)
    for gpu in report.gpus:
        assert gpu.name is None or _between("product_name", gpu.name, text)
        assert gpu.uuid is None or _between("uuid", gpu.uuid, text)


def _between(tag: str, value: str, text: str) -> bool:
    return re.search(rf"<{tag}>\s*{re.escape(value)}\s*</{tag}>", text) is not None
