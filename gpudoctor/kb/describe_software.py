"""``gpudoctor kb`` tables of the software stack: driver <-> CUDA, PyTorch, TensorFlow, cuDNN, JAX, CuPy and the
CUDA container images."""

from __future__ import annotations

from typing import Any

from gpudoctor.kb import loading
from gpudoctor.kb.describe_format import header, keys, sources_block, table
from gpudoctor.kb.loading import as_dict
from gpudoctor.kb.versions import version_key


def driver_table() -> list[str]:
    data = loading._driver_data()
    lines = header("NVIDIA driver <-> CUDA toolkit (release notes Table 3)", data)
    rows = []
    for row in data.get("toolkit_driver", []):
        if isinstance(row, dict):
            rows.append(
                [
                    row.get("cuda_full") or row.get("cuda"),
                    row.get("release"),
                    row.get("linux_min"),
                    row.get("windows_min"),
                    keys(row),
                ]
            )
    rows.sort(key=lambda r: version_key(str(r[0])), reverse=True)
    lines += table(["CUDA", "release", "Linux min", "Windows min", "sources"], rows)
    lines += ["", "Minor-version compatibility (the least driver for any toolkit of a major):"]
    lines += table(
        ["CUDA major", "Linux", "Windows", "sources"],
        [
            [f"{r.get('cuda_major')}.x", r.get("linux_min"), r.get("windows_min"), keys(r)]
            for r in data.get("minor_version_compat", [])
            if isinstance(r, dict)
        ],
    )
    lines += ["", "Architectures:"]
    lines += table(
        ["architecture", "compute capability", "first CUDA", "last CUDA", "last driver"],
        [
            [
                r.get("architecture"),
                ", ".join(r.get("compute_capabilities", [])),
                r.get("first_cuda"),
                r.get("last_cuda"),
                r.get("last_driver"),
            ]
            for r in data.get("architectures", [])
            if isinstance(r, dict)
        ],
    )
    return lines + sources_block(data)


def _arch(values: object) -> str | None:
    return ";".join(str(v) for v in values) if isinstance(values, list) else None


def _windows(variant: dict[str, Any]) -> str:
    flag = variant.get("windows")
    if flag is True:
        return _arch(variant.get("arch_list_windows")) or "yes (arch list ?)"
    return "no" if flag is False else "?"


def torch_table() -> list[str]:
    data = loading._torch_data()
    lines = header("PyTorch wheels (download.pytorch.org/whl/<variant>)", data)
    rows = []
    for release in data.get("releases", []):
        if not isinstance(release, dict):
            continue
        python = f"{release.get('python_min') or '?'}-{release.get('python_max') or '?'}"
        for variant in release.get("variants", []):
            if not isinstance(variant, dict):
                continue
            default = "*" if variant.get("variant") == release.get("default_pypi_linux_x86_64") else ""
            rows.append(
                [
                    release.get("torch"),
                    f"{variant.get('variant')}{default}",
                    variant.get("cuda_full") or variant.get("cuda"),
                    variant.get("cudnn"),
                    python,
                    _arch(variant.get("arch_list_linux_x86_64")) or "?",
                    _arch(variant.get("arch_list_linux_aarch64")),
                    _windows(variant),
                ]
            )
    lines += table(
        ["torch", "variant", "CUDA", "cuDNN", "Python", "arch (Linux x86_64)", "arch (aarch64)", "Windows"], rows
    )
    lines += [
        "",
        "* = what plain `pip install torch` gets on Linux x86_64.  '?' = not verified.  "
        "X.Y = SASS for sm_XY, +PTX = PTX too.",
    ]
    for release in data.get("unconfirmed_releases", []):
        if isinstance(release, dict):
            lines.append(f"torch {release.get('torch')}: {release.get('note')}")
    return lines + sources_block(data)


def tensorflow_table() -> list[str]:
    data = loading._tf_data()
    lines = header("TensorFlow GPU builds (Linux)", data)
    rows = [
        [
            r.get("version"),
            f"{r.get('python_min')}-{r.get('python_max')}",
            r.get("cuda"),
            r.get("cudnn"),
            "yes" if r.get("and_cuda") else "no",
            "yes" if r.get("windows_native_gpu") else "no",
            r.get("linux_driver_min"),
            r.get("linux_driver_mvc_floor"),
            keys(r),
        ]
        for r in data.get("releases", [])
        if isinstance(r, dict)
    ]
    lines += table(
        [
            "TF",
            "Python",
            "CUDA",
            "cuDNN",
            "[and-cuda]",
            "native Windows GPU",
            "driver (full)",
            "driver (floor)",
            "sources",
        ],
        rows,
    )
    notes = [n for n in data.get("notes", []) if isinstance(n, str)]
    if notes:
        lines += [""] + [f"- {note}" for note in notes]
    return lines + sources_block(data)


def cudnn_table() -> list[str]:
    data = loading._cudnn_data()
    lines = header("cuDNN major versions", data)
    for row in data.get("majors", []):
        if not isinstance(row, dict):
            continue
        lines += [
            f"cuDNN {row.get('label') or row.get('major')}",
            f"  CUDA:            {row.get('cuda')}",
            f"  min GPU:         {row.get('min_compute_capability_note') or row.get('min_compute_capability')}",
            f"  Linux driver:    {row.get('linux_driver')}",
            f"  Windows driver:  {row.get('windows_driver')}",
            f"  libraries:       {', '.join(row.get('libraries', []))}",
            f"  pip:             {', '.join(row.get('pip_packages', []))}",
            f"  sources:         {keys(row)}",
            "",
        ]
    if data.get("compat_rules"):
        lines.append(f"- {data['compat_rules']}")
    return lines + sources_block(data)


def jax_table() -> list[str]:
    data = loading._packages_data()
    lines = header('JAX CUDA wheels (pip install -U "jax[cudaNN]")', data)
    jax = as_dict(data.get("jax"))
    rows = [
        [
            f"jax[{r.get('extra')}]",
            r.get("built_with_cuda"),
            r.get("compatible_cuda"),
            r.get("cudnn"),
            r.get("linux_driver_min"),
            r.get("min_compute_capability"),
            ", ".join(r.get("plugin_packages", [])),
            keys(r),
        ]
        for r in jax.get("extras", [])
        if isinstance(r, dict)
    ]
    lines += table(
        ["install", "built with", "runs with", "cuDNN", "Linux driver", "min GPU", "packages", "sources"], rows
    )
    platforms = as_dict(jax.get("platforms"))
    if platforms:
        lines += ["", "NVIDIA GPU support: " + ", ".join(f"{k} {v}" for k, v in platforms.items())]
    releases = [r for r in jax.get("releases", []) if isinstance(r, dict)]
    if releases:
        lines += [
            "",
            f"JAX releases (what `gpudoctor dockerfile` / `install-script` pin; as of "
            f"{jax.get('releases_as_of') or '?'}):",
        ]
        lines += table(
            ["jax", "jaxlib", "Python", "CUDA extras with wheels", "sources"],
            [
                [
                    r.get("version"),
                    r.get("jaxlib"),
                    f"{r.get('python_min')}-{r.get('python_max')}",
                    ", ".join(f"[{x}]" for x in r.get("extras", []) if isinstance(x, str)),
                    keys(r),
                ]
                for r in releases
            ],
        )
    cited = (
        [r for r in jax.get("extras", []) if isinstance(r, dict)]
        + releases
        + [{"sources": jax.get("platform_sources")}]
    )
    return lines + sources_block(data, cited)


def cupy_table() -> list[str]:
    data = loading._packages_data()
    lines = header("CuPy binary packages", data)
    cupy = as_dict(data.get("cupy"))
    rows = [
        [r.get("package"), r.get("cuda"), r.get("cupy_versions"), ", ".join(r.get("extras", [])) or None, keys(r)]
        for r in cupy.get("packages", [])
        if isinstance(r, dict)
    ]
    lines += table(["package", "CUDA", "CuPy versions", "extras", "sources"], rows)
    notes = [
        f"- {r.get('package')}: {r.get('note')}"
        for r in cupy.get("packages", [])
        if isinstance(r, dict) and r.get("note")
    ]
    if notes:
        lines += [""] + notes
    return lines + sources_block(data, [r for r in cupy.get("packages", []) if isinstance(r, dict)])


def docker_table() -> list[str]:
    from gpudoctor.kb import docker_images

    data = loading._load(docker_images.DOCKER_FILE)
    lines = header("nvidia/cuda image tags (nvidia/cuda:<CUDA>-<flavor>-<os>; also on nvcr.io/nvidia/cuda)", data)
    rows_data = [r for r in data.get("rows", []) if isinstance(r, dict)]
    rows = []
    for r in rows_data:
        by_os = as_dict(r.get("flavors_by_os"))
        exceptions = "; ".join(f"{os}: {', '.join(fl)}" for os, fl in by_os.items() if isinstance(fl, list))
        mark = "published" if r.get("confidence") == "published" else "SECONDARY"
        rows.append(
            [
                r.get("cuda"),
                mark + (" (EOL)" if r.get("eol") else ""),
                ", ".join(r.get("flavors", [])),
                ", ".join(r.get("os", [])),
                exceptions or None,
                keys(r),
            ]
        )
    lines += table(["CUDA", "confidence", "flavors", "OS", "only these flavors on", "sources"], rows)
    lines += [
        "",
        "published = named by NVIDIA's supported-tags list or Docker Hub (gpudoctor only emits these); "
        "SECONDARY = seen only in public files, never emitted.",
    ]
    notes = [f"- {r.get('cuda')}: {r.get('note')}" for r in rows_data if r.get("note")]
    seen = [
        f"- {r.get('cuda')} also seen (secondary, [{keys(r['also_seen'])}]): "
        f"{', '.join(r['also_seen'].get('tags', []))}"
        for r in rows_data
        if isinstance(r.get("also_seen"), dict) and r["also_seen"].get("tags")
    ]
    if notes or seen:
        lines += ["", "Notes:"] + notes + seen
    if isinstance(data.get("eol_policy"), list):
        lines += ["", "End-of-life policy:"] + [f"- {p}" for p in data["eol_policy"] if isinstance(p, str)]
    if data.get("nvidia_require_cuda"):
        lines += ["", f"NVIDIA_REQUIRE_CUDA: {data['nvidia_require_cuda']}"]
    cited = rows_data + [r["also_seen"] for r in rows_data if isinstance(r.get("also_seen"), dict)]
    cited.append({"sources": data.get("policy_sources")})
    return lines + sources_block(data, cited)
