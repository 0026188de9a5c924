"""The probe protocol: every constant both sides need, the probe scripts and gpudoctor that runs them.

gpudoctor (``gpudoctor.evidence``, ``gpudoctor.facts``) imports it as ``gpudoctor.probes.protocol``; the probe
scripts run by file path in the target Python import it as the top-level ``protocol`` beside them.  So it
holds plain values only, uses the standard library only and stays importable by Python 3.8.
"""

from __future__ import annotations

# The version of the framework probes' JSON contract (``gpudoctor/facts/framework_model.py``) and of the
# smoke probes' (``gpudoctor/facts/smoke_model.py``); a reader refuses what it does not know.
PROBE_VERSION = 1
SMOKE_VERSION = 1

# The frameworks with a probe script, in the order they are reported.
FRAMEWORKS = ("torch", "tensorflow", "jax", "cupy")
# The frameworks with smoke workloads.
SMOKE_FRAMEWORKS = ("torch", "tensorflow")

# The probe scripts, by file name in the probes directory.
LOCATE_SCRIPT = "locate_probe.py"

# The snapshot file of the smoke run's JSON (a public contract, like ``probe_file_name``).
SMOKE_FILE = "smoke.json"

# A progress line on a smoke probe's stderr: this prefix, then a JSON object
# {"stage", "detail", "done", "total"}; every other stderr line is log.
PROGRESS_PREFIX = "@@gpudoctor-progress "

# The caller may name the file that takes a probe's fd 1/2 while the framework runs: if the probe then
# dies (a segfault in a CUDA library), what the framework logged up to that point is still on disk.
CAPTURE_FILE_ENV = "GPUDOCTOR_PROBE_CAPTURE_FILE"

# Smoke modes and the budget of each, in seconds: quick is the whole suite in about 20 s on an H100 and
# < 30 s on a 2-core CPU; full has bigger sizes and more repeats, numbers worth comparing between machines.
SMOKE_MODES = ("quick", "full")
DEFAULT_SMOKE_MODE = "quick"
SMOKE_BUDGET_S = {"quick": 25.0, "full": 180.0}
# What ``--devices`` may name: every device, the CPU only, the GPUs only.
SMOKE_DEVICE_CHOICES = ("all", "cpu", "cuda")
# Beyond the budget the probe itself keeps: interpreter start-up, printing the JSON, a CUDA call that
# takes its time to return.  Past budget + grace the probe is hung and gets killed.
TIMEOUT_GRACE_S = 20.0


def probe_file_name(framework: str) -> str:
    """The snapshot file name of a framework's probe output (a public contract)."""
    return "framework-%s.json" % framework


def probe_script_name(framework: str) -> str:
    """The file name of a framework's probe script."""
    return "%s_probe.py" % framework


def smoke_script_name(framework: str) -> str:
    """The file name of a framework's smoke probe script."""
    return "smoke_%s.py" % framework


def smoke_budget_s(mode: str) -> float:
    """The default budget of a smoke mode (an unknown mode gets quick's)."""
    return SMOKE_BUDGET_S.get(mode, SMOKE_BUDGET_S[DEFAULT_SMOKE_MODE])
