"""The maintainer validation script: the shipped data passes, broken copies are caught."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import shutil

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "kb_validate.py"
DATA = REPO / "gpudoctor" / "kb" / "data"


def _load_script():
    spec = importlib.util.spec_from_file_location("kb_validate", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


kb_validate = _load_script()


def test_shipped_data_has_no_errors():
    assert kb_validate.validate() == []


def test_main_exits_zero_and_prints_a_summary(capsys):
    assert kb_validate.main([]) == 0
    out = capsys.readouterr().out
    assert "toolkit_driver" in out and "gpus" in out


def _copy(tmp_path: pathlib.Path) -> pathlib.Path:
    target = tmp_path / "data"
    shutil.copytree(DATA, target)
    return target


def _edit(data_dir: pathlib.Path, filename: str, change) -> None:
    path = data_dir / filename
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _row(data, table, **where):
    return next(row for row in data[table] if all(row.get(k) == v for k, v in where.items()))


def _drop_sources(data):
    _row(data, "toolkit_driver", release="12.2 GA")["sources"] = []


def _unknown_source(data):
    _row(data, "toolkit_driver", release="12.2 GA")["sources"] = ["NO_SUCH_KEY"]


def _not_monotonic(data):
    _row(data, "toolkit_driver", release="12.4 GA")["linux_min"] = "530.10.01"


def _bad_driver(data):
    _row(data, "toolkit_driver", release="12.2 GA")["linux_min"] = "five-three-five"


def _two_ga(data):
    _row(data, "toolkit_driver", release="12.2 Update 1")["stage"] = "ga"


def _duplicate_cc(data):
    _row(data, "architectures", architecture="Hopper")["compute_capabilities"].append("8.9")


def _mvc_bad(data):
    _row(data, "minor_version_compat", cuda_major=12)["linux_min"] = "R525"


def _secondary_without_note(data):
    row = _row(data, "toolkit_driver", release="13.2 GA")
    row.pop("note")


def _missing_source_title(data):
    data["sources"]["T3_131"]["title"] = ""


DRIVER_BREAKS = {
    "no sources": (_drop_sources, "no sources"),
    "unknown source": (_unknown_source, "unknown source key"),
    "not monotonic": (_not_monotonic, "not monotonic"),
    "bad driver version": (_bad_driver, "is not a driver version"),
    "two GA rows": (_two_ga, "GA rows"),
    "cc in two architectures": (_duplicate_cc, "also in"),
    "bad mvc floor": (_mvc_bad, "is not a driver version"),
    "secondary without note": (_secondary_without_note, "secondary"),
    "source without title": (_missing_source_title, "has no title"),
}


@pytest.mark.parametrize("case", sorted(DRIVER_BREAKS))
def test_broken_driver_file_is_reported(tmp_path, case):
    change, expected = DRIVER_BREAKS[case]
    data_dir = _copy(tmp_path)
    _edit(data_dir, "driver_cuda.json", change)
    errors = kb_validate.validate(data_dir)
    assert any(expected in error for error in errors), errors


def _duplicate_gpu(data):
    data["gpus"].append(dict(_row(data, "gpus", match="NVIDIA A10"), match="nvidia  a10"))


def _wrong_arch(data):
    _row(data, "gpus", match="NVIDIA A10")["architecture"] = "Turing"


def _bad_cc(data):
    _row(data, "gpus", match="NVIDIA A10")["compute_capability"] = "eight"


def _gpu_unknown_source(data):
    _row(data, "gpus", match="NVIDIA A10")["sources"] = ["WHO_KNOWS"]


def _shadowed(data):
    # lspci-style text resolves to the name inside the brackets, so this row can never be reached.
    data["gpus"].append(
        {"match": "GA102 [GeForce RTX 3090]", "compute_capability": "8.6", "architecture": "Ampere", "sources": ["CC"]}
    )


GPU_BREAKS = {
    "duplicate name": (_duplicate_gpu, "duplicate match name"),
    "wrong architecture": (_wrong_arch, "architecture 'Turing'"),
    "bad cc": (_bad_cc, "is not 'X.Y'"),
    "unknown source": (_gpu_unknown_source, "unknown source key"),
    "shadowed": (_shadowed, "does not resolve to its own row"),
}


@pytest.mark.parametrize("case", sorted(GPU_BREAKS))
def test_broken_gpu_file_is_reported(tmp_path, case):
    change, expected = GPU_BREAKS[case]
    data_dir = _copy(tmp_path)
    _edit(data_dir, "gpu_compute_capability.json", change)
    errors = kb_validate.validate(data_dir)
    assert any(expected in error for error in errors), errors


def test_missing_and_unreadable_files(tmp_path):
    data_dir = _copy(tmp_path)
    (data_dir / "driver_cuda.json").unlink()
    (data_dir / "gpu_compute_capability.json").write_text("{ not json", encoding="utf-8")
    errors = kb_validate.validate(data_dir)
    assert any("driver_cuda.json: missing" in error for error in errors)
    assert any("not readable JSON" in error for error in errors)


def test_main_exits_one_on_errors(tmp_path, capsys):
    data_dir = _copy(tmp_path)
    _edit(data_dir, "driver_cuda.json", _not_monotonic)
    assert kb_validate.main(["--data-dir", str(data_dir)]) == 1
    assert "error" in capsys.readouterr().out
