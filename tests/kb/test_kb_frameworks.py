"""The framework knowledge base: PyTorch wheels, TensorFlow builds, cuDNN, JAX, CuPy, arch coverage.

Expected values come from the shared reference's tables (compat.md 2-4), from the JAX and CuPy
install pages recorded in ``python_gpu_packages.json``, and from the real collect_env reports in
fixtures E/F.  Cases whose inputs were made up for the test say "synthetic" in their name.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpudoctor import kb
from gpudoctor.kb import describe
from gpudoctor.kb.errors import KnowledgeError
from tests.helpers.fixtures import REPO, fixture_files, load_script, read_fixture
from tests.helpers.strategies import fixture_named, json_like

DATA = REPO / "gpudoctor" / "kb" / "data"
REFERENCE = REPO.parent / "shared" / "reference" / "compat.json"


kb_refresh = load_script("kb_refresh")

# --------------------------------------------------------------------------- arch coverage


@pytest.mark.parametrize(
    ("arch_list", "cc", "status", "via"),
    [
        # compat.md 2c: a cubin runs on the same major with an equal or higher minor...
        (["sm_86"], "8.9", "sass", "sm_86"),
        (["8.0", "8.6"], "8.9", "sass", "8.6"),
        (["sm_100"], "10.3", "sass", "sm_100"),
        (["12.0"], "12.1", "sass", "12.0"),
        # ...never across a major, and never to a lower minor
        (["sm_90"], "12.0", "none", None),
        (["sm_86"], "8.0", "none", None),
        (["3.7"], "3.5", "none", None),
        # PTX is JIT-compiled for any newer GPU
        (["compute_90"], "12.0", "ptx", "compute_90"),
        (["7.5", "12.0+PTX"], "13.0", "ptx", "12.0+PTX"),
        (["12.0+PTX"], "12.1", "sass", "12.0+PTX"),
        # SASS wins over PTX when both cover
        (["sm_80", "compute_80"], "8.6", "sass", "sm_80"),
        # TensorFlow build_info notation
        (["sm_60", "sm_70", "compute_80"], "8.6", "ptx", "compute_80"),
        # architecture-specific 'a': exactly that capability
        (["sm_90a"], "9.0", "sass", "sm_90a"),
        (["sm_90a"], "10.0", "none", None),
        (["compute_100a"], "10.3", "none", None),
        # family-specific 'f' (CUDA Programming Guide 5.1: compute_100f runs on 10.0 and 10.3, compute_120f on 12.1)
        (["sm_100f"], "10.3", "sass", "sm_100f"),
        (["compute_120f"], "12.1", "ptx", "compute_120f"),
        (["compute_120f"], "13.0", "none", None),
        (["compute_103f"], "10.0", "none", None),
        # one string holding a whole TORCH_CUDA_ARCH_LIST
        ("7.5;8.0;8.6;9.0;10.0;12.0+PTX", "8.9", "sass", "8.6"),
        ("sm_50 sm_60 sm_70", "7.5", "sass", "sm_70"),
        # nothing to go on
        ([], "8.6", "unknown", None),
        (None, "8.6", "unknown", None),
        (["8.6"], None, "unknown", None),
        (["8.6"], "eight", "unknown", None),
        (["garbage", "sm_"], "8.6", "unknown", None),
    ],
)
def test_arch_list_covers(arch_list, cc, status, via):
    assert kb.arch_list_covers(arch_list, cc) == kb.ArchCoverage(status, via)


def _warning_arch_list(text: str) -> list[str]:
    match = re.search(r"supports CUDA capabilities ((?:sm_\d+ ?)+)", text)
    assert match, "the fixture's arch warning is missing"
    return match.group(1).split()


def test_rtx_5090d_fixture_arch_list_is_the_kb_list_and_misses_sm_120():
    text = read_fixture(fixture_named(fixture_files("E"), "150733"))
    arch = _warning_arch_list(text)
    capability = re.search(r"CUDA capability sm_(\d+)", text).group(1)
    cc = f"{capability[:-1]}.{capability[-1]}"
    assert cc == "12.0"
    assert kb.arch_list_covers(arch, cc).status == "none"
    variant = kb.torch_variant(re.search(r"PyTorch version: (\S+)", text).group(1))
    assert variant is not None and variant.variant == "cu126"
    # The list torch printed is the knowledge base's list for 2.6 cu126, entry for entry.
    assert [f"sm_{e.replace('.', '')}" for e in variant.arch_list] == arch
    assert kb.arch_list_covers(variant.arch_list, cc).status == "none"


# --------------------------------------------------------------------------- PyTorch data


def test_torch_releases_newest_first_and_confirmed_only():
    releases = kb.torch_releases()
    versions = [tuple(int(x) for x in r.torch.split(".")) for r in releases]
    assert versions == sorted(versions, reverse=True)
    # 2.15 is released (PyPI, 2026-10-28): confirmed with only the build PyPI's metadata shows (issue 17).
    assert releases[0].torch == "2.15" and [v.variant for v in releases[0].variants] == ["cu132"]
    assert releases[1].torch == "2.14"
    assert all(r.variants and r.sources for r in releases)


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("2.6.0+cu126", "2.6"),
        ("2.14", "2.14"),
        ("2.14.1", "2.14"),
        ("1.13.1+cu117", "1.13"),
        ("2.4.0a0+git1234", "2.4"),
        ("2.15.0", "2.15"),
        ("2.16.0", None),
        ("9.9", None),
        ("", None),
        ("torch", None),
        (None, None),
    ],
)
def test_torch_release(version, expected):
    release = kb.torch_release(version)
    assert (release.torch if release else None) == expected


def test_torch_variant_and_index_url():
    variant = kb.torch_variant("2.8.0", "cu129")
    assert variant.cuda == "12.9" and variant.cuda_full == "12.9.1"
    assert variant.index_url == "https://download.pytorch.org/whl/cu129"
    assert variant.arch_list[-1] == "12.0+PTX"
    assert kb.torch_variant("2.6.0+cu126") == kb.torch_variant("2.6", "cu126")
    assert kb.torch_variant("2.6.0", None) is None
    assert kb.torch_variant("2.6.0", "cu999") is None


def test_conflicting_reference_values_stay_null_with_a_note():
    cu130 = kb.torch_variant("2.14", "cu130")
    assert cu130.cuda == "13.0" and cu130.cuda_full is None and "conflicting" in cu130.note
    cu128 = kb.torch_variant("2.11", "cu128")
    assert cu128.cudnn is None and "conflicting" in cu128.note
    unverified = kb.torch_variant("2.7", "cu126")
    assert unverified.arch_list is None and unverified.note


def test_arch_list_for_each_platform():
    cu126 = kb.torch_variant("2.14", "cu126")
    assert cu126.arch_list_for("linux", "x86_64")[0] == "5.0"
    assert cu126.arch_list_for("linux", "aarch64") == ("8.0", "9.0")
    assert "6.1" in cu126.arch_list_for("windows", "AMD64")  # the Windows list differs (P_WIN)
    assert cu126.arch_list_for("wsl", "x86_64") == cu126.arch_list
    assert cu126.arch_list_for("macos", "arm64") is None
    assert cu126.arch_list_for("linux", "ppc64le") is None
    no_windows = kb.torch_variant("2.13", "cu129")
    assert no_windows.windows is False and no_windows.arch_list_for("windows") is None


def test_supports_python():
    release = kb.torch_release("2.5")
    assert (release.python_min, release.python_max) == ("3.9", "3.12")
    assert release.supports_python("3.12.9") is True
    assert release.supports_python("3.8.16") is False
    assert release.supports_python("3.13t") is False
    assert release.supports_python("snake") is None
    assert release.supports_python(None) is None


@pytest.mark.parametrize(
    ("cuda", "os", "expected"),
    [
        ("12.8", "linux", "525.60.13"),
        ("cu130", "linux", "580.65.06"),
        ("11.8.0", "linux", "450.80.02"),
        ("12.4", "windows", "527.41"),
        ("12.6", "wsl", "527.41"),
        ("13.0", "windows", None),
        ("10.2", "linux", "440.33"),
        ("12.8", "macos", None),
        ("x", "linux", None),
        (None, "linux", None),
    ],
)
def test_wheel_driver_floor(cuda, os, expected):
    assert kb.wheel_driver_floor(cuda, os) == expected


# --------------------------------------------------------------------------- choosing a torch wheel


def _collect_env(name_part: str) -> dict[str, object]:
    """The inputs choose_torch_wheel needs, read from a real collect_env report."""
    text = read_fixture(fixture_named(fixture_files("E"), name_part))
    gpus = re.findall(r"GPU \d+: (.+)", text)
    ccs = [kb.compute_capability_for_name(name.strip()).compute_capability for name in gpus]
    platform = re.search(r"Python platform: (\S+)", text).group(1)
    return {
        "driver_version": re.search(r"Nvidia driver version: (\S+)", text).group(1),
        "compute_capabilities": ccs,
        "python_version": re.search(r"Python version: (.+)", text).group(1),
        "os": "windows" if platform.startswith("Windows") else "linux",
        "machine": "x86_64",
        "torch_version": re.search(r"PyTorch version: (\S+)", text).group(1),
    }


def test_rtx_5090d_on_driver_570_gets_a_cu128_or_newer_wheel():
    inputs = _collect_env("150733")
    assert inputs["compute_capabilities"] == ["12.0"] and inputs["driver_version"] == "570.124.04"
    choice = kb.choose_torch_wheel(**inputs)
    assert choice.status == "ok"
    variant = kb.torch_variant(choice.torch, choice.variant)
    assert kb.parse_cuda_version(variant.cuda)[:2] >= (12, 8)
    assert kb.arch_list_covers(variant.arch_list, "12.0").status == "sass"
    # cu130/cu132 need a 580+ driver, so the newest release with a fitting 12.x variant: 2.13's cu129.
    assert (choice.torch, choice.variant) == ("2.13", "cu129")
    assert choice.index_url == "https://download.pytorch.org/whl/cu129"
    assert choice.requirement == "torch==2.13.*"
    assert kb.parse_driver_version(choice.upgrade_driver_to) > kb.parse_driver_version("580.0")
    assert any("minor-version compatibility" in r for r in choice.reasons)
    assert any("2.6" in r for r in choice.reasons)  # says why the user's 2.6 was not kept


def test_two_rtx_3090_on_driver_470_and_python_38_get_torch_24_cu118():
    inputs = _collect_env("106565")
    assert inputs["compute_capabilities"] == ["8.6", "8.6"] and inputs["driver_version"] == "470.182.03"
    choice = kb.choose_torch_wheel(**inputs)
    assert (choice.status, choice.torch, choice.variant) == ("ok", "2.4", "cu118")
    assert "3.8" in choice.python_note and "2.5" in choice.python_note  # 2.5+ dropped Python 3.8
    # cu12x needs >= 525.60.13: the driver held the choice at CUDA 11.8.
    assert kb.parse_driver_version(choice.upgrade_driver_to) >= kb.parse_driver_version("525.60.13")


def test_windows_rtx_4080_laptop_gets_a_cu12x_windows_wheel():
    inputs = _collect_env("122924")
    assert inputs["os"] == "windows" and inputs["compute_capabilities"] == ["8.9"]
    choice = kb.choose_torch_wheel(**inputs)
    assert choice.status == "ok"
    variant = kb.torch_variant(choice.torch, choice.variant)
    assert variant.windows is True and variant.cuda.startswith("12.")
    assert kb.arch_list_covers(variant.arch_list_for("windows"), "8.9").status == "sass"
    assert (choice.torch, choice.variant) == ("2.14", "cu126")
    assert any("Windows wheel exists" in r for r in choice.reasons)


def test_macos_has_no_cuda_wheel():
    choice = kb.choose_torch_wheel(driver_version=None, compute_capabilities=[], python_version="3.12", os="darwin")
    assert choice.status == "no_wheel" and choice.torch is None
    assert "macOS" in choice.reasons[0]


def test_synthetic_driver_too_old_for_every_wheel_says_what_to_upgrade_to():
    choice = kb.choose_torch_wheel(driver_version="410.48", compute_capabilities=["7.5"], python_version="3.11")
    assert choice.status == "no_wheel"
    assert kb.parse_driver_version(choice.upgrade_driver_to) >= kb.parse_driver_version("580.65.06")
    assert "too old" in choice.reasons[0]


def test_synthetic_kepler_gpu_is_too_old_for_every_wheel():
    choice = kb.choose_torch_wheel(driver_version="470.182.03", compute_capabilities=["3.5"], python_version="3.9")
    assert choice.status == "no_wheel"
    assert any("older than every" in r for r in choice.reasons)


def test_synthetic_k80_gets_the_last_wheel_with_sm_37():
    choice = kb.choose_torch_wheel(driver_version="470.182.03", compute_capabilities=["3.7"], python_version="3.10")
    assert (choice.torch, choice.variant) == ("2.5", "cu118")


def test_synthetic_python_too_new_for_every_release():
    choice = kb.choose_torch_wheel(driver_version="580.95.05", compute_capabilities=["8.6"], python_version="3.16.0")
    assert choice.status == "no_wheel"
    assert "3.16" in choice.python_note


def test_synthetic_users_release_is_kept_when_it_fits():
    choice = kb.choose_torch_wheel(
        driver_version="575.57.08", compute_capabilities=["12.0"], python_version="3.11", torch_version="2.8.0+cu128"
    )
    assert (choice.torch, choice.variant) == ("2.8", "cu129")
    assert choice.reasons[0].startswith("keeps torch 2.8")
    assert choice.python_note is None


def test_synthetic_ptx_only_coverage_needs_a_driver_that_runs_the_cuda_natively():
    # A hypothetical 13.0 GPU is reached only through compute_120 PTX.  570.124.04 runs 12.9 only under
    # minor-version compatibility, which cannot JIT 12.9's PTX, so the answer falls back to 2.7 cu128 (12.8).
    choice = kb.choose_torch_wheel(driver_version="570.124.04", compute_capabilities=["13.0"], python_version="3.12")
    assert (choice.torch, choice.variant) == ("2.7", "cu128")
    assert any("PTX" in r for r in choice.reasons)
    native = kb.choose_torch_wheel(driver_version="575.57.08", compute_capabilities=["13.0"], python_version="3.12")
    assert (native.torch, native.variant) == ("2.11", "cu129")


def test_synthetic_dgx_spark_on_aarch64():
    choice = kb.choose_torch_wheel(
        driver_version="580.95.05", compute_capabilities=["12.1"], python_version="3.12", machine="aarch64"
    )
    assert (choice.torch, choice.variant) == ("2.14", "cu130")  # cu132 needs a 595 driver


def test_synthetic_unknown_driver_and_python_do_not_block():
    choice = kb.choose_torch_wheel(driver_version=None, compute_capabilities=["8.6"], python_version=None)
    assert choice.status == "ok" and choice.torch == "2.14"
    assert choice.python_note is None and choice.upgrade_driver_to is None
    assert choice.install_command == f"pip install 'torch==2.14.*' --index-url {choice.index_url}"


# --------------------------------------------------------------------------- TensorFlow


def test_tf_releases_and_lookup():
    releases = kb.tf_releases()
    assert releases[0].version == "2.21.0"
    assert kb.tf_release("2.18.1").version == "2.18.0"
    assert kb.tf_release("2.16.0").version == "2.16.1"
    assert kb.tf_release("2.9.0") is None and kb.tf_release("tf") is None
    release = kb.tf_release("2.15")
    assert (release.cuda, release.cudnn, release.linux_driver_min, release.linux_driver_mvc_floor) == (
        "12.2",
        "8.9",
        "535.54.03",
        "525.60.13",
    )
    assert release.supports_python("3.11") is True and release.supports_python("3.12") is False


def test_tf_driver_columns_agree_with_the_driver_table():
    for release in kb.tf_releases():
        assert release.linux_driver_min == kb.min_driver_for_cuda(release.cuda)
        assert release.linux_driver_mvc_floor == kb.mvc_floor(kb.parse_cuda_version(release.cuda)[0])


def test_tf_212_on_native_windows_has_no_gpu():
    # fixture F/tf-60237: TF 2.12.0 on Windows 10 ("GPU is NOT AVAILABLE").
    text = read_fixture(fixture_named(fixture_files("F"), "60237"))
    version = re.search(r"Tensor Flow Version: (\S+)", text).group(1)
    choice = kb.choose_tensorflow(driver_version=None, python_version="3.10", os="windows", tf_version=version)
    assert choice.status == "no_wheel"
    assert choice.reasons[0] == "TensorFlow ≥ 2.11 has no GPU support on native Windows; use WSL2"


def test_choose_tensorflow_newest_with_and_cuda():
    choice = kb.choose_tensorflow(driver_version="570.124.04", python_version="3.12.3")
    assert (choice.status, choice.version, choice.requirement) == ("ok", "2.21.0", "tensorflow[and-cuda]==2.21.0")


def test_synthetic_tf_python_38_stops_at_213_without_and_cuda():
    choice = kb.choose_tensorflow(driver_version="470.182.03", python_version="3.8.16")
    assert (choice.version, choice.requirement) == ("2.13.0", "tensorflow==2.13.0")
    assert "3.8" in choice.python_note
    assert any("must be installed" in r for r in choice.reasons)


def test_synthetic_tf_driver_too_old():
    choice = kb.choose_tensorflow(driver_version="418.43", python_version="3.10")
    assert choice.status == "no_wheel"
    assert choice.upgrade_driver_to == "555.42.02"


def test_synthetic_tf_keeps_users_release():
    choice = kb.choose_tensorflow(driver_version="535.54.03", python_version="3.11", tf_version="2.15.1")
    assert choice.version == "2.15.0" and choice.reasons[0].startswith("keeps TensorFlow 2.15")


# --------------------------------------------------------------------------- cuDNN, JAX, CuPy


def test_cudnn_majors():
    nine = kb.cudnn_major(9)
    assert "libcudnn_graph.so.9" in nine.libraries and "nvidia-cudnn-cu13" in nine.pip_packages
    assert nine.min_compute_capability is None and nine.min_compute_capability_from
    assert kb.cudnn_major("8.9.7").major == 8
    assert kb.cudnn_major(7) is None and kb.cudnn_major(None) is None and kb.cudnn_major(True) is None
    assert kb.cudnn_min_compute_capability("9.10.2.21") == "5.0"
    assert kb.cudnn_min_compute_capability("9.11.0") == "7.5"
    assert kb.cudnn_min_compute_capability("8.9.7") == "5.0"


def test_cudnn_8_library_names_match_a_real_system():
    # fixture E/pytorch-106565 lists libcudnn_adv_infer.so.8.2.1 and friends
    text = read_fixture(fixture_named(fixture_files("E"), "106565"))
    paths = re.findall(r"/\S+libcudnn\S*", text)
    names = {re.sub(r"(\.so\.8)\.[\d.]+$", r"\1", path.rsplit("/", 1)[-1]) for path in paths}
    assert names and names <= set(kb.cudnn_major(8).libraries)


@pytest.mark.parametrize(
    ("driver", "os", "ccs", "extra"),
    [
        ("580.95.05", "linux", (), "cuda13"),
        ("580.65.06", "linux", (), "cuda13"),
        ("575.57.08", "linux", (), "cuda12"),
        ("525.60.13", "linux", (), "cuda12"),
        ("525.60.12", "linux", (), None),
        ("470.182.03", "linux", (), None),
        ("590.44.01", "linux", ("6.1",), "cuda12"),
        ("590.44.01", "linux", ("5.0",), None),
        ("581.57", "wsl", (), "cuda13"),
        ("551.86", "wsl", (), "cuda12"),
        ("590.44.01", "windows", (), None),
        ("590.44.01", "macos", (), None),
        (None, "linux", (), None),
        ("junk", "linux", (), None),
    ],
)
def test_jax_cuda_extra(driver, os, ccs, extra):
    assert kb.jax_cuda_extra(driver, os, compute_capabilities=ccs) == extra
    assert kb.jax_install_requirement(driver, os, compute_capabilities=ccs) == (f"jax[{extra}]" if extra else None)


@pytest.mark.parametrize(
    ("major", "package"),
    [
        (13, "cupy-cuda13x"),
        (12, "cupy-cuda12x"),
        (11, "cupy-cuda11x"),
        ("12", "cupy-cuda12x"),
        (10, None),
        (None, None),
        (True, None),
    ],
)
def test_cupy_package_for_cuda(major, package):
    assert kb.cupy_package_for_cuda(major) == package


# --------------------------------------------------------------------------- kb_info and describe


def test_kb_info_covers_every_data_file():
    info = kb.kb_info()
    assert {entry["file"] for entry in info.values()} == set(kb.DATA_FILES)
    for entry in info.values():
        assert entry["as_of"] and entry["sources"] > 0 and all(count > 0 for count in entry["rows"].values())
    assert info["pytorch"]["rows"]["releases"] == len(kb.torch_releases())
    assert info["tensorflow"]["rows"]["releases"] == len(kb.tf_releases())


def test_overview_names_every_file():
    text = describe.render_kb_text()
    for filename in kb.DATA_FILES:
        assert filename in text
    assert "Topics:" in text


def test_overview_renders_a_given_info():
    info = {"x": {"file": "x.json", "as_of": "2000-01-01", "rows": {"things": 3}, "sources": 1}}
    text = describe.render_kb_text(info)
    assert "x.json" in text and "things 3" in text and "2000-01-01" in text


@pytest.mark.parametrize(
    ("topic", "needle"),
    [
        ("driver", "525.60.13"),
        ("torch", "12.0+PTX"),
        ("pytorch", "cu126"),
        ("tensorflow", "555.42.02"),
        ("cudnn", "libcudnn_adv.so.9"),
        ("gpus", "RTX 3090"),
        ("jax", "jax[cuda13]"),
        ("cupy", "cupy-cuda12x"),
        ("rocm", "gfx90a"),
        ("amd", "rocm/dev-ubuntu-22.04:6.2"),
    ],
)
def test_topics(topic, needle):
    text = describe.render_kb_text(topic=topic)
    assert needle in text and "Sources:" in text


def test_torch_topic_has_every_release_and_variant():
    text = describe.render_kb_text(topic="torch")
    for release in kb.torch_releases():
        for variant in release.variants:
            assert re.search(rf"^{re.escape(release.torch)}\s+{variant.variant}", text, re.M)


def test_unknown_topic_lists_the_topics():
    with pytest.raises(KnowledgeError) as excinfo:
        describe.render_kb_text(topic="kernels")
    assert all(topic in str(excinfo.value) for topic in describe.TOPICS)


# --------------------------------------------------------------------------- kb_refresh (no network)


def _reference():
    if not REFERENCE.is_file():
        pytest.skip(f"shared reference not found at {REFERENCE}")
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


def test_shipped_framework_files_are_what_the_refresh_generates():
    generated = kb_refresh.build_all(_reference())
    for filename, data in generated.items():
        assert json.loads((DATA / filename).read_text(encoding="utf-8")) == data, filename


def test_refresh_compares_without_writing_then_writes(tmp_path, capsys):
    _reference()
    data_dir = tmp_path / "data"
    shutil.copytree(DATA, data_dir)
    path = data_dir / "tensorflow.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["releases"] = data["releases"][1:]  # drop 2.21.0
    data["releases"][0]["cudnn"] = "0.0"
    edited = json.dumps(data)
    path.write_text(edited, encoding="utf-8")

    assert kb_refresh.main(["--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert "+ version 2.21.0" in out and "cudnn '0.0' -> '9.3'" in out
    assert "dry run: nothing written" in out
    assert "online check skipped" in out
    assert path.read_text(encoding="utf-8") == edited

    assert kb_refresh.main(["--data-dir", str(data_dir), "--write"]) == 0
    assert f"wrote {path}" in capsys.readouterr().out
    assert path.read_bytes() == (DATA / "tensorflow.json").read_bytes()
    assert kb_refresh.main(["--data-dir", str(data_dir)]) == 0
    assert "tensorflow.json: up to date" in capsys.readouterr().out


def test_refresh_refuses_a_reference_that_contradicts_the_windows_table(tmp_path, capsys):
    reference = _reference()
    release = next(r for r in reference["table2_pytorch"]["releases"] if r["torch"] == "2.10")
    next(v for v in release["variants"] if v["variant"] == "cu126")["windows"] = "no Windows wheel"
    path = tmp_path / "compat.json"
    path.write_text(json.dumps(reference), encoding="utf-8")
    assert kb_refresh.main(["--reference", str(path), "--data-dir", str(tmp_path)]) == 2
    assert "Windows wheel" in capsys.readouterr().out
    assert not (tmp_path / "pytorch.json").exists()


def test_refresh_missing_reference(tmp_path, capsys):
    assert kb_refresh.main(["--reference", str(tmp_path / "none.json"), "--data-dir", str(tmp_path)]) == 2
    assert "cannot read the reference" in capsys.readouterr().out


def test_synthetic_index_listing_reports_newer_releases():
    data = json.loads((DATA / "pytorch.json").read_text(encoding="utf-8"))
    html = (
        '<a href="/whl/cu130/torch-2.14.1%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=0">x</a>\n'
        '<a href="/whl/cu130/torch-2.15.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=0">x</a>\n'
        '<a href="/whl/cu130/torch-2.15.0%2Bcu130-cp313-cp313-win_amd64.whl#sha256=0">x</a>\n'
    )
    assert kb_refresh.versions_in_listing(html) >= {(2, 15, 0, "cu130"), (2, 14, 1, "cu130")}
    lines = kb_refresh.newer_than_data(html, "cu130", data)
    assert len(lines) == 1 and "torch 2.15" in lines[0]
    assert kb_refresh.newer_than_data(html.replace("2.15.0", "2.14.0"), "cu130", data) == []


def test_synthetic_online_check_against_a_local_index():
    # A real HTTP server on localhost stands in for download.pytorch.org, serving a made-up listing.
    import http.server
    import threading

    listing = b'<a href="torch-2.15.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl">x</a>'

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = listing if self.path == "/whl/cu130/torch/" else b""
            self.send_response(200 if body else 404)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        root = f"http://127.0.0.1:{server.server_address[1]}/whl"
        data = {"releases": [{"torch": "2.14", "variants": [{"variant": "cu130"}]}]}
        lines = kb_refresh.online_report(data, [], timeout=10, index_root=root)
        assert lines == ["torch 2.15 has a cu130 wheel on download.pytorch.org; the data stops at 2.14 for cu130"]
        data["releases"][0]["variants"].append({"variant": "cu126"})  # its page answers 404
        lines = kb_refresh.online_report(data, [], timeout=10, index_root=root)
        assert lines[1].startswith("cu126: ") and lines[1].endswith("answered HTTP 404")
    finally:
        server.shutdown()
        server.server_close()
    # With the server gone the check says, in one line, that it could not go online.
    lines = kb_refresh.online_report(data, [], timeout=10, index_root=root)
    assert len(lines) == 1 and lines[0].startswith("offline: could not read")


# --------------------------------------------------------------------------- never raises

_junk_text = st.one_of(
    st.text(max_size=30),
    st.from_regex(r"\A\d{1,4}(\.\d{1,4}){0,3}\Z"),
    st.sampled_from(
        [
            "2.6.0+cu126",
            "cu128",
            "sm_90a",
            "12.0+PTX",
            "compute_120f",
            "3.12.9",
            "570.124.04",
            "linux",
            "windows",
            "wsl",
            "darwin",
            "aarch64",
            "AMD64",
            "",
            "...",
        ]
    ),
)
_junk = st.one_of(_junk_text, st.none(), st.integers(), st.floats(allow_nan=True), st.booleans())


@settings(max_examples=200, deadline=None)
@given(a=_junk, b=_junk, items=st.lists(_junk, max_size=6))
@example(a="¹", b="²", items=["³"])  # str.isdigit() says yes to superscripts, int() says no (found by this test)
def test_lookups_never_raise(a, b, items):
    coverage = kb.arch_list_covers(items, a)
    assert coverage.status in ("sass", "ptx", "none", "unknown")
    kb.arch_list_covers(a, b)
    kb.parse_arch_list(items)
    kb.torch_release(a)
    kb.torch_variant(a, b)
    kb.wheel_driver_floor(a, b)
    kb.tf_release(a)
    kb.cudnn_major(a)
    kb.cudnn_min_compute_capability(a)
    kb.jax_cuda_extra(a, b, compute_capabilities=items)
    kb.jax_install_requirement(a, b)
    kb.cupy_package_for_cuda(a)
    kb.parse_python_version(a)
    kb.torch_releases()[0].supports_python(a)
    kb.tf_releases()[0].supports_python(a)


@settings(max_examples=150, deadline=None)
@given(
    driver=_junk,
    ccs=st.one_of(st.lists(_junk, max_size=4), _junk),
    python=_junk,
    os=_junk,
    machine=_junk,
    version=_junk,
)
def test_choosers_never_raise(driver, ccs, python, os, machine, version):
    choice = kb.choose_torch_wheel(
        driver_version=driver,
        compute_capabilities=ccs,
        python_version=python,
        os=os,
        machine=machine,
        torch_version=version,
    )
    assert choice.status in ("ok", "no_wheel") and choice.reasons
    if choice.status == "ok":
        assert choice.requirement == f"torch=={choice.torch}.*" and choice.index_url.startswith("https://")
    tf = kb.choose_tensorflow(driver_version=driver, python_version=python, os=os, tf_version=version)
    assert tf.status in ("ok", "no_wheel") and tf.reasons


@settings(max_examples=50, deadline=None)
@given(value=json_like())
def test_describe_rejects_junk_topics_with_a_knowledge_error(value):
    try:
        describe.render_kb_text(topic=value)
    except KnowledgeError:
        pass
