"""SYNTHETIC report for the renderers' golden tests: hand-made, not captured.

Nothing here came from a real machine or from running the checks.  It exists to
exercise every branch a renderer has: each status, an info finding with
evidence, a warning, a problem whose fix needs root, a crashed check with a
traceback, a plugin area gpudoctor does not know, characters that need escaping
in Markdown tables (``|``) and XML (``<&>``), and GPU UUIDs so redaction shows.

Also home to the golden-file helper the render tests share.
"""

from __future__ import annotations

import os
import pathlib

from gpudoctor.results import CheckResult, Finding, Fix, Report, Severity, Status

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
GOLDEN_DIR = REPO_ROOT / "tests" / "golden"

# Fake but well-formed identifiers: the redaction patterns must match them.
GPU0_UUID = "GPU-1a2b3c4d-0000-1111-2222-333344445555"
GPU1_UUID = "GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff"

SYNTHETIC_TRACEBACK = """\
Traceback (most recent call last):
  File "gpudoctor/runner.py", line 42, in run_check
    outcome = check(facts)
  File "gpudoctor_checks/environment.py", line 17, in check_ld_library_path
    entries = facts.env["LD_LIBRARY_PATH"].split(":")
KeyError: 'LD_LIBRARY_PATH'
"""


def sample_report() -> Report:
    """A SYNTHETIC report covering every status and renderer branch (see module doc)."""
    results = [
        # Deliberately out of area order (driver before pci, a plugin in the middle)
        # so the renderers' grouping is exercised.
        CheckResult(
            code="DRV001",
            area="driver",
            title="Driver installed",
            status=Status.OK,
            summary="NVIDIA driver 535.54.03 is loaded",
            data={"version": "535.54.03", "module": "nvidia"},
            duration_s=0.0021,
        ),
        CheckResult(
            code="DRV002",
            area="driver",
            title="Persistence mode",
            status=Status.WARNING,
            summary="persistence mode is off on 2 GPUs",
            findings=[
                Finding(
                    Severity.WARNING,
                    "Persistence mode is off: every CUDA start re-initialises the GPUs",
                    fix=Fix(
                        "Enable persistence mode (or run nvidia-persistenced)", ("nvidia-smi -pm 1",), needs_root=True
                    ),
                    evidence=("nvidia-smi -q: Persistence Mode : Disabled",),
                    code="DRV002",
                )
            ],
            data={"persistence_mode": [False, False]},
            duration_s=0.0004,
        ),
        CheckResult(
            code="PCI001",
            area="pci",
            title="NVIDIA devices on the PCI bus",
            status=Status.OK,
            summary="2 NVIDIA GPUs found",
            findings=[
                Finding(
                    Severity.INFO,
                    "GPUs sit on two different PCIe root ports",
                    evidence=(
                        "07:00.0 3D controller: NVIDIA Corporation GA100",
                        "0a:00.0 3D controller: NVIDIA Corporation GA100",
                    ),
                )
            ],
            data={"count": 2, "bus_ids": ["0000:07:00.0", "0000:0a:00.0"]},
            duration_s=0.0012,
        ),
        CheckResult(
            code="ACME001",
            area="acme_fabric",
            title="Acme fabric link | plugin",
            status=Status.OK,
            summary="link up | 200 Gb/s",
            data={"link_gbps": 200},
            duration_s=0.25,
        ),
        CheckResult(
            code="CUDA001",
            area="cuda",
            title="CUDA toolkit matches the driver",
            status=Status.PROBLEM,
            summary="CUDA 12.4 toolkit needs driver >= 550.54.14, found 535.54.03",
            findings=[
                Finding(
                    Severity.PROBLEM,
                    "CUDA 12.4 toolkit needs a newer driver (>= 550.54.14 <r550>) & this one is 535.54.03",
                    fix=Fix(
                        "Upgrade the NVIDIA driver to the 550 branch",
                        ("apt-get update", "apt-get install -y cuda-drivers-550"),
                        needs_root=True,
                        url="https://docs.nvidia.com/deploy/cuda-compatibility/",
                    ),
                    evidence=("nvcc --version: release 12.4, V12.4.131",),
                    code="CUDA001",
                )
            ],
            data={"toolkit": "12.4", "driver_max": "12.2"},
            duration_s=0.0009,
        ),
        CheckResult(
            code="NVML001",
            area="nvml",
            title="NVML answers",
            status=Status.OK,
            summary=f"2 GPUs via NVML ({GPU0_UUID}, {GPU1_UUID})",
            data={"uuids": [GPU0_UUID, GPU1_UUID]},
            duration_s=0.031,
        ),
        CheckResult(
            code="CUDNN001",
            area="cudnn",
            title="cuDNN installed",
            status=Status.NOT_APPLICABLE,
            summary="no CUDA toolkit to pair cuDNN with",
            duration_s=0.0,
        ),
        CheckResult(
            code="ENV003",
            area="environment",
            title="LD_LIBRARY_PATH",
            status=Status.CRASHED,
            summary="the check itself failed: KeyError: 'LD_LIBRARY_PATH'",
            traceback=SYNTHETIC_TRACEBACK,
            duration_s=0.0001,
        ),
        CheckResult(
            code="GATE001",
            area="gates",
            title="Minimum GPU memory",
            status=Status.NOT_APPLICABLE,
            summary="no --min-gpu-memory gate asked for",
        ),
    ]
    return Report(
        results=results,
        source={"kind": "snapshot", "path": "snapshots/synthetic-a100-node"},
        machine={
            "os": "Debian GNU/Linux 12 (bookworm)",
            "kernel": "6.1.0-13-amd64",
            "gpus": [
                {
                    "index": 0,
                    "name": "NVIDIA A100-SXM4-80GB",
                    "memory_total_mib": 81920,
                    "compute_capability": "8.0",
                    "bus_id": "0000:07:00.0",
                    "uuid": GPU0_UUID,
                },
                {
                    "index": 1,
                    "name": "NVIDIA A100-SXM4-80GB",
                    "memory_total_mib": 81920,
                    "compute_capability": "8.0",
                    "bus_id": "0000:0A:00.0",
                    "uuid": GPU1_UUID,
                },
            ],
            "driver_version": "535.54.03",
            "cuda_driver_max": "12.2",
            "collect_duration_s": 0.31,
        },
        sections={"example_section": {"note": "SYNTHETIC"}},
    )


def check_golden(name: str, actual: str) -> None:
    """Compare ``actual`` with tests/golden/NAME exactly, or rewrite the file
    when GPUDOCTOR_UPDATE_GOLDEN=1 (then review the diff before committing)."""
    path = GOLDEN_DIR / name
    if os.environ.get("GPUDOCTOR_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8", newline="\n")
        return
    assert path.exists(), f"missing golden file {path}; run with GPUDOCTOR_UPDATE_GOLDEN=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, (
        f"output differs from {path}; if the change is intended, regenerate with "
        "GPUDOCTOR_UPDATE_GOLDEN=1 and review the diff"
    )


def report_strategy():
    """Hypothesis strategy of arbitrary (SYNTHETIC) reports, for renderer property tests."""
    from hypothesis import strategies as st

    from gpudoctor.results import Finding, Fix, Severity

    text = st.text(max_size=40)
    fixes = st.builds(
        Fix,
        summary=text,
        commands=st.lists(text, max_size=3).map(tuple),
        needs_root=st.booleans(),
        url=st.none() | text,
    )
    findings = st.builds(
        Finding,
        severity=st.sampled_from(list(Severity)),
        message=text,
        fix=st.none() | fixes,
        evidence=st.lists(text, max_size=2).map(tuple),
        code=st.just("") | st.from_regex(r"[A-Z]{3}[0-9]{3}", fullmatch=True),
    )
    results = st.builds(
        CheckResult,
        code=st.from_regex(r"[A-Z][A-Z0-9]{0,4}[0-9]{3}", fullmatch=True),
        area=st.sampled_from(["pci", "driver", "gpus", "cuda", "my_plugin"]) | st.text(min_size=1, max_size=10),
        title=text,
        status=st.sampled_from(list(Status)),
        summary=text,
        findings=st.lists(findings, max_size=3),
        data=st.dictionaries(st.text(max_size=8), st.integers() | text, max_size=3),
        duration_s=st.floats(min_value=0, max_value=1e4, allow_nan=False),
        traceback=st.none() | text,
    )
    machine = st.fixed_dictionaries(
        {},
        optional={
            "os": text,
            "driver_version": text,
            "cuda_driver_max": text,
            "gpus": st.lists(st.fixed_dictionaries({"index": st.integers(0, 7), "name": text}), max_size=3),
        },
    )
    source = st.sampled_from([{"kind": "live"}, {"kind": "snapshot", "path": "x.tar.gz"}])
    return st.builds(Report, results=st.lists(results, max_size=6), source=source, machine=machine)
