"""Checking the knowledge-base data files before they ship, one module per data file; ``validate_with_counts``
runs them in the order the files depend on each other (the driver table first: the GPU names, TensorFlow, JAX and
the spec sheets are checked against it; the PCIe table before the spec sheets)."""

from __future__ import annotations

import pathlib

from kbtools.common import DEFAULT_DATA_DIR
from kbtools.jsonio import load_checked
from kbtools.validate.cudnn import CUDNN_FILE, check_cudnn_file
from kbtools.validate.docker_cuda import DOCKER_FILE, check_docker_file
from kbtools.validate.driver_cuda import DRIVER_FILE, check_driver_file
from kbtools.validate.gpu_names import GPU_FILE, check_gpu_file
from kbtools.validate.gpu_specs import SPECS_FILE, check_specs_file
from kbtools.validate.health_limits import HEALTH_FILE, check_health_file
from kbtools.validate.nvlink import NVLINK_FILE, check_nvlink_file
from kbtools.validate.pcie import PCIE_FILE, check_pcie_file
from kbtools.validate.python_packages import PACKAGES_FILE, check_packages_file
from kbtools.validate.pytorch import TORCH_FILE, check_torch_file
from kbtools.validate.tensorflow import TF_FILE, check_tf_file
from kbtools.validate.xid import XID_FILE, check_xid_file


def validate(data_dir: pathlib.Path | str | None = None) -> list[str]:
    """Every problem found in the data files under ``data_dir`` (default: the shipped ones)."""
    errors: list[str] = []
    validate_with_counts(data_dir, errors)
    return errors


def validate_with_counts(data_dir: pathlib.Path | str | None, errors: list[str]) -> dict[str, dict[str, int]]:
    base = pathlib.Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    counts: dict[str, dict[str, int]] = {}
    cc_map: dict[str, str] = {}
    driver = load_checked(base / DRIVER_FILE, errors)
    if driver is not None:
        counts[DRIVER_FILE], cc_map = check_driver_file(driver, errors)
    gpus = load_checked(base / GPU_FILE, errors)
    if gpus is not None:
        counts[GPU_FILE] = check_gpu_file(gpus, cc_map, errors)
    torch = load_checked(base / TORCH_FILE, errors)
    if torch is not None:
        counts[TORCH_FILE] = check_torch_file(torch, errors)
    tf = load_checked(base / TF_FILE, errors)
    if tf is not None:
        counts[TF_FILE] = check_tf_file(tf, driver, errors)
    cudnn = load_checked(base / CUDNN_FILE, errors)
    if cudnn is not None:
        counts[CUDNN_FILE] = check_cudnn_file(cudnn, errors)
    packages = load_checked(base / PACKAGES_FILE, errors)
    if packages is not None:
        counts[PACKAGES_FILE] = check_packages_file(packages, driver, errors)
    pcie_gens: set[int] = set()
    pcie = load_checked(base / PCIE_FILE, errors)
    if pcie is not None:
        counts[PCIE_FILE], pcie_gens = check_pcie_file(pcie, errors)
    specs = load_checked(base / SPECS_FILE, errors)
    if specs is not None:
        counts[SPECS_FILE] = check_specs_file(specs, cc_map, pcie_gens, errors)
    xids = load_checked(base / XID_FILE, errors)
    if xids is not None:
        counts[XID_FILE] = check_xid_file(xids, errors)
    health = load_checked(base / HEALTH_FILE, errors)
    if health is not None:
        counts[HEALTH_FILE] = check_health_file(health, errors)
    nvlink = load_checked(base / NVLINK_FILE, errors)
    if nvlink is not None:
        counts[NVLINK_FILE] = check_nvlink_file(nvlink, errors)
    docker = load_checked(base / DOCKER_FILE, errors)
    if docker is not None:
        counts[DOCKER_FILE] = check_docker_file(docker, errors)
    return counts
