"""The checks' "install the driver" fix and the generated install script say the same thing on every distro the
generator knows: both are parsed into the same kind of operations (install these packages, run this as root, set
up this repository, enable these sources, reboot) and compared, so a change on one side alone fails here."""

from __future__ import annotations

import re
import shlex

import pytest

from gpudoctor.facts.model import OsRelease
from gpudoctor.generate import distros
from gpudoctor.generate.install_script import generate_install_script
from gpudoctor.generate.model import InstallScriptRequest, MachineTarget
from gpudoctor_checks import _fixes

Op = tuple[str, ...]
_KERNEL = "KERNEL_RELEASE"  # $(uname -r), kept as one word whether quoted or not


def _words(line: str) -> list[str]:
    return shlex.split(line.replace("$(uname -r)", _KERNEL).replace("\\$", "$"))


def _function(text: str, name: str) -> str:
    match = re.search(rf"^{name}\(\) \{{\n(.*?)^\}}", text, re.S | re.M)
    assert match, f"no function {name}"
    return match.group(1)


def _script_ops(text: str) -> list[Op]:
    """What the script's driver step does, in order, read from its step_driver and the helpers it calls."""
    ops: list[Op] = []
    for line in _function(text, "step_driver").splitlines():
        line = line.strip()
        if line.startswith("enable_epel"):
            ops.extend(_epel_ops(_function(text, "enable_epel")))
        elif line == "enable_debian_nonfree":
            body = _function(text, "enable_debian_nonfree")
            lines = re.search(r'run write_file "\$list" "(.*?)"\n', body, re.S)
            target = re.search(r'install -m 0644 "\$list" (\S+)', body)
            assert lines and target
            ops.append(("sources", target.group(1), *lines.group(1).splitlines()))
        elif line == "setup_cuda_repo":
            base = re.search(r'url="(\S+)/\$\(cuda_arch\)"', _function(text, "setup_cuda_repo"))
            assert base
            ops.append(("cuda-repo", base.group(1)))
        elif line.startswith("pkg_install "):
            ops.append(("install", *_words(line)[1:]))
        elif line.startswith("as_root "):
            op = ("root", *(w for w in _words(line)[1:] if w != "-y"))
            if not ops or ops[-1] != op:  # the --yes and the interactive branch run the same command
                ops.append(op)
        elif line == "REBOOT_NEEDED=1":
            ops.append(("reboot",))
    return ops


def _epel_ops(body: str) -> list[Op]:
    ops: list[Op] = []
    for line in body.splitlines():
        line = line.strip()
        if line.startswith("pkg_install "):
            ops.append(("install", *_words(line)[1:]))
        elif line.startswith("as_root "):
            ops.append(("root", *_words(line)[1:]))
        elif line.startswith("skip driver"):  # RHEL: the subscription step is the user's; the script names it
            enable = re.search(r"\((subscription-manager repos --enable \S+)\) and ", line)
            assert enable
            ops.append(("root", *_words(enable.group(1))))
            ops.append(("manual",))
    return ops


def _fix_ops(commands: tuple[str, ...]) -> list[Op]:
    """What the fix tells a person to type, in order."""
    ops: list[Op] = []
    for command in commands:
        if command.startswith("#"):
            if "install-script" not in command:  # the pointer to the generator is not a step
                ops.append(("manual",))
            continue
        if "| sudo tee " in command:
            printed, target = command.split("| sudo tee ")
            ops.append(("sources", target.strip(), *_words(printed)[2:]))
            continue
        words = _words(command)
        assert words[0] == "sudo" or words[0] in ("curl", "wget"), command
        words = [w for w in words if w != "-y"]
        if words[:2] == ["sudo", "reboot"]:
            ops.append(("reboot",))
        elif words[1:3] == ["apt-get", "update"] or words[1:3] == ["dpkg", "-i"]:
            continue  # pkg_install refreshes the lists itself; dpkg -i is the second half of the keyring download
        elif words[1:3] in (["apt-get", "install"], ["dnf", "install"]):
            ops.append(("install", *words[3:]))
        elif words[0] in ("curl", "wget") or "--add-repo" in words:
            url = words[-1]
            assert "/x86_64/" in url, command
            ops.append(("cuda-repo", url.split("/x86_64/")[0]))
        else:
            ops.append(("root", *words[1:]))
    return ops


def _os_release(distro: distros.Distro) -> OsRelease:
    return OsRelease(id=distro.os_ids[0], version_id=distro.version_id)


@pytest.mark.parametrize("token", distros.known_distros())
def test_install_driver_fix_runs_what_the_install_script_runs(token: str) -> None:
    distro = distros.DISTROS[token]
    script = generate_install_script(
        InstallScriptRequest(distro=token, framework=None, target=MachineTarget(source="test"))
    ).text
    fix = _fixes.install_driver(_os_release(distro))
    script_ops, fix_ops = _script_ops(script), _fix_ops(fix.commands)
    assert any(op[0] == "install" for op in script_ops) and script_ops[-1] == ("reboot",)
    assert fix_ops == script_ops


def test_the_comparison_sees_a_difference() -> None:
    # The parser is not blind: a fix for another distro family differs from this script.
    script = generate_install_script(
        InstallScriptRequest(distro="rocky9", framework=None, target=MachineTarget(source="test"))
    ).text
    fix = _fixes.install_driver(OsRelease(id="ubuntu", version_id="24.04"))
    assert _fix_ops(fix.commands) != _script_ops(script)


@pytest.mark.parametrize("token", [t for t in distros.known_distros() if not t.startswith("wsl")])
def test_a_pascal_gpus_fix_and_script_pin_the_same_legacy_branch(token: str) -> None:
    # A GTX 1050 (Pascal, compute capability 6.1): its last branch is R580, proprietary modules only. The fix the
    # checks print and the script both pin that, never the open modules or an unpinned newest branch.
    distro = distros.DISTROS[token]
    pascal = ("6.1",)
    target = MachineTarget(compute_capabilities=pascal, gpu_names=("GeForce GTX 1050",), source="synthetic test")
    script = generate_install_script(InstallScriptRequest(distro=token, framework=None, target=target)).text
    fix = _fixes.install_driver(_os_release(distro), pascal)
    script_ops, fix_ops = _script_ops(script), _fix_ops(fix.commands)
    assert fix_ops == script_ops
    installed = {word for op in script_ops if op[0] == "install" for word in op[1:]}
    assert not any(word.startswith("nvidia-open") for word in installed)
    if distro.driver_default != "debian":
        stream = [op for op in script_ops if op[:4] == ("root", "dnf", "module", "enable")]
        pinned = "cuda-drivers-580" in installed or (stream and stream[0][-1] == "nvidia-driver:580-dkms")
        assert pinned, script_ops


def test_drv001_on_a_pascal_machine_without_a_driver_pins_what_the_script_pins() -> None:
    # Synthetic machine: lspci shows a GTX 1050, no nvidia module, Ubuntu 24.04. DRV001's fix reads the GPU's
    # compute capability from the name on the bus (no driver answers yet) and pins R580, proprietary, as the
    # script generated for the same machine does.
    from gpudoctor.facts.facts import Facts
    from gpudoctor.generate.target import target_from_facts
    from gpudoctor_checks import driver
    from tests.synthetic.evidence import judge, make_evidence

    evidence = make_evidence(
        lspci_txt="01:00.0 VGA compatible controller [0300]: NVIDIA Corporation GP107 [GeForce GTX 1050] "
        "[10de:1c81] (rev a1)\n",
        os_release='NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n',
        proc_modules_txt="ext4 1 0 - Live 0x0000000000000000\n",
    )
    result = judge(driver.kernel_module_loaded, evidence)
    fix = next(finding.fix for finding in result.findings if finding.fix is not None)
    assert "sudo apt-get install -y cuda-drivers-580" in fix.commands
    target = target_from_facts(Facts(evidence))
    script = generate_install_script(InstallScriptRequest(framework=None, target=target)).text
    assert _fix_ops(fix.commands) == _script_ops(script)
