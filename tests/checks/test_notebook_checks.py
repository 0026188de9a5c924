"""PLAT010 and the runner's no-root rewrite on notebook platforms, run as the runner runs them.

All evidence here is SYNTHETIC: env.json in the shape gpudoctor's scan_environment writes (the variable names are
the knowledge base's, cited from public code; the values are made up), a sysfs PCI scan in the shape of
gpudoctor's own scan, and a hand-written os-release.
"""

from __future__ import annotations

from typing import Any

from gpudoctor.api import CheckContext, Finding, Fix, Severity
from gpudoctor.evidence.system_scan import scan_environment
from gpudoctor.facts.facts import Facts
from gpudoctor.registry import load_registry
from gpudoctor.results import Status
from gpudoctor.runner import run_checks
from gpudoctor.runner_notebook import without_root
from gpudoctor_checks import platform_notebook
from tests.synthetic.evidence import judge, make_evidence

ROOT_WORDS = ("apt", "dnf", "yum", "sudo", "install-script", "modprobe")
OS_RELEASE = 'NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\n'  # SYNTHETIC


def _colab_env(gpu: str = "0") -> dict[str, Any]:
    return scan_environment({"COLAB_RELEASE_TAG": "synthetic-colab-release", "COLAB_GPU": gpu, "HOME": "/root"})


def _pci(with_gpu: bool) -> dict[str, Any]:
    """SYNTHETIC sysfs scan: a T4 on the bus with no kernel driver bound, or an empty bus."""
    devices = [{"address": "0000:00:04.0", "vendor": "0x10de", "device": "0x1eb8", "class": "0x030200"}]
    return {"readable": True, "scanned": 5, "dmi": {}, "devices": devices if with_gpu else []}


def _fix_texts(results: list[Any]) -> list[str]:
    texts = []
    for result in results:
        for finding in result.findings:
            if finding.fix is not None:
                texts.append(" ".join((finding.fix.summary, *finding.fix.commands)))
    return texts


def test_plat010_does_not_apply_off_notebook_platforms() -> None:
    evidence = make_evidence(env_json=scan_environment({"HOME": "/root"}), pci_devices_json=_pci(False))
    result = judge(platform_notebook.notebook_gpu_runtime, evidence)
    assert result.status is Status.NOT_APPLICABLE


def test_a_colab_cpu_runtime_is_told_the_runtime_setting_not_a_driver() -> None:
    evidence = make_evidence(env_json=_colab_env("0"), pci_devices_json=_pci(False), os_release=OS_RELEASE)
    result = judge(platform_notebook.notebook_gpu_runtime, evidence)
    assert result.status is Status.WARNING
    assert "Google Colab runtime without a GPU" in result.summary and "COLAB_GPU=0" in result.summary
    fix = result.findings[0].fix
    assert fix is not None and not fix.needs_root and fix.commands == ()
    assert "Runtime → Change runtime type" in fix.summary and fix.url
    assert result.data["platform"] == "colab" and result.data["accelerator_requested"] == "none"


def test_a_gpu_runtime_asked_for_but_not_attached_says_so() -> None:
    evidence = make_evidence(env_json=_colab_env("1"), pci_devices_json=_pci(False))
    result = judge(platform_notebook.notebook_gpu_runtime, evidence)
    assert result.status is Status.WARNING
    assert "Google Colab says a GPU runtime was asked for (COLAB_GPU=1), yet no GPU or TPU is visible" in (
        result.summary
    )
    assert result.data["accelerator_requested"] == "GPU"


def test_a_kaggle_runtime_with_a_gpu_on_the_bus_is_ok() -> None:
    env = scan_environment({"KAGGLE_KERNEL_RUN_TYPE": "Interactive", "KAGGLE_DATA_PROXY_URL": "https://x.example"})
    result = judge(platform_notebook.notebook_gpu_runtime, make_evidence(env_json=env, pci_devices_json=_pci(True)))
    assert result.status is Status.OK
    assert result.summary.startswith("Kaggle Notebooks runtime with 1 accelerator visible")
    assert result.data == {
        "platform": "kaggle",
        "platform_name": "Kaggle Notebooks",
        "accelerator_requested": None,
        "evidence": ["KAGGLE_KERNEL_RUN_TYPE is set"],
        "accelerators_visible": 1,
    }


def test_no_check_offers_root_on_colab_without_a_gpu_or_a_driver() -> None:
    evidence = make_evidence(env_json=_colab_env("0"), pci_devices_json=_pci(False), os_release=OS_RELEASE)
    results = run_checks(load_registry().checks, Facts(evidence), CheckContext())
    assert all(r.status is not Status.CRASHED for r in results), [r.traceback for r in results if r.traceback]
    for text in _fix_texts(results):
        assert not any(word in text for word in ROOT_WORDS), text
    assert all(not f.fix.needs_root for r in results for f in r.findings if f.fix is not None)


def test_the_driver_install_becomes_the_platform_setting_on_colab_and_stays_elsewhere() -> None:
    on_colab = make_evidence(env_json=_colab_env("1"), pci_devices_json=_pci(True), os_release=OS_RELEASE)
    results = {r.code: r for r in run_checks(load_registry().checks, Facts(on_colab), CheckContext())}
    driver = results["PCI002"].findings[0].fix
    assert driver is not None and not driver.needs_root and driver.commands == ()
    assert driver.summary.startswith("You have no root on Google Colab")
    assert "Runtime → Change runtime type" in driver.summary
    for text in _fix_texts(list(results.values())):
        assert not any(word in text for word in ROOT_WORDS), text
    # The same machine off Colab keeps the distribution's driver install: the rewrite is the platform's doing.
    plain = make_evidence(
        env_json=scan_environment({"HOME": "/root"}), pci_devices_json=_pci(True), os_release=OS_RELEASE
    )
    elsewhere = {r.code: r for r in run_checks(load_registry().checks, Facts(plain), CheckContext())}
    fix = elsewhere["PCI002"].findings[0].fix
    assert fix is not None and fix.needs_root and any("apt" in c for c in fix.commands)


def test_other_root_fixes_are_left_to_the_platform_image() -> None:
    facts = Facts(make_evidence(env_json=scan_environment({"PAPERSPACE_NOTEBOOK_REPO_ID": "synthetic"})))
    shm = Finding(
        Severity.WARNING,
        "/dev/shm is 64 MiB",
        Fix("Remount /dev/shm larger.", ("sudo mount -o remount,size=8G /dev/shm",), needs_root=True),
        cause="shm-too-small",
    )
    note = Finding(Severity.INFO, "a note", Fix("pip install -U something"))
    rewritten = without_root([shm, note], facts)
    assert rewritten[1] is note
    fix = rewritten[0].fix
    assert fix is not None and not fix.needs_root and fix.commands == ()
    assert fix.summary.startswith("You have no root on Paperspace Gradient: the platform's image")
    assert "Remount /dev/shm larger" in fix.summary and "a custom container" in fix.summary


def test_off_notebook_platforms_the_findings_pass_unchanged() -> None:
    facts = Facts(make_evidence(env_json=scan_environment({"HOME": "/root"})))
    findings = [Finding(Severity.PROBLEM, "x", Fix("Install the driver.", ("sudo apt install x",), needs_root=True))]
    assert without_root(findings, facts) is findings
