"""rocminfo parsed from real captures (shared fixtures G-amd, INDEX.md section G3); never raises on garbage."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.facts.amd_model import AmdToolReport
from gpudoctor.facts.rocminfo import parse_rocminfo
from tests.helpers.fixtures import fixture_files, fixture_text, read_fixture
from tests.helpers.strategies import fixture_named, mutated

ROCMINFO_FILES = [p for p in fixture_files("G-amd") if "rocminfo" in p.name]

# SYNTHETIC: a discrete Radeon beside a Ryzen iGPU, cut down from the shape of rocminfo's output in
# https://github.com/ROCm/ROCm/issues/4257 (values shortened; not a capture).
SYNTHETIC_APU = """ROCk module version 6.10.5 is loaded
*******
Agent 1
*******
  Name:                    AMD Ryzen 5 7600 6-Core Processor
  Marketing Name:          AMD Ryzen 5 7600 6-Core Processor
  Device Type:             CPU
*******
Agent 2
*******
  Name:                    gfx1100
  Uuid:                    GPU-42147bdb07129c03
  Marketing Name:          AMD Radeon RX 7900 GRE
  Node:                    1
  Device Type:             GPU
  Chip ID:                 29772(0x744c)
  BDFID:                   768
  Compute Unit:            80
  Memory Properties:
  Pool Info:
    Pool 1
      Segment:                 GLOBAL; FLAGS: COARSE GRAINED
      Size:                    16760832(0xffc000) KB
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx1100
*******
Agent 3
*******
  Name:                    gfx1036
  Uuid:                    GPU-XX
  Marketing Name:          AMD Ryzen 5 7600 6-Core Processor
  Node:                    2
  Device Type:             GPU
  Chip ID:                 5710(0x164e)
  BDFID:                   5120
  Compute Unit:            2
  Memory Properties:       APU
*** Done ***
"""


def test_four_mi300x_agents() -> None:
    report = parse_rocminfo(fixture_text("G-amd/gls-rocminfo-4x-mi300x-gfx942.txt"))
    assert report.module_loaded is True and report.driver_version is None and report.error is None
    assert len(report.gpus) == 4  # 6 agents: the 2 CPU agents are skipped
    gpu = report.gpus[0]
    assert gpu.gfx_target == "gfx942" and gpu.gfx_features == "sramecc+:xnack-" and gpu.gfx == "gfx942:sramecc+:xnack-"
    assert gpu.name == "AMD Instinct MI300X" and gpu.device_id == "74a1" and gpu.compute_units == 304
    assert gpu.vram_mib == 201310208 // 1024  # the GPU pool in KB, about 192 GiB
    assert gpu.bus_id == "0000:26:00.0" and gpu.unique_id == "0x8d1457e2c20f59d2"
    assert [g.kfd_node for g in report.gpus] == [2, 3, 4, 5]


def test_dev_kfd_permission_denied() -> None:
    text = fixture_text("G-amd/err-rocminfo-dev-kfd-permission-denied-rocm-terminal-container-rocm-docker-116.txt")
    report = parse_rocminfo(text)
    assert report.gpus == () and report.module_loaded is True
    assert report.error == "Unable to open /dev/kfd read-write: Permission denied"


def test_integrated_gpu_beside_a_discrete_one_synthetic() -> None:
    report = parse_rocminfo(SYNTHETIC_APU)
    discrete, igpu = report.gpus
    assert report.driver_version == "6.10.5"
    assert discrete.integrated is False and discrete.name == "AMD Radeon RX 7900 GRE" and discrete.vram_mib == 16368
    assert discrete.bus_id == "0000:03:00.0"
    assert igpu.integrated is True and igpu.gfx_target == "gfx1036" and igpu.device_id == "164e"
    assert igpu.name is None  # the CPU's name printed for the GPU agent is not a GPU name
    assert igpu.vram_mib is None and igpu.unique_id is None


def test_module_not_loaded_synthetic() -> None:
    assert parse_rocminfo("ROCk module is NOT loaded, possibly no GPU devices\n").module_loaded is False


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_never_raises_on_text(text: str) -> None:
    assert isinstance(parse_rocminfo(text), AmdToolReport)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_never_raises_on_damaged_captures(data: st.DataObject) -> None:
    fixture_named(ROCMINFO_FILES, "rocminfo")
    texts = [read_fixture(p) for p in ROCMINFO_FILES] + [SYNTHETIC_APU]
    damaged = data.draw(mutated(texts, [p.name for p in ROCMINFO_FILES] + ["synthetic-apu"], noise_alphabet=":() \n"))
    assert isinstance(parse_rocminfo(str(damaged)), AmdToolReport)
