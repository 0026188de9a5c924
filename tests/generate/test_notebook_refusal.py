"""install-script refuses on a hosted notebook platform: one line, exit 2, the platform and its own way to a GPU.

The notebook environments are SYNTHETIC: Colab's and Kaggle's variable names (cited in the knowledge base from
kagglehub's env.py) with made-up values, set on a gpudoctor run in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gpudoctor.commands.install_script import live_notebook_refusal
from gpudoctor.evidence import markers_notebook

GPUDOCTOR = [sys.executable, "-m", "gpudoctor"]
SNAPSHOT = Path(__file__).resolve().parents[1] / "recorded" / "cpu-container-debian"
SYNTHETIC_COLAB = {"COLAB_RELEASE_TAG": "synthetic-colab-release", "COLAB_GPU": "0"}


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any notebook marker, plus ``extra``."""
    markers = set(markers_notebook.ENV_VALUES) | set(markers_notebook.ENV_PRESENCE)
    env = {k: v for k, v in os.environ.items() if k not in markers}
    env.update(extra)
    return env


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GPUDOCTOR, *args], capture_output=True, text=True, env=env, timeout=120, check=False)


def test_install_script_on_synthetic_colab_is_refused_in_one_line_naming_the_platform_and_its_setting() -> None:
    ran = _run("install-script", env=_clean_env(**SYNTHETIC_COLAB))
    assert ran.returncode == 2, ran.stderr
    assert ran.stdout == ""
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1, ran.stderr
    assert lines[0].startswith("gpudoctor: error: this is Google Colab (COLAB_RELEASE_TAG is set")
    assert "Runtime → Change runtime type" in lines[0] and "no install script" in lines[0]


def test_an_explicit_distro_does_not_make_a_notebook_a_machine_to_install_on(tmp_path: Path) -> None:
    env = _clean_env(KAGGLE_KERNEL_RUN_TYPE="Interactive")
    ran = _run("install-script", "--distro", "ubuntu22.04", "-o", str(tmp_path / "s.sh"), env=env)
    assert ran.returncode == 2 and "this is Kaggle Notebooks" in ran.stderr
    assert "Settings → Accelerator" in ran.stderr
    assert not (tmp_path / "s.sh").exists()


def test_a_snapshot_of_another_machine_is_not_refused_on_a_notebook() -> None:
    ran = _run("install-script", "--from", str(SNAPSHOT), "--distro", "ubuntu22.04", env=_clean_env(**SYNTHETIC_COLAB))
    assert "no install script" not in ran.stderr
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("#!")


def test_the_refusal_is_none_off_notebook_platforms() -> None:
    assert live_notebook_refusal(_clean_env()) is None
    assert live_notebook_refusal({"COLAB_GPU": "1"}) is not None
