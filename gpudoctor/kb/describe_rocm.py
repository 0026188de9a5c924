"""``gpudoctor kb rocm``: AMD's gfx targets, the ROCm support tables, PyTorch's ROCm wheels and the rocm/dev images."""

from __future__ import annotations

from gpudoctor.kb import loading, rocm_images, rocm_targets, rocm_wheels
from gpudoctor.kb.describe_format import header, sources_block, table
from gpudoctor.kb.loading import as_dict, as_list


def rocm_table() -> list[str]:
    data = loading._load(rocm_targets.TARGETS_FILE)
    lines = header("AMD gfx targets: family, products, ROCm support, PyTorch wheels, override", data)
    releases = [str(as_dict(t).get("release")) for t in as_list(data.get("rocm_support")) if as_dict(t).get("release")]
    rows = []
    for gfx in rocm_targets.known_targets():
        support = [f"{r}: {rocm_targets.support_in_rocm(gfx, r) or '?'}" for r in releases]
        rows.append(
            [
                gfx,
                rocm_targets.target_family(gfx),
                ", ".join(rocm_targets.target_products(gfx)[:3]) or None,
                "; ".join(support) or None,
                {True: "yes", False: "no", None: "?"}[rocm_targets.in_torch_wheels(gfx)],
                rocm_targets.override_for(gfx),
            ]
        )
    lines += table(["target", "family", "products", "ROCm support", "in torch wheels", "override"], rows)
    lines += ["", "PyTorch's ROCm wheels (index https://download.pytorch.org/whl/<variant>)", ""]
    wheel_rows = [
        [r.torch + (" (candidate)" if r.candidate else ""), ", ".join(r.variants), ", ".join(r.sources)]
        for r in rocm_wheels.rocm_wheel_releases()
    ]
    lines += table(["torch", "ROCm variants", "sources"], wheel_rows)
    lines += ["", "rocm/dev images AMD builds (the Dockerfile generator's bases)", ""]
    lines += table(["image", "ROCm", "os"], [[i.reference, i.rocm, i.os] for i in rocm_images.rocm_images()])
    return lines + sources_block(data)
