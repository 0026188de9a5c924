"""Find the checks: built-ins and plugins, through one entry-point group.

Order is explicit and stable: built-in areas in the order of ``BUILTIN_ORDER``,
then plugins by entry-point name; within a module, definition order.

Nothing here fails quietly: a module that does not import is a load error (the
run reports it and exits 3), and finding no checks at all is a :class:`RegistryError`.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from types import ModuleType

from gpudoctor.api import CheckSpec
from gpudoctor.distributions import EntryPoint

ENTRY_POINT_GROUP = "gpudoctor.checks"
BUILTIN_PACKAGE = "gpudoctor_checks"
BUILTIN_ORDER = (
    "collection",
    "platform",
    "platform_links",
    "platform_notebook",
    "platform_image",
    "pci",
    "driver",
    "nvml",
    "gpus",
    "health",
    "topology",
    "cuda",
    "cudnn",
    "devices",
    "rocm",
    "rocm_access",
    "rocm_frameworks",
    "intel_xpu",
    "apple_mps",
    "tpu",
    "environment",
    "frameworks",
    "frameworks_agree",
    "pytorch",
    "tensorflow",
    "jax_cupy",
    "smoke",
    "gates",
    # After every area's own checks: the known error messages of an area come after its structured checks,
    # so a structured finding is the root a message is folded under; the evidence-gap check reads them all.
    "pasted_context",
    "signatures",
    "evidence_gaps",
)


class RegistryError(Exception):
    """gpudoctor cannot find its checks: its own failure (exit 3), never a verdict on the machine."""


@dataclass
class Registry:
    checks: list[CheckSpec] = field(default_factory=list)
    load_errors: list[str] = field(default_factory=list)

    def by_code(self, code: str) -> CheckSpec | None:
        code = code.upper()
        return next((c for c in self.checks if c.code == code), None)

    def require_checks(self) -> None:
        """Raise :class:`RegistryError` when there is nothing to run: an empty report is no verdict."""
        if self.checks:
            return
        why = "; ".join(self.load_errors) or "no module registered any"
        raise RegistryError(f"no checks found ({why})")


def _specs_in(module: ModuleType) -> list[CheckSpec]:
    return [value for value in vars(module).values() if isinstance(value, CheckSpec)]


def _entry_points() -> list[EntryPoint]:
    from gpudoctor.distributions import entry_points

    return entry_points(ENTRY_POINT_GROUP)


def _source_tree_checks() -> str | None:
    """``checks/`` of the source tree this gpudoctor runs from, when it was never installed."""
    package_dir = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(package_dir)
    folder = os.path.join(root, "checks")
    if os.path.isfile(os.path.join(root, "pyproject.toml")) and os.path.isfile(os.path.join(folder, "__init__.py")):
        return folder
    return None


def builtin_package_importable() -> bool:
    """Whether ``gpudoctor_checks`` imports; from a source tree that was never installed, its
    ``checks/`` folder is made importable under that name (what installing it would do)."""
    if BUILTIN_PACKAGE in sys.modules or importlib.util.find_spec(BUILTIN_PACKAGE) is not None:
        return True
    folder = _source_tree_checks()
    if folder is None:
        return False
    spec = importlib.util.spec_from_file_location(
        BUILTIN_PACKAGE, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder]
    )
    if spec is None or spec.loader is None:
        return False
    module = importlib.util.module_from_spec(spec)
    sys.modules[BUILTIN_PACKAGE] = module
    spec.loader.exec_module(module)
    return True


def _modules_to_load(points: dict[str, EntryPoint]) -> list[tuple[str, str]]:
    """(entry-point name, module) pairs: the built-ins in their order, then plugins by name."""
    builtin_names = [
        name for name in BUILTIN_ORDER if name in points and points[name].value.startswith(BUILTIN_PACKAGE)
    ]
    if builtin_names:
        modules = [(name, points[name].value) for name in builtin_names]
    else:
        # Not installed (a source checkout on PYTHONPATH): no entry points name the built-ins.
        modules = [(name, f"{BUILTIN_PACKAGE}.{name}") for name in BUILTIN_ORDER]
    plugin_names = sorted(name for name in points if name not in builtin_names)
    return modules + [(name, points[name].value) for name in plugin_names]


def load_registry() -> Registry:
    """Every check from every module registered in the entry-point group.

    A module that fails to import is recorded in ``load_errors`` (the run goes on with the
    others, reports it and exits 3); a missing built-in package is one load error that says so.
    """
    registry = Registry()
    points = {ep.name: ep for ep in _entry_points()}
    if not builtin_package_importable():
        registry.load_errors.append(
            f"the built-in checks ({BUILTIN_PACKAGE}) are not installed and no checks/ folder is beside "
            "this gpudoctor package: install gpudoctor (pip install .) or run it from a complete source tree"
        )
        points = {name: ep for name, ep in points.items() if not ep.value.startswith(BUILTIN_PACKAGE)}
        modules = [(name, points[name].value) for name in sorted(points)]
    else:
        modules = _modules_to_load(points)
    seen_modules = set()
    for name, target in modules:
        module_name = target.split(":")[0].strip()
        if module_name in seen_modules:
            continue
        seen_modules.add(module_name)
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not hide the other checks
            registry.load_errors.append(
                f"check module {module_name!r} (entry point {name!r}) failed to load: {type(exc).__name__}: {exc}"
            )
            continue
        for spec in _specs_in(module):
            if registry.by_code(spec.code):
                registry.load_errors.append(f"check code {spec.code} from {module_name} is already taken; skipped")
                continue
            registry.checks.append(spec)
    return registry


def matches(code: str, patterns: list[str]) -> bool:
    """``--select``/``--ignore`` accept a full code (DRV002) or a prefix (DRV)."""
    code = code.upper()
    return any(code.startswith(p.upper()) for p in patterns)
