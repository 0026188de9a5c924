"""Xid codes by meaning and the health limits of the knowledge base: lookups, the data, junk in, the views."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor import kb
from gpudoctor.facts.nvidia_smi_xml import parse_nvidia_smi_xml
from gpudoctor.kb import describe, xid
from gpudoctor.kb.errors import KnowledgeError
from tests.helpers.fixtures import REPO, fixture_files, load_script, read_fixture, validate_broken_copy
from tests.helpers.strategies import any_code_points, json_like

DATA = REPO / "gpudoctor" / "kb" / "data"
XID_DATA = json.loads((DATA / "xid.json").read_text(encoding="utf-8"))
HEALTH_DATA = json.loads((DATA / "health_limits.json").read_text(encoding="utf-8"))
# The codes the brief asks the table to explain (issue 5).
REQUIRED = (
    8,
    13,
    31,
    32,
    38,
    43,
    45,
    48,
    61,
    62,
    63,
    64,
    68,
    69,
    74,
    79,
    92,
    94,
    95,
    109,
    119,
    120,
    121,
    123,
    136,
    140,
    143,
    144,
    145,
    146,
    147,
    148,
    149,
    150,
    154,
)


kb_validate = load_script("kb_validate")


# --------------------------------------------------------------------------- Xid lookups


def test_fallen_off_the_bus():
    info = kb.xid_info(79)
    assert info.meaning == "GPU has fallen off the bus"
    assert (info.severity, info.category) == ("problem", "hardware")
    assert info.mnemonic == "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS" and info.nvidia_immediate == "RESTART_BM"
    assert "sudo reboot" in info.commands and ("sudo", "reboot") in info.argvs and "XID_CATALOG" in info.sources
    assert "reboot" in info.action.lower()


@pytest.mark.parametrize("code", [13, 31, 43])
def test_application_faults_are_info(code):
    info = kb.xid_info(code)
    assert (info.severity, info.category) == ("info", "application")
    assert "application" in info.action.lower()


@pytest.mark.parametrize(
    ("code", "category"),
    [
        (48, "memory"),
        (64, "memory"),
        (74, "nvlink"),
        (95, "memory"),
        (119, "driver"),
        (120, "driver"),
        (140, "memory"),
        (150, "nvlink"),
    ],
)
def test_take_out_of_service(code, category):
    info = kb.xid_info(code)
    assert info.severity == "problem" and info.category == category
    assert info.commands, "a problem Xid comes with something to run"


def test_memory_errors_by_containment():
    assert kb.xid_info(94).severity == "warning"  # contained: one application stopped
    assert kb.xid_info(95).severity == "problem"  # uncontained: reset before anything runs again
    assert kb.xid_info(63).severity == "info"  # a remap recorded: the repair worked
    assert kb.xid_info(64).severity == "problem"  # the remap could not be recorded


def test_every_required_code_is_described():
    assert set(REQUIRED) <= set(kb.xid_codes())
    assert list(kb.xid_codes()) == sorted(kb.xid_codes())


@pytest.mark.parametrize("code", [79, "79", "Xid 79", " xid79 ", "XID 79"])
def test_code_spellings(code):
    assert kb.xid_info(code).code == 79


@pytest.mark.parametrize(
    "code", [999, 0, 1, 12, "", "seventy-nine", "79.0", "-79", True, None, 79.0, [79], -1, 10**9, "9" * 50]
)
def test_unknown_or_junk_codes(code):
    assert kb.xid_info(code) is None
    line = kb.describe_xid(code)
    assert "not in the knowledge base" in line and "https://docs.nvidia.com/deploy/xid-errors/" in line


def test_describe_one_line():
    line = kb.describe_xid(79)
    assert line.startswith("Xid 79: GPU has fallen off the bus \u2014 problem (hardware): ")
    assert "\n" not in line
    assert kb.describe_xid(999) == (
        "Xid 999: not in the knowledge base (see https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html)"
    )


def test_commands_are_filled_with_the_gpu_index():
    info = kb.xid_info(48, gpu=3)
    assert ("sudo", "nvidia-smi", "--gpu-reset", "-i", "3") in info.argvs
    assert "sudo nvidia-smi --gpu-reset -i 3" in info.commands
    assert len(info.command_reasons) == len(info.commands) == len(info.argvs) and all(info.command_reasons)
    assert [shlex.split(line) for line in info.commands] == [list(argv) for argv in info.argvs]
    for argv in info.argvs:
        assert all(isinstance(arg, str) and arg for arg in argv)
        assert not any("{" in arg or "}" in arg or "<" in arg for arg in argv), argv


@pytest.mark.parametrize(
    ("gpu", "shown"),
    [
        ("PCI:0000:1b:00", "0000:1b:00.0"),
        ("00000000:1B:00.0", "00000000:1B:00.0"),
        (" 0000:3d:00.1 ", "0000:3d:00.1"),
    ],
)
def test_commands_take_the_bus_id_the_xid_line_names(gpu, shown):
    assert f"sudo nvidia-smi --gpu-reset -i {shown}" in kb.xid_info(48, gpu=gpu).commands


@pytest.mark.parametrize("gpu", [None, -1, True, "3", 2.0, "PCI:zz:1b:00", "0000:1b:00.9", "0000:1b:00; rm -rf /"])
def test_commands_without_a_usable_gpu_say_so(gpu):
    reset = [argv for argv in kb.xid_info(48, gpu=gpu).argvs if "--gpu-reset" in argv]
    assert reset == [("sudo", "nvidia-smi", "--gpu-reset", "-i", "<index>")]


def test_no_row_leaves_a_placeholder_once_filled():
    for code in kb.xid_codes():
        for argv in kb.xid_info(code, gpu=0).argvs:
            assert not any(re.search(r"[{}<>]", arg) for arg in argv), (code, argv)


def test_recovery_action_of_xid_154():
    line = "NVRM: Xid (PCI:0000:1b:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)"
    assert kb.recovery_action_severity(line) == "problem"
    assert kb.recovery_action_severity("... changed from 0x2 (Node Reboot Required) to 0x0 (None)") == "info"
    assert kb.recovery_action_severity("changed from 0x0 (None) to 0x3 (Drain P2P)") == "warning"
    assert kb.recovery_action_severity("nothing useful here, None at all") is None
    assert kb.recovery_action_severity(None) is None and kb.recovery_action_severity(154) is None


@given(json_like() | any_code_points())
def test_xid_lookups_take_anything(value):
    info = kb.xid_info(value, gpu=value)
    assert info is None or info.severity in xid.SEVERITIES
    assert kb.describe_xid(value).startswith("Xid ")
    assert kb.recovery_action_severity(value) in (None, *xid.SEVERITIES)


@given(st.integers(min_value=-10, max_value=20_000))
def test_every_integer_is_known_or_none(code):
    info = kb.xid_info(code)
    assert (info is not None) == (code in kb.xid_codes())


# --------------------------------------------------------------------------- the Xid data


def test_every_row_is_sourced_and_in_the_allowed_sets():
    sources = XID_DATA["sources"]
    for row in XID_DATA["xids"]:
        assert row["sources"] and all(key in sources for key in row["sources"]), row["code"]
        assert row["severity"] in xid.SEVERITIES and row["category"] in xid.CATEGORIES, row["code"]
        assert row["meaning"].strip() and row["action"].strip(), row["code"]
        assert all(name in XID_DATA["commands"] for name in row["commands"]), row["code"]
    for entry in XID_DATA["commands"].values():
        assert entry["argv"] and all(isinstance(arg, str) for arg in entry["argv"])
        assert all(key in sources for key in entry["sources"])
    assert all(source["url"].startswith("https://") for source in sources.values())


def test_rows_whose_source_is_unclear_say_so():
    # Codes NVIDIA's Ampere+ catalog lists as unused: the row must say where its meaning came from.
    assert "unused" in kb.xid_info(61).note.lower() and "GPUD" in kb.xid_info(61).sources
    assert "unused" in kb.xid_info(123).note.lower()
    assert "RESTART_FM" in kb.xid_info(45).note and "unclear" in kb.xid_info(45).note


# --------------------------------------------------------------------------- health limits


def test_retired_page_limits():
    assert kb.retired_pages_limit() == 63  # DCGM_LIMIT_MAX_RETIRED_PAGES
    assert kb.retired_pages_capacity() == 64  # NVIDIA: at most 64 retirements
    assert kb.retired_pages_dbe_soft_limit() == 15
    assert kb.retired_pages_over_limit(60, 3) is True and kb.retired_pages_over_limit(60, 2) is False
    assert kb.retired_pages_over_limit(63, None) is True  # one known count past the limit is enough
    assert kb.retired_pages_over_limit(2, None) is None and kb.retired_pages_over_limit(None, None) is None
    assert kb.retired_pages_over_limit(-1, True) is None


def test_row_remap_and_link_limits():
    assert (kb.row_remap_capacity(), kb.row_remap_bank_limit()) == (512, 8)
    assert kb.is_datacenter_brand("Tesla", None) is True
    assert kb.pcie_replay_rate_limit() == 8 and kb.nvlink_crc_rate_limit() == 100.0
    assert kb.health_limit("row_remap_failure").value is True
    assert kb.health_limit("no such limit") is None and kb.health_limit(None) is None


def test_temperature_margin_is_a_marked_default():
    margin = kb.health_limit("temperature_margin_c")
    assert margin.gpudoctor_default and "gpudoctor default" in margin.note
    assert kb.temperature_margin_c() == margin.value == 5
    assert all(not limit.gpudoctor_default for limit in kb.all_health_limits() if limit is not margin)
    assert kb.near_slowdown(85, 90) is True and kb.near_slowdown(84, 90) is False
    assert kb.near_slowdown(80, 90, margin_c=10) is True
    for args in ((None, 90), (85, None), (float("nan"), 90), (85, "90"), (True, 90), (85, 90, -1), (900, 90)):
        assert kb.near_slowdown(*args) is None


@pytest.mark.parametrize(
    ("brand", "name", "expected"),
    [
        ("Tesla", None, True),
        ("NVIDIA", "NVIDIA A100-SXM4-80GB", True),
        ("GRID", None, True),
        ("Grid", None, True),
        ("GeForce", "NVIDIA GeForce RTX 4090", False),
        ("NVIDIA RTX", None, False),
        ("Quadro", None, False),
        ("Titan", None, False),
        (None, "Tesla V100-SXM2-16GB", True),
        ("Unknown", "NVIDIA H100 80GB HBM3", True),
        (None, "NVIDIA GeForce RTX 3090", False),
        (None, "NVIDIA L40S", True),
        (None, "Graphics Device", None),
        (None, None, None),
        ("", "", None),
        (42, ["A100"], None),
    ],
)
def test_datacenter_brands(brand, name, expected):
    assert kb.is_datacenter_brand(brand, name) is expected


def test_brands_of_the_real_captures():
    found = {}
    for path in fixture_files("A"):
        for gpu in parse_nvidia_smi_xml(read_fixture(path)).gpus:
            found[gpu.name] = kb.is_datacenter_brand(getattr(gpu, "brand", None), gpu.name)
    if not found:
        pytest.skip("real nvidia-smi captures not found")
    for name, answer in found.items():
        if any(word in (name or "") for word in ("A100", "A10G", "Tesla")):
            assert answer is True, name
        if any(word in (name or "") for word in ("GeForce", "Quadro", "RTX")):
            assert answer is False, name


@given(json_like() | any_code_points(), json_like() | any_code_points())
def test_health_lookups_take_anything(a, b):
    assert kb.is_datacenter_brand(a, b) in (True, False, None)
    assert kb.near_slowdown(a, b) in (True, False, None)
    assert kb.retired_pages_over_limit(a, b) in (True, False, None)


def test_every_limit_is_sourced():
    sources = HEALTH_DATA["sources"]
    for row in HEALTH_DATA["limits"] + [HEALTH_DATA["persistence"]]:
        assert row["sources"] and all(key in sources for key in row["sources"]), row


# --------------------------------------------------------------------------- the views


def test_kb_xid_topic():
    text = describe.render_kb_text(topic="xid")
    assert "GPU has fallen off the bus" in text and "RESTART_BM" in text and "Sources:" in text
    assert all(re.search(rf"^{code}\s", text, re.MULTILINE) for code in REQUIRED)
    assert describe.render_kb_text(topic="xids") == text
    assert "xid" in describe.TOPICS and "health" in describe.TOPICS


def test_kb_xid_one_code():
    text = describe.render_kb_text(topic="xid", item="79")
    assert text.startswith("Xid 79: GPU has fallen off the bus\n")
    assert "sudo reboot" in text and "RESTART_BM" in text and "[XID_CATALOG]" in text and "[DPR]" not in text
    assert describe.render_kb_text(topic="xid:79") == text
    assert describe.render_kb_text(topic="xid", item="999").startswith("Xid 999: not in the knowledge base")
    with pytest.raises(KnowledgeError):
        describe.render_kb_text(topic="xid", item="abc")
    with pytest.raises(KnowledgeError):
        describe.render_kb_text(topic="torch", item="2.5")


def test_kb_health_topic():
    text = describe.render_kb_text(topic="health")
    assert "retired_pages_max" in text and "63" in text and "(gpudoctor default)" in text
    assert "DcgmGPUHardwareLimits.h" in text and "data-center brands: Tesla, NVIDIA" in text
    assert describe.render_kb_text(topic="limits") == text


# --------------------------------------------------------------------------- kb_validate


def test_validator_passes_the_shipped_files():
    assert kb_validate.validate() == []


def _xid(data, code):
    return next(row for row in data["xids"] if row["code"] == code)


def _limit(data, name):
    return next(row for row in data["limits"] if row["name"] == name)


@pytest.mark.parametrize(
    ("filename", "change", "words"),
    [
        ("xid.json", lambda d: _xid(d, 79).update(sources=[]), "Xid 79: no sources"),
        ("xid.json", lambda d: _xid(d, 79).update(sources=["NOPE"]), "unknown source key"),
        ("xid.json", lambda d: _xid(d, 79).update(severity="fatal"), "severity 'fatal' is not one of"),
        ("xid.json", lambda d: _xid(d, 79).update(category="gpu"), "category 'gpu' is not one of"),
        ("xid.json", lambda d: _xid(d, 79).update(commands=["no_such"]), "unknown command 'no_such'"),
        ("xid.json", lambda d: d["xids"].append(dict(d["xids"][0])), "not unique and ascending"),
        (
            "xid.json",
            lambda d: d["commands"]["gpu_reset"].update(argv=["nvidia-smi", "-r", "-i", "{index}"]),
            "placeholder other than {gpu}",
        ),
        ("xid.json", lambda d: d["commands"]["gpu_reset"].update(argv="sudo nvidia-smi -r"), "argv is not a list"),
        ("health_limits.json", lambda d: _limit(d, "retired_pages_max").update(value=-3), "neither a flag nor"),
        (
            "health_limits.json",
            lambda d: _limit(d, "temperature_margin_c").update(note="five degrees"),
            "a gpudoctor default whose note does not say so",
        ),
        ("health_limits.json", lambda d: d["limits"].append(dict(d["limits"][0])), "duplicate name"),
        ("health_limits.json", lambda d: d["persistence"]["other_brands"].append("Tesla"), "share ['tesla']"),
    ],
)
def test_validator_catches_broken_copies(tmp_path, filename, change, words):
    errors = validate_broken_copy(tmp_path, filename, change)
    assert any(words in error for error in errors), errors
