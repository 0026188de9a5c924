"""The maintainer validation script: the shipped data passes, broken copies are caught."""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest

from tests.helpers.fixtures import REPO, load_script

DATA = REPO / "gpudoctor" / "kb" / "data"


kb_validate = load_script("kb_validate")


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


# --------------------------------------------------------------------------- framework files


def _release(data, torch):
    return next(row for row in data["releases"] if row.get("torch") == torch)


def _variant(data, torch, tag):
    return next(v for v in _release(data, torch)["variants"] if v["variant"] == tag)


def _torch_cuda_vs_tag(data):
    _variant(data, "2.8", "cu128")["cuda"] = "12.6"


def _torch_order(data):
    data["releases"][0], data["releases"][1] = data["releases"][1], data["releases"][0]


def _torch_duplicate(data):
    data["releases"].append(json.loads(json.dumps(_release(data, "2.4"))))


def _torch_bad_arch(data):
    _variant(data, "2.8", "cu128")["arch_list_linux_x86_64"].append("sm-86")


def _torch_bad_default(data):
    _release(data, "2.8")["default_pypi_linux_x86_64"] = "cu118"


def _torch_variant_unknown_source(data):
    _variant(data, "2.8", "cu128")["sources"] = ["NOWHERE"]


def _torch_windows_unsourced(data):
    _variant(data, "2.8", "cu128")["windows_sources"] = []


def _torch_bad_python(data):
    _release(data, "2.8")["python_min"] = "3.14"


def _tf_driver_disagrees(data):
    data["releases"][0]["linux_driver_min"] = "550.54.14"


def _tf_floor_disagrees(data):
    data["releases"][0]["linux_driver_mvc_floor"] = "450.80.02"


def _tf_windows_after_210(data):
    data["releases"][0]["windows_native_gpu"] = True


def _cudnn_wrong_major_library(data):
    data["majors"][0]["libraries"].append("libcudnn_ops_infer.so.8")


def _jax_floor_disagrees(data):
    data["jax"]["extras"][0]["linux_driver_min"] = "575.51.03"


def _jax_release_order(data):
    releases = data["jax"]["releases"]
    releases[0], releases[1] = releases[1], releases[0]


def _jax_release_unknown_extra(data):
    data["jax"]["releases"][0]["extras"] = ["cuda14"]


def _jax_release_python(data):
    data["jax"]["releases"][0]["python_min"] = "3.99"


def _jax_release_jaxlib_newer(data):
    release = data["jax"]["releases"][-1]
    release["jaxlib"] = release["version"] + ".1"


def _jax_release_unsourced(data):
    data["jax"]["releases"][0]["sources"] = ["NOWHERE"]


def _cupy_name_disagrees(data):
    data["cupy"]["packages"][0]["package"] = "cupy-cuda12x"


FRAMEWORK_BREAKS = {
    "torch cuda vs tag": ("pytorch.json", _torch_cuda_vs_tag, "does not match the tag"),
    "torch order": ("pytorch.json", _torch_order, "newest first"),
    "torch duplicate": ("pytorch.json", _torch_duplicate, "duplicate release"),
    "torch bad arch": ("pytorch.json", _torch_bad_arch, "is not 'X.Y' or 'X.Y+PTX'"),
    "torch bad default": ("pytorch.json", _torch_bad_default, "PyPI default"),
    "torch unknown source": ("pytorch.json", _torch_variant_unknown_source, "unknown source key"),
    "torch windows unsourced": ("pytorch.json", _torch_windows_unsourced, "windows_sources missing"),
    "torch python range": ("pytorch.json", _torch_bad_python, "is above python_max"),
    "tf driver": ("tensorflow.json", _tf_driver_disagrees, "the driver table says"),
    "tf floor": ("tensorflow.json", _tf_floor_disagrees, "floor is"),
    "tf windows": ("tensorflow.json", _tf_windows_after_210, "native Windows GPU after 2.10"),
    "cudnn library": ("cudnn.json", _cudnn_wrong_major_library, "is not libcudnn*.so.9"),
    "jax floor": ("python_gpu_packages.json", _jax_floor_disagrees, "driver table's CUDA 13.x floor"),
    "jax release order": ("python_gpu_packages.json", _jax_release_order, "newest first"),
    "jax release extra": ("python_gpu_packages.json", _jax_release_unknown_extra, "are not in jax.extras"),
    "jax release python": ("python_gpu_packages.json", _jax_release_python, "is above python_max"),
    "jax release jaxlib": ("python_gpu_packages.json", _jax_release_jaxlib_newer, "at or below the release"),
    "jax release source": ("python_gpu_packages.json", _jax_release_unsourced, "unknown source key"),
    "cupy name": ("python_gpu_packages.json", _cupy_name_disagrees, "disagree"),
}


@pytest.mark.parametrize("case", sorted(FRAMEWORK_BREAKS))
def test_broken_framework_file_is_reported(tmp_path, case):
    filename, change, expected = FRAMEWORK_BREAKS[case]
    data_dir = _copy(tmp_path)
    _edit(data_dir, filename, change)
    errors = kb_validate.validate(data_dir)
    assert any(expected in error for error in errors), errors


def test_tf_columns_follow_the_driver_file_being_validated(tmp_path):
    # The TF check reads the driver table in the same directory, not the shipped one.
    data_dir = _copy(tmp_path)

    def change(data):
        _row(data, "toolkit_driver", release="12.5 GA")["linux_min"] = "555.42.01"

    _edit(data_dir, "driver_cuda.json", change)
    errors = kb_validate.validate(data_dir)
    assert any("tensorflow.json" in error and "555.42.01" in error for error in errors), errors


def test_main_summarises_the_framework_files(capsys):
    assert kb_validate.main([]) == 0
    out = capsys.readouterr().out
    for filename in ("pytorch.json", "tensorflow.json", "cudnn.json", "python_gpu_packages.json"):
        assert filename in out
