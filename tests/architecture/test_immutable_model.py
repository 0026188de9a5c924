"""The model of the machine is immutable: every public dataclass in gpudoctor/facts is frozen, so no check,
renderer or later parser can change a fact after it was parsed (a check that tried would crash, alone).

Private builders (a leading underscore) that a parser fills before it returns a frozen value are exempt."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import pytest

import gpudoctor.facts
from gpudoctor.facts.model import GpuInfo


def _model_classes() -> list[type]:
    found = []
    for info in pkgutil.iter_modules(gpudoctor.facts.__path__, "gpudoctor.facts."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and dataclasses.is_dataclass(value)
                and value.__module__ == module.__name__
                and not value.__name__.startswith("_")
            ):
                found.append(value)
    return found


def test_every_model_class_is_frozen() -> None:
    classes = _model_classes()
    assert len(classes) > 40  # the whole model was found, not an empty package
    mutable = sorted(f"{c.__module__}.{c.__name__}" for c in classes if not c.__dataclass_params__.frozen)  # type: ignore[attr-defined]
    assert mutable == []


def test_a_fact_cannot_be_changed() -> None:
    gpu = GpuInfo(index=0, name="NVIDIA A100-SXM4-80GB")
    with pytest.raises(dataclasses.FrozenInstanceError):
        gpu.name = "something else"  # type: ignore[misc]
