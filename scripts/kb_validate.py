#!/usr/bin/env python3
"""Check the knowledge-base data files before they ship (maintainer script, not a test run).

    python scripts/kb_validate.py                 # the files inside gpudoctor/kb/data
    python scripts/kb_validate.py --data-dir DIR  # a copy being edited

Checks: every row has at least one source and every source key exists; a row whose
sources are all secondary says so in its note; driver and CUDA versions parse; within a
platform a newer CUDA release never needs an older driver; one GA row per CUDA minor; no
compute capability in two architecture rows; GPU names are unique once normalised, each
resolves to its own row (none is shadowed), and each row's architecture agrees with the
architecture table.  The framework files: PyTorch releases unique and newest first, each
variant's CUDA consistent with its cuXYZ tag, arch lists parse, Python ranges parse, the
PyPI default is one of the release's variants; TensorFlow's driver columns equal what the
driver table (in the same data directory) says for the tested CUDA; cuDNN library names
carry their major; JAX's driver floors and CuPy's package names agree with their CUDA major.
The GPU spec sheets: every figure positive or null, each name unique once normalised and found
by the lookup as its own row, compute capability and architecture agree with the driver table,
the PCIe generation is one the PCIe table has, TF32 figures carry their own sources; the PCIe
table: one row per generation, ascending, x16 = 16 lanes and duplex = twice one direction.
The Xid table: codes unique and ascending, severity and category from the allowed sets, every
command a named argument list whose only placeholder is ``{gpu}``; the health limits: names
unique, numeric limits positive, a gpudoctor-chosen value says so in its note, the persistence
brand lists disjoint.  The nvidia/cuda tags: one row per exact release, newest first, flavor and OS tokens
well-formed, cuDNN flavors spelled with the row's cuDNN token, confidence published or secondary.
Prints a summary; exits 1 on any error.

``validate(data_dir)`` returns the list of errors, so a test can assert it is empty.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from gpudoctor import kb  # noqa: E402

DEFAULT_DATA_DIR = REPO / "gpudoctor" / "kb" / "data"
DRIVER_FILE = "driver_cuda.json"
GPU_FILE = "gpu_compute_capability.json"
TORCH_FILE = "pytorch.json"
TF_FILE = "tensorflow.json"
CUDNN_FILE = "cudnn.json"
PACKAGES_FILE = "python_gpu_packages.json"
SPECS_FILE = "gpu_specs.json"
PCIE_FILE = "pcie.json"
XID_FILE = "xid.json"
HEALTH_FILE = "health_limits.json"
NVLINK_FILE = "nvlink.json"
DOCKER_FILE = "docker_cuda.json"
DOCKER_FLAVOR_RE = re.compile(r"(?:(cudnn\d?)-)?(base|runtime|devel)")
DOCKER_OS_RE = re.compile(r"[a-z]+\d+(?:\.\d+)?")
DOCKER_TAG_RE = re.compile(r"(\d+\.\d+\.\d+)-(?:(cudnn\d?)-)?(base|runtime|devel)-([a-z]+\d+(?:\.\d+)?)")
XID_SEVERITIES = ("problem", "warning", "info")
XID_CATEGORIES = ("hardware", "driver", "application", "memory", "nvlink", "thermal", "power", "unknown")
# The one placeholder gpudoctor.kb.xid fills in; any other "{...}" or "<...>" would reach the user unfilled.
PLACEHOLDER_RE = re.compile(r"\{[^}]*\}|<[^>]*>")
SPEC_FIGURES = (
    "memory_bandwidth_gbs",
    "fp32_tflops",
    "fp16_tensor_dense_tflops",
    "bf16_tensor_dense_tflops",
    "tf32_tensor_dense_tflops",
    "nvlink_gbs_bidirectional",
)
RELEASE_RE = re.compile(r"\d{1,2}\.\d{1,3}")
TAG_RE = re.compile(r"cu(\d{2,3})")
ARCH_ENTRY_RE = re.compile(r"\d{1,2}\.\d(\+PTX)?")
CUDNN_PIN_RE = re.compile(r"\d+\.\d+\.\d+\.\d+")
STAGES = ("ga", "update", "rc")
CC_RE = re.compile(r"\d{1,2}\.\d")


def _load(path: pathlib.Path, errors: list[str]) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        errors.append(f"{path.name}: missing")
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        errors.append(f"{path.name}: not readable JSON: {exc}")
        return None
    if not isinstance(data, dict):
        errors.append(f"{path.name}: top level is not an object")
        return None
    return data


def _check_header(name: str, data: dict[str, Any], errors: list[str]) -> dict[str, Any]:
    if not isinstance(data.get("as_of"), str) or not data.get("as_of"):
        errors.append(f"{name}: 'as_of' missing")
    sources = data.get("sources")
    if not isinstance(sources, dict) or not sources:
        errors.append(f"{name}: 'sources' missing or empty")
        return {}
    for key, source in sources.items():
        if not isinstance(source, dict) or not isinstance(source.get("title"), str) or not source["title"]:
            errors.append(f"{name}: source {key!r} has no title")
            continue
        url = source.get("url")
        if url is not None and not (isinstance(url, str) and url.startswith("https://")):
            errors.append(f"{name}: source {key!r} url is not an https URL: {url!r}")
        if not isinstance(source.get("secondary", False), bool):
            errors.append(f"{name}: source {key!r} 'secondary' is not true/false")
    return sources


def _check_sources(where: str, row: dict[str, Any], sources: dict[str, Any], errors: list[str]) -> None:
    keys = row.get("sources")
    if not isinstance(keys, list) or not keys:
        errors.append(f"{where}: no sources")
        return
    unknown = [key for key in keys if key not in sources]
    if unknown:
        errors.append(f"{where}: unknown source key(s) {unknown}")
        return
    if all(isinstance(sources[key], dict) and sources[key].get("secondary") for key in keys):
        note = row.get("note")
        if not (isinstance(note, str) and "secondary" in note.lower()):
            errors.append(f"{where}: every source is secondary but the note does not say so")


def _rows(name: str, data: dict[str, Any], key: str, errors: list[str]) -> list[dict[str, Any]]:
    rows = data.get(key)
    if not isinstance(rows, list) or not rows:
        errors.append(f"{name}: '{key}' missing or empty")
        return []
    good = [row for row in rows if isinstance(row, dict)]
    if len(good) != len(rows):
        errors.append(f"{name}: '{key}' has entries that are not objects")
    return good


def _check_driver_file(data: dict[str, Any], errors: list[str]) -> tuple[dict[str, int], dict[str, str]]:
    """Counts per table, and the compute capability -> architecture map the GPU file must agree with."""
    name = DRIVER_FILE
    sources = _check_header(name, data, errors)
    toolkit = _rows(name, data, "toolkit_driver", errors)
    seen_full: set[tuple[int, int, int]] = set()
    ga_count: dict[tuple[int, int], int] = {}
    ordered: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
    for row in toolkit:
        where = f"{name}: toolkit row {row.get('release')!r}"
        _check_sources(where, row, sources, errors)
        cuda = kb.parse_cuda_version(row.get("cuda"))
        full = kb.parse_cuda_version(row.get("cuda_full"))
        if cuda is None or cuda[2] is not None:
            errors.append(f"{where}: cuda {row.get('cuda')!r} is not 'major.minor'")
            continue
        if full is None or full[2] is None or full[:2] != cuda[:2]:
            errors.append(f"{where}: cuda_full {row.get('cuda_full')!r} is not 'X.Y.Z' of cuda {row.get('cuda')}")
            continue
        full3 = (full[0], full[1], full[2])
        if full3 in seen_full:
            errors.append(f"{where}: duplicate cuda_full {row.get('cuda_full')}")
        seen_full.add(full3)
        stage = row.get("stage")
        if stage not in STAGES:
            errors.append(f"{where}: stage {stage!r} is not one of {STAGES}")
        if stage == "ga":
            ga_count[cuda[:2]] = ga_count.get(cuda[:2], 0) + 1
        for column in ("linux_min", "windows_min"):
            value = row.get(column)
            if value is None:
                continue
            if kb.parse_driver_version(value) is None:
                errors.append(f"{where}: {column} {value!r} is not a driver version")
        if row.get("linux_min") is None and not row.get("note"):
            errors.append(f"{where}: linux_min is null without a note saying why")
        ordered.append((full3, row))
    for minor in {kb.parse_cuda_version(r.get("cuda"))[:2] for _, r in ordered}:
        if ga_count.get(minor, 0) != 1:
            errors.append(f"{name}: CUDA {minor[0]}.{minor[1]} has {ga_count.get(minor, 0)} GA rows (want 1)")
    ordered.sort(key=lambda item: item[0])
    for column in ("linux_min", "windows_min"):
        previous: tuple[tuple[int, int, int], str, str] | None = None
        for _full3, row in ordered:
            driver = kb.parse_driver_version(row.get(column))
            if driver is None:
                continue
            if previous is not None and driver < previous[0]:
                errors.append(
                    f"{name}: {column} not monotonic: CUDA {row.get('cuda_full')} needs {row.get(column)}, "
                    f"older than the {previous[2]} of CUDA {previous[1]}"
                )
            previous = (driver, str(row.get("cuda_full")), str(row.get(column)))

    mvc = _rows(name, data, "minor_version_compat", errors)
    majors: set[int] = set()
    for row in mvc:
        major = row.get("cuda_major")
        where = f"{name}: minor_version_compat row {major!r}"
        _check_sources(where, row, sources, errors)
        if not isinstance(major, int) or isinstance(major, bool):
            errors.append(f"{where}: cuda_major is not an integer")
            continue
        if major in majors:
            errors.append(f"{where}: duplicate cuda_major")
        majors.add(major)
        for column in ("linux_min", "windows_min"):
            value = row.get(column)
            if value is not None and kb.parse_driver_version(value) is None:
                errors.append(f"{where}: {column} {value!r} is not a driver version")
        floor = kb.parse_driver_version(row.get("linux_min"))
        if floor is None:
            errors.append(f"{where}: linux_min missing")
            continue
        fulls = [
            kb.parse_driver_version(r.get("linux_min"))
            for _, r in ordered
            if kb.parse_cuda_version(r.get("cuda"))[0] == major and r.get("stage") == "ga"
        ]
        fulls = [value for value in fulls if value is not None]
        if fulls and floor > max(fulls):
            errors.append(f"{where}: floor {row.get('linux_min')} is above every full-support minimum of {major}.x")

    arch_rows = _rows(name, data, "architectures", errors)
    seen_cc: dict[str, str] = {}
    for row in arch_rows:
        where = f"{name}: architecture row {row.get('architecture')!r}"
        _check_sources(where, row, sources, errors)
        if not isinstance(row.get("architecture"), str) or not row.get("architecture"):
            errors.append(f"{where}: no architecture name")
        ccs = row.get("compute_capabilities")
        if not isinstance(ccs, list) or not ccs:
            errors.append(f"{where}: no compute_capabilities")
            continue
        for cc in ccs:
            if not isinstance(cc, str) or not CC_RE.fullmatch(cc):
                errors.append(f"{where}: compute capability {cc!r} is not 'X.Y'")
                continue
            if cc in seen_cc:
                errors.append(f"{where}: compute capability {cc} also in {seen_cc[cc]!r}")
            seen_cc[cc] = str(row.get("architecture"))
    counts = {"toolkit_driver": len(toolkit), "minor_version_compat": len(mvc), "architectures": len(arch_rows)}
    return counts, seen_cc


def _check_gpu_file(data: dict[str, Any], cc_map: dict[str, str], errors: list[str]) -> dict[str, int]:
    name = GPU_FILE
    sources = _check_header(name, data, errors)
    gpus = _rows(name, data, "gpus", errors)
    seen: dict[tuple[str, ...], str] = {}
    for row in gpus:
        match = row.get("match")
        where = f"{name}: gpu {match!r}"
        _check_sources(where, row, sources, errors)
        tokens = kb.normalize_gpu_name(match)
        if not tokens:
            errors.append(f"{where}: empty match name")
            continue
        if tokens in seen:
            errors.append(f"{where}: duplicate match name (same as {seen[tokens]!r} once normalised)")
        seen[tokens] = str(match)
        cc = row.get("compute_capability")
        if not isinstance(cc, str) or not CC_RE.fullmatch(cc):
            errors.append(f"{where}: compute_capability {cc!r} is not 'X.Y'")
            continue
        expected = cc_map.get(cc)
        if expected is None:
            errors.append(f"{where}: compute capability {cc} is in no architecture row")
        elif row.get("architecture") != expected:
            errors.append(f"{where}: architecture {row.get('architecture')!r} but {cc} is {expected!r}")
    index = kb.build_name_index(gpus)
    for row in gpus:
        match = row.get("match")
        if not kb.normalize_gpu_name(match):
            continue
        found, _truncated = kb.match_name(match, index)
        if not found or found[0] is not row:
            other = found[0].get("match") if found else None
            errors.append(f"{name}: gpu {match!r} does not resolve to its own row (got {other!r})")
    return {"gpus": len(gpus)}


# --------------------------------------------------------------------------- framework files


def _check_key_list(
    where: str, row: dict[str, Any], key: str, sources: dict[str, Any], errors: list[str], required: bool
) -> None:
    keys = row.get(key)
    if keys in (None, []):
        if required:
            errors.append(f"{where}: {key} missing")
        return
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        errors.append(f"{where}: {key} is not a list of source keys")
        return
    unknown = [k for k in keys if k not in sources]
    if unknown:
        errors.append(f"{where}: unknown source key(s) {unknown} in {key}")


def _python_range(where: str, row: dict[str, Any], errors: list[str]) -> None:
    low, high = row.get("python_min"), row.get("python_max")
    parsed = [kb.parse_python_version(v) if v is not None else None for v in (low, high)]
    for value, result in zip((low, high), parsed):
        well_formed = isinstance(value, str) and result is not None and re.fullmatch(r"\d\.\d{1,2}", value)
        if value is not None and not well_formed:
            errors.append(f"{where}: Python version {value!r} is not 'X.Y'")
    if parsed[0] and parsed[1] and parsed[0] > parsed[1]:
        errors.append(f"{where}: python_min {low} is above python_max {high}")


def _arch_entries(where: str, values: object, errors: list[str]) -> None:
    if values is None:
        return
    if not isinstance(values, list) or not values:
        errors.append(f"{where}: not a non-empty list")
        return
    for entry in values:
        if not isinstance(entry, str) or not ARCH_ENTRY_RE.fullmatch(entry):
            errors.append(f"{where}: entry {entry!r} is not 'X.Y' or 'X.Y+PTX'")
    if kb.parse_arch_list(values) is None:
        errors.append(f"{where}: does not parse")


def _release_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def _check_torch_file(data: dict[str, Any], errors: list[str]) -> dict[str, int]:
    name = TORCH_FILE
    sources = _check_header(name, data, errors)
    releases = _rows(name, data, "releases", errors)
    seen: set[str] = set()
    previous: tuple[int, ...] | None = None
    variant_count = 0
    for row in releases:
        torch = row.get("torch")
        where = f"{name}: torch {torch!r}"
        _check_sources(where, row, sources, errors)
        if not isinstance(torch, str) or not RELEASE_RE.fullmatch(torch):
            errors.append(f"{where}: release is not 'X.Y'")
            continue
        if torch in seen:
            errors.append(f"{where}: duplicate release")
        seen.add(torch)
        key = _release_tuple(torch)
        if previous is not None and key >= previous:
            errors.append(f"{where}: releases are not ordered newest first")
        previous = key
        _python_range(where, row, errors)
        variants = row.get("variants")
        if not isinstance(variants, list) or not variants:
            errors.append(f"{where}: no variants")
            continue
        tags: set[str] = set()
        for variant in variants:
            if not isinstance(variant, dict):
                errors.append(f"{where}: a variant is not an object")
                continue
            variant_count += 1
            tag = variant.get("variant")
            vwhere = f"{where} {tag!r}"
            _check_sources(vwhere, variant, sources, errors)
            match = TAG_RE.fullmatch(tag) if isinstance(tag, str) else None
            if match is None:
                errors.append(f"{vwhere}: variant is not a cuXYZ tag")
                continue
            if tag in tags:
                errors.append(f"{vwhere}: duplicate variant")
            tags.add(tag)
            tag_cuda = kb.parse_cuda_version(tag)
            cuda = kb.parse_cuda_version(variant.get("cuda"))
            if cuda is None or cuda[2] is not None:
                errors.append(f"{vwhere}: cuda {variant.get('cuda')!r} is not 'major.minor'")
            elif tag_cuda is not None and cuda[:2] != tag_cuda[:2]:
                errors.append(f"{vwhere}: cuda {variant.get('cuda')} does not match the tag {tag}")
            full = variant.get("cuda_full")
            if full is not None:
                parsed = kb.parse_cuda_version(full)
                if parsed is None or (cuda is not None and parsed[:2] != cuda[:2]):
                    errors.append(f"{vwhere}: cuda_full {full!r} is not a version of CUDA {variant.get('cuda')}")
            cudnn = variant.get("cudnn")
            if cudnn is not None and (not isinstance(cudnn, str) or not CUDNN_PIN_RE.fullmatch(cudnn)):
                errors.append(f"{vwhere}: cudnn {cudnn!r} is not a W.X.Y.Z pin")
            for column, keys in (
                ("arch_list_linux_x86_64", "arch_sources"),
                ("arch_list_linux_aarch64", "aarch64_arch_sources"),
                ("arch_list_windows", "windows_arch_sources"),
            ):
                _arch_entries(f"{vwhere} {column}", variant.get(column), errors)
                _check_key_list(vwhere, variant, keys, sources, errors, required=variant.get(column) is not None)
            if variant.get("arch_list_linux_x86_64") is None and not variant.get("note"):
                errors.append(f"{vwhere}: arch list is null without a note saying why")
            windows = variant.get("windows")
            if windows is not None and not isinstance(windows, bool):
                errors.append(f"{vwhere}: windows is not true/false/null")
            _check_key_list(vwhere, variant, "windows_sources", sources, errors, required=windows is not None)
            if variant.get("arch_list_windows") is not None and windows is not True:
                errors.append(f"{vwhere}: a Windows arch list but no Windows wheel")
        default = row.get("default_pypi_linux_x86_64")
        if default is not None and default not in tags:
            errors.append(f"{where}: PyPI default {default!r} is not one of its variants")
    for row in data.get("unconfirmed_releases", []) or []:
        if isinstance(row, dict):
            _check_sources(f"{name}: unconfirmed torch {row.get('torch')!r}", row, sources, errors)
            if row.get("torch") in seen:
                errors.append(f"{name}: torch {row.get('torch')!r} is both confirmed and unconfirmed")
    return {"releases": len(releases), "variants": variant_count}


def _driver_lookup(driver: dict[str, Any] | None) -> tuple[dict[tuple[int, int], str], dict[int, str]]:
    """GA Linux minimums by CUDA major.minor, and Linux MVC floors by major, from a driver file being validated."""
    ga: dict[tuple[int, int], str] = {}
    floors: dict[int, str] = {}
    if not driver:
        return ga, floors
    for row in driver.get("toolkit_driver", []) or []:
        if isinstance(row, dict) and row.get("stage") == "ga" and isinstance(row.get("linux_min"), str):
            cuda = kb.parse_cuda_version(row.get("cuda"))
            if cuda is not None:
                ga[(cuda[0], cuda[1])] = row["linux_min"]
    for row in driver.get("minor_version_compat", []) or []:
        if isinstance(row, dict) and isinstance(row.get("cuda_major"), int) and isinstance(row.get("linux_min"), str):
            floors[row["cuda_major"]] = row["linux_min"]
    return ga, floors


def _check_tf_file(data: dict[str, Any], driver: dict[str, Any] | None, errors: list[str]) -> dict[str, int]:
    name = TF_FILE
    sources = _check_header(name, data, errors)
    releases = _rows(name, data, "releases", errors)
    ga, floors = _driver_lookup(driver)
    seen: set[tuple[int, ...]] = set()
    previous: tuple[int, ...] | None = None
    for row in releases:
        version = row.get("version")
        where = f"{name}: TensorFlow {version!r}"
        _check_sources(where, row, sources, errors)
        _check_key_list(where, row, "driver_sources", sources, errors, required=True)
        if not isinstance(version, str) or not re.fullmatch(r"\d+\.\d+\.\d+", version):
            errors.append(f"{where}: version is not 'X.Y.Z'")
            continue
        key = _release_tuple(version)
        if key[:2] in seen:
            errors.append(f"{where}: duplicate release {key[0]}.{key[1]}")
        seen.add(key[:2])
        if previous is not None and key >= previous:
            errors.append(f"{where}: releases are not ordered newest first")
        previous = key
        _python_range(where, row, errors)
        cuda = kb.parse_cuda_version(row.get("cuda"))
        if cuda is None:
            errors.append(f"{where}: cuda {row.get('cuda')!r} does not parse")
            continue
        for column in ("and_cuda", "windows_native_gpu"):
            if not isinstance(row.get(column), bool):
                errors.append(f"{where}: {column} is not true/false")
        if row.get("windows_native_gpu") is True and key[:2] > (2, 10):
            errors.append(f"{where}: native Windows GPU after 2.10")
        for column in ("linux_driver_min", "linux_driver_mvc_floor"):
            value = row.get(column)
            if value is not None and kb.parse_driver_version(value) is None:
                errors.append(f"{where}: {column} {value!r} is not a driver version")
        if driver is not None:
            expected = ga.get((cuda[0], cuda[1]))
            if row.get("linux_driver_min") != expected:
                errors.append(
                    f"{where}: linux_driver_min {row.get('linux_driver_min')!r} but the driver table says "
                    f"{expected!r} for CUDA {cuda[0]}.{cuda[1]}"
                )
            floor = floors.get(cuda[0])
            if row.get("linux_driver_mvc_floor") != floor:
                errors.append(
                    f"{where}: linux_driver_mvc_floor {row.get('linux_driver_mvc_floor')!r} but the driver "
                    f"table's CUDA {cuda[0]}.x floor is {floor!r}"
                )
    return {"releases": len(releases)}


def _check_cudnn_file(data: dict[str, Any], errors: list[str]) -> dict[str, int]:
    name = CUDNN_FILE
    sources = _check_header(name, data, errors)
    majors = _rows(name, data, "majors", errors)
    seen: set[int] = set()
    for row in majors:
        major = row.get("major")
        where = f"{name}: cuDNN {major!r}"
        _check_sources(where, row, sources, errors)
        if not isinstance(major, int) or isinstance(major, bool):
            errors.append(f"{where}: major is not an integer")
            continue
        if major in seen:
            errors.append(f"{where}: duplicate major")
        seen.add(major)
        libraries = row.get("libraries")
        if not isinstance(libraries, list) or not libraries:
            errors.append(f"{where}: no libraries")
        else:
            for lib in libraries:
                if not isinstance(lib, str) or not re.fullmatch(rf"libcudnn\w*\.so\.{major}", lib):
                    errors.append(f"{where}: library {lib!r} is not libcudnn*.so.{major}")
        for pip in row.get("pip_packages", []) or []:
            if not isinstance(pip, str) or not re.fullmatch(r"nvidia-cudnn-cu\d{2}", pip):
                errors.append(f"{where}: pip package {pip!r} is not nvidia-cudnn-cuNN")
        cc = row.get("min_compute_capability")
        if cc is not None and (not isinstance(cc, str) or not CC_RE.fullmatch(cc)):
            errors.append(f"{where}: min_compute_capability {cc!r} is not 'X.Y'")
        steps = row.get("min_compute_capability_from", []) or []
        for step in steps:
            ok = (
                isinstance(step, list)
                and len(step) == 2
                and isinstance(step[0], str)
                and re.fullmatch(rf"{major}\.\d+\.\d+", step[0])
                and isinstance(step[1], str)
                and CC_RE.fullmatch(step[1])
            )
            if not ok:
                errors.append(f"{where}: min_compute_capability_from entry {step!r} is not [version, 'X.Y']")
        if cc is None and not steps:
            errors.append(f"{where}: no minimum compute capability at all")
    return {"majors": len(majors)}


def _check_packages_file(data: dict[str, Any], driver: dict[str, Any] | None, errors: list[str]) -> dict[str, int]:
    name = PACKAGES_FILE
    sources = _check_header(name, data, errors)
    _ga, floors = _driver_lookup(driver)
    jax = data.get("jax") if isinstance(data.get("jax"), dict) else {}
    cupy = data.get("cupy") if isinstance(data.get("cupy"), dict) else {}
    extras = _rows(f"{name} jax", jax, "extras", errors)
    packages = _rows(f"{name} cupy", cupy, "packages", errors)
    _check_key_list(f"{name}: jax platforms", jax, "platform_sources", sources, errors, required=True)
    seen: set[str] = set()
    for row in extras:
        extra = row.get("extra")
        where = f"{name}: jax[{extra}]"
        _check_sources(where, row, sources, errors)
        match = re.fullmatch(r"cuda(\d{2})", extra) if isinstance(extra, str) else None
        if match is None or row.get("cuda_major") != int(match.group(1)):
            errors.append(f"{where}: extra and cuda_major {row.get('cuda_major')!r} disagree")
            continue
        if extra in seen:
            errors.append(f"{where}: duplicate extra")
        seen.add(extra)
        floor = row.get("linux_driver_min")
        if kb.parse_driver_version(floor) is None:
            errors.append(f"{where}: linux_driver_min {floor!r} is not a driver version")
        elif driver is not None and floors.get(row["cuda_major"]) != floor:
            errors.append(
                f"{where}: linux_driver_min {floor} but the driver table's CUDA "
                f"{row['cuda_major']}.x floor is {floors.get(row['cuda_major'])!r}"
            )
        branch = row.get("driver_branch_min")
        if kb.parse_driver_version(floor) and isinstance(branch, str) and branch.isdigit():
            if kb.parse_driver_version(floor)[0] < int(branch):
                errors.append(f"{where}: linux_driver_min {floor} is below its branch R{branch}")
        cc = row.get("min_compute_capability")
        if not isinstance(cc, str) or not CC_RE.fullmatch(cc):
            errors.append(f"{where}: min_compute_capability {cc!r} is not 'X.Y'")
    releases = _rows(f"{name} jax", jax, "releases", errors)
    known_extras = seen
    seen_releases: list[tuple[int, ...]] = []
    for row in releases:
        version = row.get("version")
        where = f"{name}: jax {version}"
        _check_sources(where, row, sources, errors)
        if not isinstance(version, str) or not re.fullmatch(r"\d+(\.\d+){2,3}", version):
            errors.append(f"{where}: version is not 'X.Y.Z'")
            continue
        key = tuple(int(x) for x in version.split("."))  # all parts: 0.9.0.1 is not 0.9.0
        if key in seen_releases:
            errors.append(f"{where}: duplicate release")
        elif seen_releases and key > seen_releases[-1]:
            errors.append(f"{where}: releases are not newest first")
        seen_releases.append(key)
        _python_range(where, row, errors)
        if row.get("python_min") is None or row.get("python_max") is None:
            errors.append(f"{where}: python_min and python_max are both needed")
        extras_of = row.get("extras")
        if not isinstance(extras_of, list) or not extras_of or not all(isinstance(x, str) for x in extras_of):
            errors.append(f"{where}: extras is not a non-empty list of extra names")
        elif set(extras_of) - known_extras:
            errors.append(f"{where}: extras {sorted(set(extras_of) - known_extras)} are not in jax.extras")
        jaxlib = row.get("jaxlib")
        if jaxlib is not None and (
            not isinstance(jaxlib, str)
            or not re.fullmatch(r"\d+(\.\d+){2,3}", jaxlib)
            or tuple(int(x) for x in jaxlib.split(".")) > key
        ):
            errors.append(f"{where}: jaxlib {jaxlib!r} is not a version at or below the release")
    seen_packages: set[str] = set()
    for row in packages:
        package = row.get("package")
        where = f"{name}: {package!r}"
        _check_sources(where, row, sources, errors)
        major = row.get("cuda_major")
        if not isinstance(major, int) or package != f"cupy-cuda{major}x":
            errors.append(f"{where}: package name and cuda_major {major!r} disagree")
        if package in seen_packages:
            errors.append(f"{where}: duplicate package")
        seen_packages.add(str(package))
    return {"jax_extras": len(extras), "jax_releases": len(releases), "cupy_packages": len(packages)}


def _positive(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _check_pcie_file(data: dict[str, Any], errors: list[str]) -> tuple[dict[str, int], set[int]]:
    name = PCIE_FILE
    sources = _check_header(name, data, errors)
    rows = _rows(name, data, "rows", errors)
    gens: list[int] = []
    for row in rows:
        gen = row.get("gen")
        where = f"{name}: Gen {gen!r}"
        _check_sources(where, row, sources, errors)
        if not isinstance(gen, int) or isinstance(gen, bool) or gen < 1:
            errors.append(f"{where}: gen is not a positive integer")
            continue
        if gen in gens:
            errors.append(f"{where}: duplicate generation")
        if gens and gen < gens[-1]:
            errors.append(f"{where}: generations are not in ascending order")
        gens.append(gen)
        lane, x16, duplex = row.get("gb_s_per_lane_per_dir"), row.get("x16_gb_s_per_dir"), row.get("x16_gb_s_duplex")
        if not all(_positive(v) for v in (row.get("gt_s"), lane, x16, duplex)):
            errors.append(f"{where}: a rate is missing or not positive")
            continue
        if abs(lane * 16 - x16) > 0.01 * x16:
            errors.append(f"{where}: x16 rate {x16} is not 16 lanes of {lane}")
        if abs(duplex - 2 * x16) > 0.01 * duplex:
            errors.append(f"{where}: duplex {duplex} is not twice {x16}")
    previous = None
    for gen in gens:
        rate = next(r.get("x16_gb_s_per_dir") for r in rows if r.get("gen") == gen)
        if previous is not None and _positive(rate) and _positive(previous) and rate <= previous:
            errors.append(f"{name}: Gen {gen} is not faster than the generation before it")
        previous = rate
    return {"generations": len(rows)}, set(gens)


def _check_specs_file(
    data: dict[str, Any], cc_map: dict[str, str], pcie_gens: set[int], errors: list[str]
) -> dict[str, int]:
    from gpudoctor.kb import gpu_specs

    name = SPECS_FILE
    sources = _check_header(name, data, errors)
    gpus = _rows(name, data, "gpus", errors)
    seen: dict[tuple[str, ...], str] = {}
    for row in gpus:
        gpu = row.get("gpu")
        where = f"{name}: {gpu!r}"
        _check_sources(where, row, sources, errors)
        if not isinstance(gpu, str) or not gpu:
            errors.append(f"{where}: no gpu name")
        for column in SPEC_FIGURES:
            value = row.get(column)
            if value is not None and not _positive(value):
                errors.append(f"{where}: {column} {value!r} is not a positive number")
        memory = row.get("memory_gb")
        if not isinstance(memory, list) or not memory or not all(_positive(v) for v in memory):
            errors.append(f"{where}: memory_gb is not a list of positive numbers")
        devices = row.get("devices_per_board")
        if not isinstance(devices, int) or isinstance(devices, bool) or devices < 1:
            errors.append(f"{where}: devices_per_board is not a positive integer")
        tf32 = row.get("tf32_tensor_dense_tflops")
        _check_key_list(where, row, "tf32_sources", sources, errors, required=tf32 is not None)
        if tf32 is not None and not (isinstance(row.get("tf32_note"), str) and row["tf32_note"]):
            errors.append(f"{where}: a TF32 figure without a note saying how it was read")
        fp16, bf16 = row.get("fp16_tensor_dense_tflops"), row.get("bf16_tensor_dense_tflops")
        if _positive(fp16) and _positive(tf32) and tf32 > fp16:
            errors.append(f"{where}: TF32 {tf32} above FP16 {fp16}")
        if (
            _positive(bf16)
            and _positive(row.get("fp32_tflops"))
            and bf16 < row["fp32_tflops"]
            and str(row.get("architecture", "")).startswith(("Ampere", "Ada", "Hopper", "Blackwell"))
        ):
            errors.append(f"{where}: BF16 tensor rate {bf16} below FP32 {row['fp32_tflops']}")
        cc = row.get("compute_capability")
        if cc is not None:
            if not isinstance(cc, str) or not CC_RE.fullmatch(cc):
                errors.append(f"{where}: compute_capability {cc!r} is not 'X.Y'")
            elif cc_map and cc_map.get(cc) != row.get("architecture"):
                errors.append(f"{where}: architecture {row.get('architecture')!r} but {cc} is {cc_map.get(cc)!r}")
        gen, width = row.get("pcie_gen"), row.get("pcie_width")
        if (gen is None) != (width is None):
            errors.append(f"{where}: pcie_gen and pcie_width must be both known or both null")
        if gen is not None and pcie_gens and gen not in pcie_gens:
            errors.append(f"{where}: PCIe Gen {gen!r} is not in {PCIE_FILE}")
        if width is not None and width not in (1, 2, 4, 8, 16, 32):
            errors.append(f"{where}: PCIe width {width!r} is not a link width")
        names = row.get("names")
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            errors.append(f"{where}: names is not a list of names")
            continue
        for spelled in names:
            tokens = gpu_specs.spec_name_tokens(spelled)
            if not tokens:
                errors.append(f"{where}: name {spelled!r} has no tokens")
                continue
            if tokens in seen:
                errors.append(f"{where}: name {spelled!r} is also a name of {seen[tokens]!r}")
            seen[tokens] = str(gpu)
    for position, row in enumerate(gpus):
        for spelled in row.get("names") or []:
            if not isinstance(spelled, str):
                continue
            found = _match_in(gpus, spelled)
            if found != position:
                other = gpus[found].get("gpu") if found is not None else None
                errors.append(f"{name}: name {spelled!r} of {row.get('gpu')!r} finds {other!r}")
    return {"gpus": len(gpus), "names": sum(len(r.get("names") or []) for r in gpus)}


def _nonempty(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _check_xid_commands(name: str, data: dict[str, Any], sources: dict[str, Any], errors: list[str]) -> set[str]:
    commands = data.get("commands")
    if not isinstance(commands, dict) or not commands:
        errors.append(f"{name}: 'commands' missing or empty")
        return set()
    for key, entry in commands.items():
        where = f"{name}: command {key!r}"
        if not isinstance(entry, dict):
            errors.append(f"{where}: not an object")
            continue
        _check_sources(where, entry, sources, errors)
        argv = entry.get("argv")
        if not isinstance(argv, list) or not argv or not all(_nonempty(arg) for arg in argv):
            errors.append(f"{where}: argv is not a list of non-empty strings")
            continue
        for arg in argv:
            rest = arg.replace("{gpu}", "")
            if PLACEHOLDER_RE.search(rest) or "{" in rest or "}" in rest:
                errors.append(f"{where}: argument {arg!r} has a placeholder other than {{gpu}}")
        if not _nonempty(entry.get("why")):
            errors.append(f"{where}: no 'why'")
    return {key for key, entry in commands.items() if isinstance(entry, dict)}


def _check_xid_file(data: dict[str, Any], errors: list[str]) -> dict[str, int]:
    name = XID_FILE
    sources = _check_header(name, data, errors)
    command_names = _check_xid_commands(name, data, sources, errors)
    rows = _rows(name, data, "xids", errors)
    previous: int | None = None
    for row in rows:
        code = row.get("code")
        where = f"{name}: Xid {code!r}"
        _check_sources(where, row, sources, errors)
        if not isinstance(code, int) or isinstance(code, bool) or code < 1:
            errors.append(f"{where}: code is not a positive integer")
            continue
        if previous is not None and code <= previous:
            errors.append(f"{where}: codes are not unique and ascending")
        previous = code
        if row.get("severity") not in XID_SEVERITIES:
            errors.append(f"{where}: severity {row.get('severity')!r} is not one of {XID_SEVERITIES}")
        if row.get("category") not in XID_CATEGORIES:
            errors.append(f"{where}: category {row.get('category')!r} is not one of {XID_CATEGORIES}")
        for field in ("meaning", "action"):
            if not _nonempty(row.get(field)):
                errors.append(f"{where}: no {field}")
        used = row.get("commands")
        if not isinstance(used, list):
            errors.append(f"{where}: commands is not a list")
        else:
            for key in used:
                if key not in command_names:
                    errors.append(f"{where}: unknown command {key!r}")
        if row.get("note") is not None and not _nonempty(row.get("note")):
            errors.append(f"{where}: note is neither text nor null")
        actions = row.get("recovery_actions")
        if actions is not None and (
            not isinstance(actions, dict) or not actions or any(v not in XID_SEVERITIES for v in actions.values())
        ):
            errors.append(f"{where}: recovery_actions is not a map of action -> severity")
    return {"xids": len(rows), "commands": len(command_names)}


def _check_health_file(data: dict[str, Any], errors: list[str]) -> dict[str, int]:
    name = HEALTH_FILE
    sources = _check_header(name, data, errors)
    limits = _rows(name, data, "limits", errors)
    seen: set[str] = set()
    for row in limits:
        limit = row.get("name")
        where = f"{name}: limit {limit!r}"
        _check_sources(where, row, sources, errors)
        if not _nonempty(limit):
            errors.append(f"{where}: no name")
            continue
        if limit in seen:
            errors.append(f"{where}: duplicate name")
        seen.add(limit)
        value = row.get("value")
        if isinstance(value, bool):
            pass  # a flag rule ("pending -> reset")
        elif not _positive(value):
            errors.append(f"{where}: value {value!r} is neither a flag nor a positive number")
        if not _nonempty(row.get("rule")):
            errors.append(f"{where}: no rule")
        default = row.get("gpudoctor_default")
        if not isinstance(default, bool):
            errors.append(f"{where}: gpudoctor_default is not true/false")
        elif default and "gpudoctor default" not in str(row.get("note") or "").lower():
            errors.append(f"{where}: a gpudoctor default whose note does not say so")
    persistence = data.get("persistence")
    if not isinstance(persistence, dict):
        errors.append(f"{name}: 'persistence' missing")
        return {"limits": len(limits)}
    _check_sources(f"{name}: persistence", persistence, sources, errors)
    lists = {}
    for key in (
        "datacenter_brands",
        "other_brands",
        "datacenter_name_prefixes",
        "datacenter_models",
        "other_name_words",
    ):
        values = persistence.get(key)
        if not isinstance(values, list) or not values or not all(_nonempty(v) for v in values):
            errors.append(f"{name}: persistence {key} is not a list of names")
            values = []
        lists[key] = {" ".join(v.split()).casefold() for v in values if isinstance(v, str)}
    for a, b in (("datacenter_brands", "other_brands"), ("datacenter_models", "other_name_words")):
        both = lists[a] & lists[b]
        if both:
            errors.append(f"{name}: persistence {a} and {b} share {sorted(both)}")
    return {"limits": len(limits), "datacenter_brands": len(lists["datacenter_brands"])}


def _match_in(gpus: list[dict[str, Any]], spelled: str) -> int | None:
    """The lookup's rule (longest name first, a memory-size tail allowed) over the rows being validated."""
    from gpudoctor.kb import gpu_specs

    tokens = gpu_specs.spec_name_tokens(spelled)
    entries = sorted(
        (
            (gpu_specs.spec_name_tokens(n), i)
            for i, r in enumerate(gpus)
            for n in r.get("names") or []
            if isinstance(n, str)
        ),
        key=lambda entry: -len(entry[0]),
    )
    for row_tokens, position in entries:
        size = len(row_tokens)
        if row_tokens and tokens[:size] == row_tokens and all(re.fullmatch(r"\d{1,3}gb", t) for t in tokens[size:]):
            return position
    return None


def _check_nvlink_file(data: dict[str, Any], errors: list[str]) -> dict[str, int]:
    """NVLink generations: links x per-link rate must give the GPU's total, generations ascend."""
    name = NVLINK_FILE
    sources = _check_header(name, data, errors)
    rows = _rows(name, data, "rows", errors)
    previous = 0
    for row in rows:
        generation = row.get("generation")
        where = f"{name}: NVLink {generation!r}"
        _check_sources(where, row, sources, errors)
        links, per_link, total = row.get("links_per_gpu"), row.get("link_gbs_duplex"), row.get("gpu_gbs_duplex")
        if not isinstance(generation, int) or generation <= previous:
            errors.append(f"{where}: generations must be integers in ascending order")
            continue
        previous = generation
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in (links, per_link, total)):
            errors.append(f"{where}: links_per_gpu, link_gbs_duplex and gpu_gbs_duplex must be positive numbers")
        elif abs(links * per_link - total) > 0.01:
            errors.append(f"{where}: {links} links x {per_link} GB/s is not the GPU's {total} GB/s")
        if not _nonempty(row.get("architecture")):
            errors.append(f"{where}: no architecture")
    return {"generations": len(rows)}


def _check_docker_file(data: dict[str, Any], errors: list[str]) -> dict[str, int]:
    """nvidia/cuda tags: one row per exact x.y.z release, newest first; OS and flavor tokens well-formed; the
    cuDNN flavors use the row's cuDNN token; per-OS flavor lists are subsets; confidence published/secondary;
    every 'also_seen' tag parses and is sourced."""
    name = DOCKER_FILE
    sources = _check_header(name, data, errors)
    rows = _rows(name, data, "rows", errors)
    seen: set[str] = set()
    previous: tuple[int, ...] | None = None
    published = 0
    for row in rows:
        cuda = row.get("cuda")
        where = f"{name} {cuda}"
        _check_sources(where, row, sources, errors)
        if not (isinstance(cuda, str) and re.fullmatch(r"\d+\.\d+\.\d+", cuda)):
            errors.append(f"{where}: 'cuda' is not an exact x.y.z release")
            continue
        if cuda in seen:
            errors.append(f"{where}: duplicate release")
        seen.add(cuda)
        key = _release_tuple(cuda)
        if previous is not None and key >= previous:
            errors.append(f"{where}: rows are not newest first")
        previous = key
        if row.get("confidence") not in ("published", "secondary"):
            errors.append(f"{where}: confidence must be 'published' or 'secondary'")
        published += row.get("confidence") == "published"
        os_list, flavors = row.get("os"), row.get("flavors")
        if not (
            isinstance(os_list, list)
            and os_list
            and all(isinstance(o, str) and DOCKER_OS_RE.fullmatch(o) for o in os_list)
        ):
            errors.append(f"{where}: 'os' must be a non-empty list of tokens like ubuntu24.04")
            os_list = []
        if not (isinstance(flavors, list) and flavors and all(isinstance(f, str) for f in flavors)):
            errors.append(f"{where}: 'flavors' must be a non-empty list")
            flavors = []
        token = row.get("cudnn")
        by_os = row.get("flavors_by_os") if isinstance(row.get("flavors_by_os"), dict) else {}
        all_flavors = list(flavors) + [f for fl in by_os.values() if isinstance(fl, list) for f in fl]
        for flavor in all_flavors:
            match = DOCKER_FLAVOR_RE.fullmatch(str(flavor))
            if not match or (match.group(1) and match.group(2) == "base"):
                errors.append(f"{where}: flavor {flavor!r} is not base/runtime/devel or cudnnN-runtime/devel")
            elif match.group(1) and match.group(1) != token:
                errors.append(f"{where}: flavor {flavor!r} does not use the row's cuDNN token {token!r}")
        if token is not None and not any(str(f).startswith(str(token)) for f in all_flavors):
            errors.append(f"{where}: cuDNN token {token!r} but no cuDNN flavor")
        for os, fl in by_os.items():
            if os not in os_list or not isinstance(fl, list) or not set(fl) <= set(flavors):
                errors.append(f"{where}: flavors_by_os[{os!r}] must name a listed OS and a subset of 'flavors'")
        also = row.get("also_seen")
        if also is not None:
            if not isinstance(also, dict):
                errors.append(f"{where}: 'also_seen' must be an object or null")
                continue
            # Tags seen beside a published row are secondary by definition: check the keys, not the note.
            _check_sources(f"{where} also_seen", {**also, "note": "secondary"}, sources, errors)
            for tag in also.get("tags") or []:
                match = DOCKER_TAG_RE.fullmatch(str(tag))
                if not match or match.group(1) != cuda:
                    errors.append(f"{where}: also_seen tag {tag!r} does not parse as a {cuda} tag")
    for key in data.get("policy_sources") or []:
        if key not in sources:
            errors.append(f"{name}: policy source {key!r} unknown")
    return {"cuda_releases": len(rows), "published": published}


def validate(data_dir: pathlib.Path | str | None = None) -> list[str]:
    """Every problem found in the data files under ``data_dir`` (default: the shipped ones)."""
    errors: list[str] = []
    validate_with_counts(data_dir, errors)
    return errors


def validate_with_counts(data_dir: pathlib.Path | str | None, errors: list[str]) -> dict[str, dict[str, int]]:
    base = pathlib.Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    counts: dict[str, dict[str, int]] = {}
    cc_map: dict[str, str] = {}
    driver = _load(base / DRIVER_FILE, errors)
    if driver is not None:
        counts[DRIVER_FILE], cc_map = _check_driver_file(driver, errors)
    gpus = _load(base / GPU_FILE, errors)
    if gpus is not None:
        counts[GPU_FILE] = _check_gpu_file(gpus, cc_map, errors)
    torch = _load(base / TORCH_FILE, errors)
    if torch is not None:
        counts[TORCH_FILE] = _check_torch_file(torch, errors)
    tf = _load(base / TF_FILE, errors)
    if tf is not None:
        counts[TF_FILE] = _check_tf_file(tf, driver, errors)
    cudnn = _load(base / CUDNN_FILE, errors)
    if cudnn is not None:
        counts[CUDNN_FILE] = _check_cudnn_file(cudnn, errors)
    packages = _load(base / PACKAGES_FILE, errors)
    if packages is not None:
        counts[PACKAGES_FILE] = _check_packages_file(packages, driver, errors)
    pcie_gens: set[int] = set()
    pcie = _load(base / PCIE_FILE, errors)
    if pcie is not None:
        counts[PCIE_FILE], pcie_gens = _check_pcie_file(pcie, errors)
    specs = _load(base / SPECS_FILE, errors)
    if specs is not None:
        counts[SPECS_FILE] = _check_specs_file(specs, cc_map, pcie_gens, errors)
    xids = _load(base / XID_FILE, errors)
    if xids is not None:
        counts[XID_FILE] = _check_xid_file(xids, errors)
    health = _load(base / HEALTH_FILE, errors)
    if health is not None:
        counts[HEALTH_FILE] = _check_health_file(health, errors)
    nvlink = _load(base / NVLINK_FILE, errors)
    if nvlink is not None:
        counts[NVLINK_FILE] = _check_nvlink_file(nvlink, errors)
    docker = _load(base / DOCKER_FILE, errors)
    if docker is not None:
        counts[DOCKER_FILE] = _check_docker_file(docker, errors)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Validate the gpudoctor knowledge-base data files.")
    parser.add_argument("--data-dir", type=pathlib.Path, default=DEFAULT_DATA_DIR)
    args = parser.parse_args(argv)
    errors: list[str] = []
    counts = validate_with_counts(args.data_dir, errors)
    for filename, rows in counts.items():
        summary = ", ".join(f"{key} {value}" for key, value in rows.items())
        print(f"{filename}: {summary}")
    if errors:
        print(f"{len(errors)} error(s):")
        for error in errors:
            print(f"  - {error}")
        return 1
    print(
        "ok: every row sourced, versions parse, driver minimums monotonic, GPU names unique, "
        "framework tables consistent with the driver table, spec sheets and PCIe rates consistent, "
        "Xid rows and health limits well-formed"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
