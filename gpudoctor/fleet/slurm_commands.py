"""Slurm's own commands (scontrol, sinfo, srun), found even where slurmd gave us no PATH, and run through
the hardened runner.

slurmd runs Prolog and HealthCheckProgram with an empty environment: "for security reasons, these
programs do not have a search path set" (https://slurm.schedmd.com/prolog_epilog.html).  So the PATH is
searched first, then the places Slurm packages and site builds put their binaries.
"""

from __future__ import annotations

import os
import shutil

from gpudoctor.evidence.model import EvidenceItem
from gpudoctor.evidence.run_command import run_command

# Debian/Ubuntu/RHEL packages, /usr/local builds, and the usual --prefix of site installs.
USUAL_DIRS = ("/usr/bin", "/usr/local/bin", "/opt/slurm/bin", "/usr/local/slurm/bin", "/opt/slurm/current/bin")
# scontrol/sinfo answer within Slurm's MessageTimeout (10 s by default) or not at all.
QUERY_TIMEOUT_S = 20.0


def find_slurm_program(name: str, environ: dict[str, str] | None = None) -> str | None:
    """The full path of ``name`` (scontrol, sinfo, srun): on PATH, else in :data:`USUAL_DIRS`, else None."""
    env = os.environ if environ is None else environ
    found = shutil.which(name, path=env.get("PATH")) if env.get("PATH") else None
    if found:
        return os.path.abspath(found)
    for directory in USUAL_DIRS:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def run_slurm_command(
    name: str, args: list[str], timeout: float = QUERY_TIMEOUT_S, max_output: int = 4_000_000
) -> EvidenceItem:
    """``name args...`` through the hardened runner; the environment passes on as it is (``SLURM_CONF``
    when set: without it and without /etc/slurm/slurm.conf, Slurm's commands look for a config server)."""
    program = find_slurm_program(name)
    if program is None:
        item = EvidenceItem(name=name, kind="command", argv=[name, *args])
        item.error = f"{name} not found (not on PATH, nor in {', '.join(USUAL_DIRS)}): is this a Slurm node?"
        return item
    return run_command(name, [program, *args], timeout, max_output=max_output)


def failure_of(item: EvidenceItem) -> str | None:
    """Why a Slurm command failed, in one line (its error, else its last stderr line), or None if it worked."""
    if item.error:
        return item.error
    if item.exit_code == 0:
        return None
    lines = [line.strip() for line in (item.stderr or "").splitlines() if line.strip()]
    return lines[-1] if lines else f"{item.argv[0] if item.argv else 'command'} exited with code {item.exit_code}"
