"""The Python side of the machine as typed facts: which interpreter was probed and why, the NVML Python
bindings installed in gpudoctor's own environment.

Each comes from a small JSON record of the evidence layer (``target-python.json``, ``python-packages.json``);
here they are narrowed once, so no check reads a raw dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.facts.json_values import json_dict, json_text

if TYPE_CHECKING:
    from gpudoctor.facts.framework_model import PythonTarget


@dataclass(frozen=True)
class TargetPythonFacts:
    """The interpreter whose frameworks were judged, and why gpudoctor chose it."""

    executable: str | None = None
    version: str | None = None  # "3.11.7"
    platform: str | None = None
    virtualenv: bool | None = None
    conda_prefix: str | None = None
    how: str | None = None  # "--python", "VIRTUAL_ENV", "CONDA_PREFIX", "gpudoctor's own interpreter"
    note: str | None = None  # what the chooser wants the user to know (a --python that is not a Python, ...)

    @property
    def known(self) -> bool:
        return any(value is not None for value in (self.executable, self.version, self.how))


def target_python_facts(record: object, probed: PythonTarget | None) -> TargetPythonFacts:
    """``target-python.json`` (how the interpreter was chosen), completed by what a probe learnt inside it."""
    data = json_dict(record)
    virtualenv = data.get("virtualenv")
    return TargetPythonFacts(
        executable=json_text(data.get("executable")) or (probed.executable if probed else None),
        version=json_text(data.get("version")) or (probed.version if probed else None),
        platform=json_text(data.get("platform")) or (probed.platform if probed else None),
        virtualenv=virtualenv if isinstance(virtualenv, bool) else (probed.virtualenv if probed else None),
        conda_prefix=json_text(data.get("conda_prefix")) or (probed.conda_prefix if probed else None),
        how=json_text(data.get("how")),
        note=json_text(data.get("note")),
    )


@dataclass(frozen=True)
class PythonDistribution:
    """One installed distribution that may provide the ``pynvml`` module."""

    name: str
    version: str | None
    provides_pynvml_module: bool


@dataclass(frozen=True)
class NvmlBindings:
    """The NVML Python bindings in gpudoctor's environment (``python-packages.json``)."""

    distributions: tuple[PythonDistribution, ...]
    pynvml_module_file: str | None

    def get(self, name: str) -> PythonDistribution | None:
        return next((d for d in self.distributions if d.name == name), None)


def parse_nvml_bindings(data: object) -> NvmlBindings | None:
    """None when the record is missing or not an object; unreadable entries are left out."""
    if not isinstance(data, dict):
        return None
    distributions = []
    for name, entry in json_dict(data.get("distributions")).items():
        record = json_dict(entry)
        distributions.append(
            PythonDistribution(
                name=name,
                version=json_text(record.get("version")),
                provides_pynvml_module=record.get("provides_pynvml_module") is True,
            )
        )
    return NvmlBindings(tuple(distributions), json_text(data.get("pynvml_module_file")))
