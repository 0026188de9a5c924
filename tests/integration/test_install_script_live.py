"""The install scripts for real on this Debian 12 machine: shellcheck and bash -n over every golden script, the
debian12 script's --dry-run (nothing executed), and its venv + framework step for real with torch CPU from the
local wheel mirror (the one scripts/setup-framework-venv.sh relies on), never a CUDA torch build."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpudoctor.generate.install_script import generate_install_script
from gpudoctor.generate.model import InstallScriptRequest, MachineTarget

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "install-scripts"
SCRIPTS = sorted(GOLDEN.glob("*.sh"))
# This machine as the generator sees it: Debian 12, NVIDIA user space 535 installed, no kernel module.
_HERE = MachineTarget(driver_version="535.309.01", distro_id="debian", distro_version="12", source="this machine")
_TORCH_WHEELS = Path("/opt/wheels")


def _is_debian12() -> bool:
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return False
    return "ID=debian" in text and 'VERSION_ID="12"' in text


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_shellcheck_and_bash_n(script: Path) -> None:
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True).returncode == 0
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt-get install -y shellcheck, or scripts/install-linters.sh)")
    done = subprocess.run(["shellcheck", "-S", "warning", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _write(tmp_path: Path, request: InstallScriptRequest) -> Path:
    path = tmp_path / "install.sh"
    path.write_text(generate_install_script(request).text)
    path.chmod(0o755)
    return path


def _in_container(root: str = "") -> bool:
    """The script's own in_container markers, read under ``root`` ("" is this machine's /)."""
    if Path(f"{root}/.dockerenv").exists() or Path(f"{root}/run/.containerenv").exists():
        return True
    try:
        cgroup = Path(f"{root}/proc/1/cgroup").read_text()
    except OSError:
        return False
    return re.search(r"/(docker|kubepods|containerd|lxc)", cgroup) is not None


def _markers_under(text: str, root: Path) -> str:
    """The script with its in_container markers read under a stand-in root (a folder standing in for /) instead of
    this machine's: the rest of the script, and what it executes, is unchanged."""
    replaced = (
        text.replace("[ -e /.dockerenv ]", f"[ -e {root}/.dockerenv ]")
        .replace("[ -e /run/.containerenv ]", f"[ -e {root}/run/.containerenv ]")
        .replace("/proc/1/cgroup", f"{root}/proc/1/cgroup")
    )
    assert replaced.count(str(root)) == 3, "the script's container markers changed: update this test"
    return replaced


@pytest.mark.skipif(not _is_debian12(), reason="needs a Debian 12 machine (the CI container)")
@pytest.mark.parametrize("where", ["this machine", "stand-in host", "stand-in container"])
def test_debian12_dry_run_executes_nothing(tmp_path: Path, where: str) -> None:
    venv = tmp_path / "venv-marker"
    script = _write(
        tmp_path,
        InstallScriptRequest(
            container_toolkit=True, cuda_toolkit="12.2", cudnn=True, framework_version="2.13", target=_HERE
        ),
    )
    in_container = _in_container()
    if where != "this machine":
        root = tmp_path / "root"
        (root / "proc" / "1").mkdir(parents=True)
        (root / "proc" / "1" / "cgroup").write_text("0::/init.scope\n")  # synthetic: a host's systemd
        in_container = where == "stand-in container"
        if in_container:
            (root / ".dockerenv").touch()
        script.write_text(_markers_under(script.read_text(), root))
    before = sorted(os.listdir("/etc/apt/sources.list.d"))
    done = subprocess.run(
        ["bash", str(script), "--dry-run", "--yes", "--venv", str(venv)], capture_output=True, text=True, timeout=120
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "OS: debian 12" in out
    if in_container:
        # Inside a container the driver, headers and reboot are the host's: nothing of them is planned.
        assert "= skip driver: inside a container: no driver, kernel headers or reboot here; on the host:" in out
        assert "--gpus all" in out
        assert "reboot needed: no" in out
        assert "nvidia-driver" not in out and "linux-headers" not in out
    # The driver: user space 535 without a kernel module -> planned (Debian's R535 meets torch cu12x's floor).
    elif shutil.which("nvidia-smi") and not Path("/proc/driver/nvidia/version").exists():
        assert "no NVIDIA kernel driver answers" in out
        assert "apt-get install -y nvidia-driver firmware-misc-nonfree" in out
        assert "reboot needed: yes" in out
        assert "  would:   driver: Debian's nvidia-driver firmware-misc-nonfree" in out
    elif Path("/proc/driver/nvidia/version").exists():
        assert "= skip driver" in out
    else:  # no NVIDIA user space at all: the driver is planned
        assert "no NVIDIA driver found: it will be installed" in out
        assert "apt-get install -y nvidia-driver firmware-misc-nonfree" in out and "reboot needed: yes" in out
    assert "+ curl -fsSL --proto =https" in out and "run verify_key" not in out  # printed, via run
    assert "+ verify_key" in out
    assert f"-m venv {venv}" in out
    assert "dry run: nothing was changed" in out
    summary = out.split("dry run: nothing was changed", 1)[1]
    assert "  would:   " in summary and "  done:" not in summary  # planned, not done
    # Nothing ran: the venv was not made, no apt source appeared.
    assert not venv.exists()
    assert sorted(os.listdir("/etc/apt/sources.list.d")) == before


@pytest.mark.skipif(not _is_debian12(), reason="needs a Debian 12 machine (the CI container)")
def test_os_guard_refuses_another_distro(tmp_path: Path) -> None:
    script = _write(tmp_path, InstallScriptRequest(distro="rhel9", target=_HERE))
    done = subprocess.run(["bash", str(script), "--dry-run", "--yes"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3 and "the script is for Red Hat Enterprise Linux 9" in done.stderr


def _local_index() -> str | None:
    """The file:// index pip is configured with here (pip.conf), the same mirror setup-framework-venv.sh uses."""
    done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if "index-url" in line:
            for word in line.split("=", 1)[1].strip("'\" ").split():
                if word.startswith("file://"):
                    return word
    return None


@pytest.mark.slow
@pytest.mark.skipif(not _is_debian12(), reason="needs a Debian 12 machine (the CI container)")
def test_python_step_installs_torch_cpu_for_real(tmp_path: Path) -> None:
    wheels = sorted(_TORCH_WHEELS.glob("torch-2.13.0+cpu-*.whl")) if _TORCH_WHEELS.is_dir() else []
    index = _local_index()
    if not wheels or index is None:
        pytest.skip("the local torch 2.13.0 CPU wheel mirror (/opt/wheels + a file:// index in pip.conf) is absent")
    venv = tmp_path / "venv"
    script = _write(tmp_path, InstallScriptRequest(framework_version="2.13", target=_HERE))
    # The local mirror replaces the torch index; PIP_FIND_LINKS offers the CPU wheel, which pip prefers
    # (2.13.0+cpu sorts above 2.13.0) and no CUDA build is reachable from file:// indexes.
    env = dict(os.environ, GPUDOCTOR_PIP_INDEX_URL=index, PIP_FIND_LINKS=str(_TORCH_WHEELS))
    done = subprocess.run(
        ["bash", str(script), "--only", "python", "--yes", "--venv", str(venv)],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "apt-get" not in done.stdout  # only the python step ran
    check = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import torch; print(torch.__version__)"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert check.returncode == 0 and check.stdout.strip() == "2.13.0+cpu", check.stdout + check.stderr
    freeze = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
    ).stdout
    assert "nvidia-" not in freeze  # no CUDA runtime wheels came along
    # Run again: the step is skipped.
    again = subprocess.run(
        ["bash", str(script), "--only", "python", "--yes", "--venv", str(venv)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert again.returncode == 0 and "= skip python" in again.stdout


def _shell_function(text: str, name: str) -> str:
    import re

    match = re.search(rf"^{name}\(\) \{{\n.*?^\}}\n", text, re.S | re.M)
    assert match, f"no function {name}"
    return match.group(0)


def test_verify_key_with_real_gpg_trusts_only_the_exact_fingerprint(tmp_path: Path) -> None:
    # A throwaway key made here with real gpg (not one of NVIDIA's: there is no network). The script's own
    # verify_key accepts it only under its full fingerprint: not a suffix such as a key id, not another key's.
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed")
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    env = {**os.environ, "GNUPGHOME": str(home)}
    made = subprocess.run(
        [
            "gpg",
            "--batch",
            "--passphrase",
            "",
            "--quick-gen-key",
            "synthetic test key <t@example>",
            "ed25519",
            "sign",
            "1d",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    key = tmp_path / "test.pub"
    subprocess.run(["gpg", "--batch", "--armor", "--output", str(key), "--export"], check=True, env=env, timeout=30)
    listing = subprocess.run(
        ["gpg", "--batch", "--with-colons", "--show-keys", str(key)],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    ).stdout
    fingerprint = next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))
    script = SCRIPTS[0].read_text(encoding="utf-8")
    program = 'say() { printf "%s\\n" "$*"; }\n' + _shell_function(script, "verify_key") + 'verify_key "$1" "$2"\n'

    def verify(expected: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-c", program, "verify", str(key), expected], capture_output=True, text=True, env=env, timeout=30
        )

    assert len(fingerprint) == 40 and verify(fingerprint).returncode == 0
    assert verify(fingerprint[-8:]).returncode == 1  # a short key id is not enough
    wrong = verify("610C7B14E068A878070DA4E99CD0A493D42D0685")  # NVIDIA's RPM key: not this file
    assert wrong.returncode == 1 and "not trusting it" in wrong.stderr
    (tmp_path / "junk.pub").write_text("not a key\n")
    assert (
        subprocess.run(
            ["bash", "-c", program, "verify", str(tmp_path / "junk.pub"), fingerprint],
            capture_output=True,
            text=True,
            env=env,
            timeout=30,
        ).returncode
        == 1
    )
