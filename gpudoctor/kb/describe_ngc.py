"""``gpudoctor kb ngc [RELEASE]``: NVIDIA's NGC framework containers, each release's CUDA and the driver it needs."""

from __future__ import annotations

from gpudoctor.kb import loading, ngc_containers
from gpudoctor.kb.describe_format import header, sources_block, table
from gpudoctor.kb.errors import KnowledgeError
from gpudoctor.kb.loading import as_dict


def _driver(row: ngc_containers.NgcRelease) -> str:
    return f"{row.driver} (CUDA Table 3)" if row.driver_derived else row.driver


def ngc_table() -> list[str]:
    data = loading._load(ngc_containers.DATA_FILE)
    lines = header("NGC framework containers: CUDA and the driver each release was built for", data)
    rows = [
        [
            row.image,
            row.cuda,
            _driver(row),
            ", ".join(row.datacenter_drivers) or None,
            ", ".join(f"{name} {version}" for name, version in row.frameworks) or None,
        ]
        for row in ngc_containers.ngc_releases()
    ]
    lines += table(["image", "CUDA", "driver", "data-center (forward compat)", "frameworks"], rows)
    rule = ngc_containers.forward_compat_rule()
    if rule:
        lines += ["", f"Forward compatibility: {rule}"]
    lines += ["", "`gpudoctor kb ngc 24.06` shows one release; the check PLAT020 picks the newest that fits a driver."]
    return lines + sources_block(data)


def ngc_item(item: str) -> list[str]:
    """One release ("24.06", or "pytorch:24.06")."""
    product, _, release = item.rpartition(":")
    product = (product or "pytorch").strip().lower()
    row = ngc_containers.ngc_release(product, release.strip())
    if row is None:
        known = ", ".join(r.release for r in ngc_containers.ngc_releases() if r.product == product)
        raise KnowledgeError(f"no NGC {product} release {release.strip()[:20]!r} in the table (known: {known or '-'})")
    raw = next(
        (
            as_dict(r)
            for r in loading._load(ngc_containers.DATA_FILE).get("releases", [])
            if as_dict(r).get("product") == row.product and as_dict(r).get("release") == row.release
        ),
        {},
    )
    lines = [row.image, f"  CUDA:      {row.cuda}", f"  driver:    {_driver(row)} or newer"]
    if row.datacenter_drivers:
        lines.append(f"  data-center GPUs (forward compatibility): {', '.join(row.datacenter_drivers)}")
    for name, version in row.frameworks:
        lines.append(f"  {name}:{' ' * max(1, 10 - len(name))}{version}")
    if row.confidence == "sibling":
        lines.append("  read on:   the same release's notes of a component shipped in this container (see source)")
    if raw.get("quote"):
        lines.append(f"  notes say: {raw['quote']}")
    lines.append(f"  source:    {row.source}")
    return lines
