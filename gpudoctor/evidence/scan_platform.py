"""Read where this machine runs into a JSON-able record (``platform.json``): its DMI identity, cloud-init's
instance data, and the marker files of notebook platforms and container images.

Offline: local files only.  The cloud's metadata service is asked elsewhere (``cloud_metadata``), and only with
``--cloud-metadata``.  DMI's serial numbers and UUIDs are never read: the identity strings name the hypervisor
and, on AWS Nitro, the instance type; nothing in them identifies one machine.
"""

from __future__ import annotations

import json
import os

from gpudoctor.evidence import markers_image, markers_notebook

# /sys/class/dmi/id files that name the platform (all world-readable; product_serial/product_uuid are not read).
DMI_FIELDS = (
    "sys_vendor",
    "product_name",
    "product_version",
    "product_family",
    "board_vendor",
    "board_name",
    "bios_vendor",
    "bios_version",
    "chassis_vendor",
    "chassis_asset_tag",
)
# cloud-init's world-readable instance data (its sensitive twin, instance-data-sensitive.json, is root-only).
CLOUD_INIT_INSTANCE_DATA = "/run/cloud-init/instance-data.json"
_TEXT_LIMIT = 16_000
_DIR_LIMIT = 200


def _join(root: str, path: str) -> str:
    return os.path.join(root, path.lstrip("/")) if root not in ("", "/") else path


def _read(path: str, limit: int = _TEXT_LIMIT) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(limit)
    except OSError:
        return None


def scan_dmi(root: str = "/") -> dict[str, str | None]:
    return {key: (_read(_join(root, f"/sys/class/dmi/id/{key}"), 512) or "").strip() or None for key in DMI_FIELDS}


def scan_cloud_init(root: str = "/") -> dict[str, object] | None:
    """The few keys of cloud-init's instance data that say which cloud, instance type and place; None: no file."""
    text = _read(_join(root, CLOUD_INIT_INSTANCE_DATA), 2_000_000)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return {"error": "not JSON"}
    v1 = data.get("v1") if isinstance(data, dict) else None
    if not isinstance(v1, dict):
        return {"error": "no v1 section"}
    keep = ("cloud_name", "cloud_id", "platform", "subplatform", "instance_type", "region", "availability_zone")
    found: dict[str, object] = {key: v1.get(key) for key in keep if isinstance(v1.get(key), str)}
    instance_type = _crawled_instance_type(data.get("ds"))
    if "instance_type" not in found and instance_type:
        found["instance_type"] = instance_type
    return found


def _crawled_instance_type(ds: object) -> str | None:
    """The instance type in what the datasource crawled (``ds.meta_data``): v1 has no standard key for it.

    EC2 keeps IMDS's ``instance-type`` (cloud-init's instance-data example shows it as ``instance_type``); Azure
    keeps the IMDS answer under ``imds`` (cloudinit/sources/DataSourceAzure.py), whose ``compute.vmSize`` is the
    VM size.
    """
    meta = ds.get("meta_data") if isinstance(ds, dict) else None
    if not isinstance(meta, dict):
        return None
    for key in ("instance-type", "instance_type"):
        if isinstance(meta.get(key), str):
            return str(meta[key])
    imds = meta.get("imds")
    compute = imds.get("compute") if isinstance(imds, dict) else None
    size = compute.get("vmSize") if isinstance(compute, dict) else None
    return size if isinstance(size, str) else None


def scan_platform(root: str = "/") -> dict[str, object]:
    exist = markers_notebook.FILES_EXIST + markers_image.FILES_EXIST
    read = markers_notebook.FILES_READ + markers_image.FILES_READ
    listed: dict[str, list[str]] = {}
    for folder in markers_image.DIRS_LIST:
        try:
            listed[folder] = sorted(os.listdir(_join(root, folder)))[:_DIR_LIMIT]
        except OSError:
            continue
    return {
        "dmi": scan_dmi(root),
        "cloud_init": scan_cloud_init(root),
        "exists": sorted(path for path in exist if os.path.exists(_join(root, path))),
        "files": {path: text for path in read if (text := _read(_join(root, path))) is not None},
        "dirs": listed,
    }
