"""`gpudoctor install-script` for AMD GPUs (ROCm): golden files, shellcheck, the key checked before it is trusted,
every step checking before it acts, a dry run that lists what it would do, a second run that skips what is done,
the torch index for the ROCm release, and the refusals.

The machines are synthetic MachineTargets; the knowledge base (kb/rocm_install, kb/rocm_wheels) and the shell
fragments are the real ones.  GPUDOCTOR_UPDATE_GOLDEN=1 rewrites the golden files.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from gpudoctor.generate.install_script import generate_install_script
from gpudoctor.generate.model import GenerationRefused, InstallScriptRequest, MachineTarget
from gpudoctor.kb import rocm_install
from gpudoctor.kb.rocm_wheels import index_url, newest_variant_for, rocm_variants
from tests.synthetic.sample_report import GOLDEN_DIR, check_golden

SHELLCHECK = "/usr/bin/shellcheck"
CASES = {
    "rocm-ubuntu24.04": InstallScriptRequest(vendor="amd", distro="ubuntu24.04"),
    "rocm6.2-ubuntu22.04-no-framework": InstallScriptRequest(rocm="6.2", distro="ubuntu22.04", framework=None),
    "rocm-rhel9.4": InstallScriptRequest(vendor="amd", distro="rhel9", target=MachineTarget(distro_version="9.4")),
    "rocm-rocky8": InstallScriptRequest(vendor="amd", distro="rocky8", python="3.11"),
    "rocm-ubuntu24.04-in-container": InstallScriptRequest(
        vendor="amd", distro="ubuntu24.04", target=MachineTarget(container="docker")
    ),
    # Synthetic machine with AMD GPUs only: ROCm without being asked.
    "rocm-auto-ubuntu22.04": InstallScriptRequest(
        distro="ubuntu22.04",
        target=MachineTarget(gpu_vendor="amd", gfx_targets=("gfx90a",), amd_gpu_names=("AMD Instinct MI210",)),
    ),
}
GENERATED = {name: generate_install_script(request).text for name, request in CASES.items()}


def _function(text: str, name: str) -> str:
    match = re.search(rf"^{name}\(\) \{{\n(.*?)^\}}", text, re.S | re.M)
    assert match, f"no function {name}"
    return match.group(1)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    check_golden(f"rocm/{name}.sh", GENERATED[name])


def test_no_orphan_golden_files():
    assert {p.name for p in (GOLDEN_DIR / "rocm").glob("*.sh")} == {f"{name}.sh" for name in CASES}


@pytest.mark.skipif(not os.access(SHELLCHECK, os.X_OK), reason="shellcheck is not installed at /usr/bin/shellcheck")
@pytest.mark.parametrize("name", sorted(CASES))
def test_shellcheck_and_bash_n(name, tmp_path):
    script = tmp_path / "install.sh"
    script.write_text(GENERATED[name], encoding="utf-8")
    done = subprocess.run([SHELLCHECK, "-S", "warning", str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True, timeout=30).returncode == 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_script_shape(name):
    text = GENERATED[name]
    assert text.startswith("#!/usr/bin/env bash\n") and "\nset -euo pipefail\n" in text and "@@" not in text
    for option in ("--dry-run", "--yes", "--help", "--force-os", "--only"):
        assert option in text
    assert "# Regenerate: gpudoctor install-script --vendor amd --rocm " in text
    assert not re.search(r"\|\s*(sudo\s+)?(ba|z|da)?sh\b", text)  # never a download piped into a shell
    code = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in code if "NVIDIA" in line or "nvidia" in line]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_key_is_checked_against_its_full_fingerprint_before_it_is_trusted(name):
    text = GENERATED[name]
    url, fingerprint = rocm_install.signing_key()
    assert re.fullmatch(r"[0-9A-F]{40}", fingerprint)
    assert f"readonly ROCM_KEY_FINGERPRINT={fingerprint}\n" in text and f"readonly ROCM_KEY_URL={url}\n" in text
    body = _function(text, "setup_rocm_repo")
    fresh = body.split("ensure_prereqs", 1)[1]
    verify = fresh.index('run verify_key "$WORK/rocm.gpg.key" "$ROCM_KEY_FINGERPRINT"')
    trust = max(fresh.find("--dearmor"), fresh.find("rpm --import"))
    assert -1 < verify < trust
    # An existing setup is re-checked, not trusted because it is there.
    existing = body.split("ensure_prereqs", 1)[0]
    assert "verify_key" in existing and "check_repo_lines" in existing
    assert "gpgcheck=0" not in text and "--no-gpg-checks" not in text and "gpgkey=http" not in text


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_step_checks_before_it_acts(name):
    text = GENERATED[name]
    guards = {
        "step_driver": ("rocm_driver_done", "skip driver"),
        "step_rocm": ("pkg_installed rocm",),
        "step_python": ('"$VENV/bin/python" -c "import',),
    }
    steps = re.search(r"^readonly STEPS=(.*)$", text, re.M).group(1).strip("'").split()
    for step in steps:
        body = _function(text, f"step_{step}")
        first_guard = min(body.find(g) for g in guards[f"step_{step}"] if g in body)
        first_action = min((body.find(w) for w in ("pkg_install ", "as_root ", "run ") if w in body), default=-1)
        assert first_action == -1 or first_guard < first_action, (name, step)


def test_no_driver_step_inside_a_container():
    text = GENERATED["rocm-ubuntu24.04-in-container"]
    driver = _function(text, "step_driver")
    assert "amdgpu-dkms" in driver and "pkg_install" not in driver and "skip driver" in driver
    # A script made outside a container still skips the driver when it runs in one.
    assert "if in_container; then" in _function(GENERATED["rocm-ubuntu24.04"], "rocm_driver_done")


def test_driver_and_groups_follow_amds_steps():
    ubuntu, rhel = GENERATED["rocm-ubuntu24.04"], GENERATED["rocm-rhel9.4"]
    assert 'pkg_install "linux-headers-$(uname -r)" "linux-modules-extra-$(uname -r)"' in ubuntu
    assert 'pkg_install "kernel-headers-$(uname -r)" "kernel-devel-$(uname -r)"' in rhel
    assert "enable_epel || return 0" in rhel
    assert (
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/amdgpu/6.2.2/ubuntu noble main"
        in ubuntu
    )
    assert " baseurl=https://repo.radeon.com/amdgpu/6.2.2/el/9.4/main/x86_64/ " in rhel
    assert " baseurl=https://repo.radeon.com/rocm/el9/6.2.2/main " in rhel
    for text in (ubuntu, rhel):
        assert "pkg_install amdgpu-dkms" in text and "pkg_install rocm" in text
        assert 'as_root usermod -a -G "${missing// /,}" "$user"' in text
        assert "/opt/rocm/bin/rocminfo" in text


@pytest.mark.parametrize("rocm", [r.rocm for r in rocm_install.rocm_releases()])
def test_the_rocm_torch_index_for_each_release_with_install_steps(rocm):
    text = generate_install_script(InstallScriptRequest(vendor="amd", rocm=rocm, distro="ubuntu22.04")).text
    requirement = re.search(r"^readonly PIP_REQUIREMENT=(.*)$", text, re.M).group(1).strip("'")
    index = re.search(r"^readonly PIP_INDEX_DEFAULT=(.*)$", text, re.M).group(1).strip("'")
    torch, variant = newest_variant_for(rocm)
    assert requirement == f"torch=={torch}.*" and index == index_url(variant) and variant in rocm_variants(torch)


def _fake_bin(tmp_path: Path, installed: tuple[str, ...]) -> dict[str, str]:
    """Synthetic stand-ins for the package tools: dpkg-query/rpm answer "installed" for ``installed`` only."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    names = " ".join(installed)
    scripts = {
        "dpkg-query": f'for p in {names}; do [ "$p" = "${{@: -1}}" ] && {{ echo "install ok installed"; exit 0; }}; done; exit 1',
        "rpm": f'for p in {names}; do [ "$p" = "${{@: -1}}" ] && exit 0; done; exit 1',
    }
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text(f"#!/usr/bin/env bash\n{body}\n", encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def _run(text: str, tmp_path: Path, env: dict[str, str], *args: str) -> str:
    script = tmp_path / "install.sh"
    script.write_text(text, encoding="utf-8")
    done = subprocess.run(
        ["bash", str(script), "--dry-run", "--force-os", "--only", "driver,rocm", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_dry_run_lists_would_steps_and_a_second_run_skips_what_is_done(tmp_path):
    text = GENERATED["rocm-ubuntu24.04"]
    first = _run(text, tmp_path / "a", _fake_bin((tmp_path / "a"), ()))
    assert "dry run: nothing was changed" in first and "would:   rocm: ROCm 6.2.2 user space (rocm)" in first
    assert "+ apt-get install rocm" in first or "+ sudo apt-get install rocm" in first
    # Done already (synthetic: the package tools say amdgpu-dkms and rocm are installed): nothing is installed.
    again = _run(text, tmp_path / "b", _fake_bin((tmp_path / "b"), ("amdgpu-dkms", "rocm")))
    assert "= skip rocm: the rocm packages are installed" in again and "= skip driver:" in again
    assert "apt-get install" not in again and "would:" not in again


def test_a_key_that_is_not_amds_stops_the_script(tmp_path):
    # Synthetic key made here: verify_key (common.sh) must refuse it against AMD's fingerprint.
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed")
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    env = {**os.environ, "GNUPGHOME": str(home)}
    made = subprocess.run(
        ["gpg", "--batch", "--passphrase", "", "--quick-gen-key", "synthetic@example.invalid", "ed25519", "sign", "1d"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    if made.returncode != 0:
        pytest.skip(f"gpg cannot make a key here: {made.stderr[-200:]}")
    key = tmp_path / "rocm.gpg.key"
    key.write_bytes(subprocess.run(["gpg", "--export", "--armor"], capture_output=True, env=env, check=True).stdout)
    text = GENERATED["rocm-ubuntu24.04"]
    verify = re.search(r"^verify_key\(\) \{\n.*?^\}\n", text, re.S | re.M).group(0)
    program = "set -euo pipefail\nsay() { printf '%s\\n' \"$*\"; }\n" + verify
    program += f'verify_key "{key}" {rocm_install.signing_key()[1]}\n'
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1 and "not trusting it" in done.stderr


@pytest.mark.parametrize(
    ("request_", "words"),
    [
        (InstallScriptRequest(vendor="amd", distro="debian12"), "AMD's ROCm docs list"),
        (InstallScriptRequest(vendor="amd", distro="wsl-ubuntu24.04"), "AMD's ROCm docs list"),
        (InstallScriptRequest(vendor="amd", distro="ubuntu24.04", framework="tensorflow"), "torch only"),
        (InstallScriptRequest(vendor="amd", distro="ubuntu24.04", cuda_toolkit="12.8"), "NVIDIA's"),
        (InstallScriptRequest(vendor="amd", distro="ubuntu24.04", rocm="6.1.2"), "install steps for"),
        (InstallScriptRequest(vendor="amd", distro="ubuntu24.04", framework_version="2.7"), "publishes no ROCm wheel"),
    ],
)
def test_refusals(request_, words):
    with pytest.raises(GenerationRefused) as raised:
        generate_install_script(request_)
    assert words in str(raised.value) and "\n" not in str(raised.value)


def test_nvidia_scripts_are_untouched_by_default():
    text = generate_install_script(InstallScriptRequest(distro="ubuntu24.04")).text
    assert "NVIDIA GPU software" in text and "rocm" not in text.lower()
