"""Every cause's fix resolves, and what a fix text tells a person to type is a real command line."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from gpudoctor.kb.causes import all_causes
from gpudoctor.kb.fix_texts import all_fix_texts
from gpudoctor_checks._cause_fixes import BUILDERS, GENERIC_FALLBACKS, known_keys

# The programs fix texts may start a line with: each is a real tool of a GPU machine (or gpudoctor itself).
KNOWN_PROGRAMS = {
    "sudo", "nvidia-smi", "python", "gpudoctor", "lsmod", "ls", "ldconfig", "echo", "export", "unset", "dkms",
    "mokutil", "printf", "systemctl", "docker", "wsl.exe", "which", "id", "nvcc", "df", "NCCL_DEBUG=INFO", "bash",
    "CUDA_LAUNCH_BLOCKING=1", "kubectl", "set", "podman", "curl", "sh", "sw_vers", "softwareupdate",
}  # fmt: skip


def test_every_cause_fix_key_resolves_to_exactly_one_home() -> None:
    keys = known_keys()
    for cause in all_causes().values():
        if cause.fix:
            assert cause.fix in keys, (cause.id, cause.fix)
    # A key is either built from the facts or a fix text; only the declared generic fallbacks are both.
    assert set(BUILDERS) & set(all_fix_texts()) == GENERIC_FALLBACKS


@pytest.mark.parametrize("fix", all_fix_texts().values(), ids=lambda f: f.id)
def test_fix_text_commands_are_real_shell_lines(fix) -> None:  # type: ignore[no-untyped-def]
    for command in fix.commands:
        first = shlex.split(command, comments=True)[0]
        assert first in KNOWN_PROGRAMS, (fix.id, command)
        # bash -n parses without running: quotes, pipes and substitutions are well formed.
        done = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, (fix.id, command, done.stderr)
