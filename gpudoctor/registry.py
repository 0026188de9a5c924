"""Find the checks: built-ins and plugins, through one entry-point group.

Order is explicit and stable: built-in areas in the order of ``BUILTIN_ORDER``,
then plugins by entry-point name; within a module, definition order.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from gpudoctor.api import CheckSpec

ENTRY_POINT_GROUP = "gpudoctor.checks"
BUILTIN_PACKAGE = "gpudoctor_checks"
BUILTIN_ORDER = (
    "collection",
    "pci",
    "driver",
    "nvml",
    "gpus",
    "health",
    "topology",
    "cuda",
    "cudnn",
    "devices",
    "environment",
    "frameworks",
    "pytorch",
    "tensorflow",
    "jax_cupy",
    "smoke",
    "gates",
)


@dataclass
class Registry:
    checks: list[CheckSpec] = field(default_factory=list)
    load_errors: list[str] = field(default_factory=list)

    def by_code(self, code: str) -> CheckSpec | None:
        code = code.upper()
        return next((c for c in self.checks if c.code == code), None)


def _specs_in(module) -> list[CheckSpec]:
    return [value for value in vars(module).values() if isinstance(value, CheckSpec)]


def _entry_points():
    from gpudoctor.distributions import entry_points

    return entry_points(ENTRY_POINT_GROUP)


def load_registry() -> Registry:
    """Every check from every module registered in the entry-point group.

    When gpudoctor runs from a source tree that was never installed, the group
    is empty; then the built-in modules are imported directly so the tool still
    works.  A plugin that fails to import is reported, never fatal.
    """
    registry = Registry()
    points = {ep.name: ep for ep in _entry_points()}
    builtin_names = [
        name for name in BUILTIN_ORDER if name in points and points[name].value.startswith(BUILTIN_PACKAGE)
    ]
    if not builtin_names:
        modules = [(name, f"{BUILTIN_PACKAGE}.{name}") for name in BUILTIN_ORDER]
    else:
        modules = [(name, points[name].value) for name in builtin_names]
    plugin_names = sorted(name for name in points if name not in builtin_names)
    modules += [(name, points[name].value) for name in plugin_names]
    seen_modules = set()
    for name, target in modules:
        module_name = target.split(":")[0].strip()
        if module_name in seen_modules:
            continue
        seen_modules.add(module_name)
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not take the tool down
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
