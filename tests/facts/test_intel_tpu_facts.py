"""Intel GPU and Google TPU facts merged from their sources: real captures from ../shared/fixtures/H-intel and
J-tpu, with SYNTHETIC sysfs scans / probe records / lock-file scans where only a live machine could give them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.accelerators import Vendor
from gpudoctor.facts.facts import Facts
from tests.helpers.fixtures import fixture_text
from tests.synthetic import framework_probe_json as synthetic

H = "H-intel/"
J = "J-tpu/"


def _facts(**items: tuple[str, str]) -> Facts:
    evidence = Evidence()
    for name, (kind, text) in items.items():
        evidence.add(EvidenceItem(name=name, kind=kind, text=text))
    return Facts(evidence)


def synthetic_sysfs(*functions: tuple[str, str, str, str, str | None]) -> str:
    """A SYNTHETIC scan_pci record: (address, vendor, device, class, bound driver)."""
    return json.dumps(
        {
            "readable": True,
            "devices": [
                {"address": a, "vendor": v, "device": d, "class": c, "driver": drv} for a, v, d, c, drv in functions
            ],
        }
    )


# ----------------------------------------------------------------------------------------------- Intel


def test_intel_from_xpu_smi_json_and_table_agree_on_the_one_device() -> None:
    for name in (
        "xpumanager-doc-xpu-smi-discovery-json-1x-ats-0x020a-preproduction.txt",
        "xpumanager-doc-xpu-smi-discovery-table-1x-ats-0x020a-preproduction.txt",
    ):
        intel = _facts(**{"xpu-smi.txt": ("command", fixture_text(H + name))}).intel
        assert [(g.index, g.bus_id, g.name) for g in intel.gpus] == [(0, "0000:4d:00.0", "Intel(R) Graphics [0x020a]")]
        assert intel.gpus[0].discrete is True  # xpu-smi lists data-center and Arc GPUs


def test_intel_a770_from_borderless_xpu_smi_is_discrete() -> None:
    text = fixture_text(H + "xpu-smi-discovery-d-arc-a770-borderless-new-format-excerpt-llamacpp-pr28725.txt")
    gpu = _facts(**{"xpu-smi.txt": ("command", text)}).intel.gpus[0]
    assert (gpu.discrete, gpu.device_id, gpu.firmware_version) == (True, "56a0", "DG02_1.3253")


def test_intel_windows_sycl_ls_igpu_and_a770_both_on_level_zero() -> None:
    text = fixture_text(H + "sycl-ls-windows-arc-a770-plus-uhd770-old-ext_oneapi-format-llamacpp-5513.txt")
    facts = _facts(**{"sycl-ls.txt": ("command", text)})
    intel = facts.intel
    assert [(g.index, g.name, g.discrete, g.level_zero) for g in intel.gpus] == [
        (0, "Intel(R) UHD Graphics 770", False, True),
        (1, "Intel(R) Arc(TM) A770 Graphics", True, True),
    ]
    assert intel.level_zero_gpu is True
    # Both are offered by Level Zero, so both count as the machine's accelerators.
    assert [a.vendor for a in facts.accelerators] == [Vendor.INTEL, Vendor.INTEL]


def test_intel_a750_opencl_only() -> None:
    text = fixture_text(H + "sycl-ls-verbose-ci-arc-a750-opencl-only-no-level_zero-intel-llvm-17535.txt")
    intel = _facts(**{"sycl-ls.txt": ("command", text)}).intel
    assert intel.level_zero_gpu is False
    assert [(g.name, g.level_zero) for g in intel.gpus] == [("Intel(R) Arc(TM) A750 Graphics", False)]


def test_intel_battlemage_from_lspci_excerpt() -> None:
    text = fixture_text(H + "lspci-s-vvv-arc-b580-battlemage-g21-excerpt-lact-890.txt")
    gpu = _facts(**{"lspci.txt": ("command", text)}).intel.gpus[0]
    assert (gpu.bus_id, gpu.discrete, gpu.sources) == ("0000:29:00.0", True, ("pci",))
    assert "Battlemage G21 [Arc B580]" in (gpu.name or "")


def test_intel_collect_env_names_four_max_1550() -> None:
    text = fixture_text(H + "collect_env-xpu-4x-data-center-gpu-max-1550-torch2.8-dev-excerpt-pytorch-pr137846.txt")
    intel = _facts(**{"torch-collect-env.txt": ("file", text)}).intel
    assert [g.name for g in intel.gpus] == ["Intel(R) Data Center GPU Max 1550"] * 4
    assert all(g.discrete for g in intel.gpus)


def test_synthetic_sysfs_igpu_and_unbound_arc_merge_with_sycl_ls_by_model() -> None:
    # Synthetic sysfs: an iGPU bound to i915 and an Arc A770 with no driver, plus the real Windows sycl-ls.
    sysfs = synthetic_sysfs(
        ("0000:00:02.0", "0x8086", "0xa780", "0x030000", "i915"),
        ("0000:03:00.0", "0x8086", "0x56a0", "0x030000", None),
    )
    lspci = (
        "00:02.0 VGA compatible controller: Intel Corporation Raptor Lake-S GT1 [UHD Graphics 770]\n"
        "03:00.0 VGA compatible controller: Intel Corporation DG2 [Arc A770]\n"
    )  # synthetic
    sycl = fixture_text(H + "sycl-ls-windows-arc-a770-plus-uhd770-old-ext_oneapi-format-llamacpp-5513.txt")
    intel = _facts(
        **{
            "pci-devices.json": ("json", sysfs),
            "lspci.txt": ("command", lspci),
            "sycl-ls.txt": ("command", sycl),
            "proc-modules.txt": ("file", "i915 3842048 35 - Live 0x0000000000000000\n"),
        }
    ).intel
    assert [(g.bus_id, g.kernel_driver, g.discrete) for g in intel.gpus] == [
        ("0000:00:02.0", "i915", False),
        ("0000:03:00.0", None, True),
    ]
    assert intel.kernel_driver == "i915" and intel.bus_scanned and intel.kernel_modules_known


def test_synthetic_desktop_igpu_beside_an_nvidia_card_is_no_accelerator() -> None:
    # Synthetic sysfs + lspci: an NVIDIA card and the CPU's UHD 770; only the NVIDIA card runs the work.
    sysfs = synthetic_sysfs(
        ("0000:00:02.0", "0x8086", "0xa780", "0x030000", "i915"),
        ("0000:01:00.0", "0x10de", "0x2684", "0x030000", "nvidia"),
    )
    lspci = "00:02.0 VGA compatible controller: Intel Corporation Raptor Lake-S GT1 [UHD Graphics 770]\n"
    facts = _facts(**{"pci-devices.json": ("json", sysfs), "lspci.txt": ("command", lspci)})
    assert [(g.bus_id, g.discrete) for g in facts.intel.gpus] == [("0000:00:02.0", False)]
    assert Vendor.INTEL not in {a.vendor for a in facts.accelerators}


def test_no_intel_evidence_is_empty() -> None:
    assert not _facts().intel.present


# ----------------------------------------------------------------------------------------------- TPU


def test_tpu_in_use_by_pid_and_misleading_warning_from_the_debug_log() -> None:
    text = fixture_text(
        J + "err-jax-debug-log-unable-to-initialize-backend-tpu-aborted-tpu-in-use-by-pid-jax-22070.txt"
    )
    tpu = _facts(**{"pasted-text.txt": ("file", text)}).tpu
    assert tpu.in_use_by_pid == 176028
    assert tpu.in_use_reported and tpu.misleading_libtpu_warning
    assert (tpu.jax_backend, tpu.jax_source, tpu.devices) == ("cpu", "paste", ())


def test_tpu_libtpu_already_in_use_falls_back_to_cpu() -> None:
    text = fixture_text(J + "err-libtpu-already-in-use-stale-lockfile-falling-back-to-cpu-jax-10192.txt")
    tpu = _facts(**{"pasted-text.txt": ("file", text)}).tpu
    assert tpu.in_use_reported and tpu.in_use_by_pid is None
    assert (tpu.jax_backend, tpu.jax_source) == ("cpu", "log")


def test_tpu_accel0_operation_not_permitted() -> None:
    text = fixture_text(
        J + "err-torch-xla-couldnt-open-dev-accel0-operation-not-permitted-tpu-vm-excerpt-pytorch-xla-3078.txt"
    )
    tpu = _facts(**{"pasted-text.txt": ("file", text)}).tpu
    assert tpu.device_open_error == "/dev/accel0 (Operation not permitted)"


def test_tpu_pasted_v2_8_listing_counts_four_chips_as_accelerators() -> None:
    text = fixture_text(J + "jax-devices-v2-8-tpu-vm-8-TpuDevice-jax0.2.17-jax-8809.txt")
    facts = _facts(**{"pasted-text.txt": ("file", text)})
    assert facts.tpu.devices is not None and len(facts.tpu.devices) == 8
    assert [a.vendor for a in facts.accelerators] == [Vendor.GOOGLE] * 4


def test_synthetic_v4_chips_on_the_bus_nodes_probe_and_lockfile() -> None:
    # Synthetic: four v4 chips (1ae0:005e) on the bus, their /dev/accelN, a JAX probe on the TPU with libtpu,
    # and a lock file held by one of this user's processes.
    sysfs = synthetic_sysfs(*((f"0000:0{i}:00.0", "0x1ae0", "0x005e", "0x120000", "asic") for i in range(4)))
    nodes = {"nodes": {f"/dev/accel{i}": {"char_device": True} for i in range(4)}, "groups": []}
    probe = {
        **synthetic.SYNTHETIC_JAX_GPU_OK,
        "default_backend": "tpu",
        "devices": [
            {"id": i, "platform": "tpu", "device_kind": "TPU v4", "process_index": 0, "coords": [i % 2, i // 2, 0],
             "core_on_chip": 0}
            for i in range(4)
        ],
        "libtpu": {"libtpu": "0.0.2"},
    }  # fmt: skip
    runtime = {"lockfile": {"path": "/tmp/libtpu_lockfile", "exists": True, "mtime": 1.0, "uid": 1000},
               "holders": [{"pid": 4242, "paths": ["/dev/accel0"]}]}  # fmt: skip
    facts = _facts(
        **{
            "pci-devices.json": ("json", sysfs),
            "accel-device-nodes.json": ("json", json.dumps(nodes)),
            "framework-jax.json": ("json", json.dumps(probe)),
            "tpu-runtime.json": ("json", json.dumps(runtime)),
        }
    )
    tpu = facts.tpu
    assert [(c.generation, c.device_node) for c in tpu.chips] == [("v4", f"/dev/accel{i}") for i in range(4)]
    assert tpu.devices is not None and [d.kind for d in tpu.devices] == ["TPU v4"] * 4
    assert tpu.devices[3].coords == (1, 1, 0)
    assert (tpu.jax_backend, tpu.libtpu_version, tpu.libtpu_installed) == ("tpu", "0.0.2", True)
    assert (tpu.lockfile, tpu.lockfile_uid, tpu.lock_holders) == ("/tmp/libtpu_lockfile", 1000, (4242,))
    accelerators = [a for a in facts.accelerators if a.vendor is Vendor.GOOGLE]
    assert [(a.architecture, a.driver_sees) for a in accelerators] == [("v4", True)] * 4


def test_no_tpu_evidence_is_empty() -> None:
    tpu = _facts().tpu
    assert not tpu.present and tpu.lockfile is None and not tpu.in_use_reported


def test_real_jax_probe_on_this_cpu_machine_reports_no_libtpu_and_no_tpu(framework_python: str) -> None:
    # The real JAX probe, run in the framework venv (CPU-only JAX): the new keys are there and read back.
    import pathlib
    import subprocess

    import gpudoctor.probes.jax_probe as probe_module

    done = subprocess.run(
        [framework_python, str(pathlib.Path(probe_module.__file__))], capture_output=True, text=True, timeout=300
    )
    record = json.loads(done.stdout)
    if not record.get("import_ok"):
        pytest.skip("jax is not installed in the framework venv")
    assert record["libtpu"] == {}
    assert all({"process_index", "coords", "core_on_chip"} <= set(d) for d in record["devices"])
    tpu = _facts(**{"framework-jax.json": ("json", done.stdout)}).tpu
    assert (tpu.libtpu_installed, tpu.jax_backend, tpu.devices) == (False, "cpu", ())


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=15), children, max_size=5),
    max_leaves=25,
)


@given(_JSON, _JSON, _JSON, st.text(max_size=500))
def test_any_runtime_probe_and_tool_output_gives_facts_without_raising(
    runtime: object, libtpu: object, devices: object, text: str
) -> None:
    probe = {**synthetic.SYNTHETIC_JAX_CPU_FALLBACK, "libtpu": libtpu, "devices": devices}
    facts = _facts(
        **{
            "tpu-runtime.json": ("json", json.dumps(runtime)),
            "framework-jax.json": ("json", json.dumps(probe)),
            "xpu-smi.txt": ("command", text),
            "sycl-ls.txt": ("command", text),
            "pasted-text.txt": ("file", text),
        }
    )
    assert facts.tpu is not None and facts.intel is not None
    facts.accelerators  # noqa: B018 - the merge must not raise either
