"""``gpudoctor fleet slurm-config``: the slurm.conf lines and the wrapper slurmd's empty environment needs."""

from __future__ import annotations

import subprocess
import sys


def _config(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "fleet", "slurm-config", *args], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_slurm_conf_lines_name_the_wrapper_for_both_hooks() -> None:
    text = _config("--wrapper-path", "/etc/slurm/gd-hook", "--interval", "600")
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert lines == [
        "HealthCheckProgram=/etc/slurm/gd-hook",
        "HealthCheckInterval=600",
        "HealthCheckNodeState=ANY,CYCLE",
        "Prolog=/etc/slurm/gd-hook",
    ]
    assert "#   exec " in text  # the wrapper is shown too, commented


def test_the_wrapper_carries_path_gpudoctor_level_and_budget() -> None:
    script = _config("--wrapper-only", "--gpudoctor", "/opt/gd bin/gpudoctor", "--level", "standard", "--budget", "30",
                     "--from", "/snaps/{node}", "--unknown", "drain")  # fmt: skip
    assert script.startswith("#!/bin/sh\n")
    assert "\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nexport PATH\n" in script
    assert script.rstrip().splitlines()[-1] == (
        "exec '/opt/gd bin/gpudoctor' slurm-healthcheck --level standard --budget 30 --unknown drain "
        "--from '/snaps/{node}'"
    )
    default = _config("--wrapper-only").rstrip().splitlines()[-1]
    assert default.endswith("slurm-healthcheck --level quick --budget 45")


def test_a_hostile_wrapper_path_or_gpudoctor_path_cannot_add_a_slurm_conf_line() -> None:
    """Every non-comment line is one of the four gpudoctor writes, whatever the paths hold."""
    refused = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "fleet", "slurm-config", "--wrapper-path", "/x\nSlurmUser=evil"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1 and "--wrapper-path" in refused.stderr
    text = _config("--gpudoctor", "/opt/gd\nSlurmUser=evil\n", "--from", "/s/{node}\nProlog=/tmp/evil")
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert [line.split("=")[0] for line in lines] == [
        "HealthCheckProgram", "HealthCheckInterval", "HealthCheckNodeState", "Prolog",
    ]  # fmt: skip
    assert lines[-1] == "Prolog=/etc/slurm/gpudoctor-healthcheck"
