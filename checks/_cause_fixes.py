"""The fix for a root cause, by the cause's fix key (``gpudoctor.kb.causes``).

Keys whose commands depend on the machine are built here from the facts, by the same builders the checks use
(the driver route for this distribution, the PyTorch wheel for this driver and GPU); every other key is a fix
text of the knowledge base (``gpudoctor.kb.fix_texts``).  A test holds every cause's key resolvable.
"""

from __future__ import annotations

from typing import Callable

from gpudoctor.api import Fix
from gpudoctor.facts.facts import Facts
from gpudoctor_checks import _driver_init, _fixes, _frameworks


def _torch_wheel(summary: str) -> Callable[[Facts], Fix | None]:
    def build(facts: Facts) -> Fix | None:
        from gpudoctor_checks._frameworks import torch_wheel_fix

        torch = facts.torch
        if not torch.version:
            return None  # nothing known about the install: the generic text names the index to use
        fix, _ = torch_wheel_fix(facts, torch, summary, uninstall_first=True)
        return fix if fix is not None and fix.commands else None

    return build


def _rocm_torch(facts: Facts) -> Fix | None:
    """The ROCm wheel for this machine's ROCm (what ROCM020 prints); None where nothing says which."""
    if not facts.torch.version or "amd" not in facts.vendors_in_evidence:
        return None
    from gpudoctor_checks.rocm_frameworks import amd_targets, rocm_torch_fix

    fix = rocm_torch_fix(facts, facts.torch, amd_targets(facts))
    return fix if fix.commands else None


BUILDERS: dict[str, Callable[[Facts], Fix | None]] = {
    "install-driver": lambda facts: _fixes.install_driver_for(facts),
    "load-kernel-module": lambda facts: _fixes.load_kernel_module(),
    # Loading the module, and rebuilding it for the running kernel when that fails, are one route in the fix
    # catalogue (headers, DKMS, Secure Boot): the same commands DRV001 prints.
    "rebuild-kernel-module": lambda facts: _fixes.load_kernel_module(),
    "reboot-for-mismatch": lambda facts: _fixes.reboot_for_mismatch(),
    "blacklist-nouveau": lambda facts: _fixes.blacklist_nouveau(facts.os_release),
    "proprietary-module": lambda facts: _driver_init.proprietary_module_fix(
        facts.driver.kernel_version, facts.os_release
    ),
    "gpu-init-failed": lambda facts: _driver_init.init_failure_fix([]),
    "ld-library-path": lambda facts: _frameworks.shadowing_fix(facts.torch),
    "torch-cuda-build": _torch_wheel("Install a CUDA build of PyTorch."),
    "torch-for-driver": _torch_wheel("Install a PyTorch build whose CUDA this driver runs."),
    "torch-for-arch": _torch_wheel("Install a PyTorch build with kernels for this GPU."),
    "rocm-torch-install": _rocm_torch,
}


# Keys built from the facts that also have a generic fix text, shown when the facts cannot choose (nothing is
# known about the install): the text names the way, the builder the exact wheel.
GENERIC_FALLBACKS = frozenset({"torch-cuda-build", "torch-for-driver", "torch-for-arch", "rocm-torch-install"})


def fix_for(key: str | None, facts: Facts) -> Fix | None:
    """The fix a cause's key names, built for this machine where it can be; None for no key or an unknown one."""
    if not key:
        return None
    builder = BUILDERS.get(key)
    built = builder(facts) if builder is not None else None
    if built is not None:
        return built
    from gpudoctor.kb.fix_texts import all_fix_texts

    text = all_fix_texts().get(key)
    if text is None:
        return None
    return Fix(text.summary, text.commands, needs_root=text.needs_root, url=text.url)


def known_keys() -> frozenset[str]:
    """Every key this registry resolves (the builders' and the knowledge base's)."""
    from gpudoctor.kb.fix_texts import all_fix_texts

    return frozenset(BUILDERS) | frozenset(all_fix_texts())
