"""Plain-text views of the knowledge base for ``gpudoctor kb [topic]``.

``render_kb_text()`` gives the overview (each data file: what it holds, as of when, row
counts, sources); ``render_kb_text(topic="torch")`` and the other topics print one table
each.  ``render_kb_text(topic="xid", item="79")`` (or ``topic="xid:79"``) prints one Xid code.
No colour, no rich: the output is meant to be pasted into an issue.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gpudoctor.errors import UsageError
from gpudoctor.kb import loading

TOPICS = ("driver", "torch", "tensorflow", "cudnn", "gpus", "jax", "cupy", "specs", "pcie", "xid", "health", "docker")
_ALIASES = {
    "pytorch": "torch",
    "tf": "tensorflow",
    "cuda": "driver",
    "gpu": "gpus",
    "drivers": "driver",
    "spec": "specs",
    "gpu-specs": "specs",
    "gpu_specs": "specs",
    "nvlink": "specs",
    "xids": "xid",
    "health_limits": "health",
    "health-limits": "health",
    "limits": "health",
    "images": "docker",
    "docker_cuda": "docker",
    "nvidia-cuda": "docker",
    "containers": "docker",
}
# Topics that take one item after them (``gpudoctor kb xid 79``).
_ITEM_TOPICS = ("xid",)


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """Columns padded to their widest cell; ``None`` shows as "-"."""
    cells = [[("-" if value is None else str(value)) for value in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], len(value))

    def line(values: Sequence[str]) -> str:
        return "  ".join(value.ljust(widths[i]) for i, value in enumerate(values)).rstrip()

    return [line(list(headers)), line(["-" * w for w in widths])] + [line(row) for row in cells]


def _keys(row: dict[str, Any], key: str = "sources") -> str:
    keys = row.get(key)
    return ",".join(str(k) for k in keys) if isinstance(keys, list) and keys else "-"


def _sources_block(data: dict[str, Any], only: Sequence[dict[str, Any]] | None = None) -> list[str]:
    """The file's sources, or only those the given rows cite."""
    sources = data.get("sources")
    if not isinstance(sources, dict) or not sources:
        return []
    wanted = None
    if only is not None:
        wanted = {key for row in only for key in (row.get("sources") or []) if isinstance(key, str)}
    lines = ["", "Sources:"]
    for key, source in sources.items():
        if not isinstance(source, dict) or (wanted is not None and key not in wanted):
            continue
        url = f" <{source['url']}>" if source.get("url") else ""
        flag = " (secondary)" if source.get("secondary") else ""
        lines.append(f"  [{key}]{flag} {source.get('title')}{url}")
    return lines


def _header(title: str, data: dict[str, Any]) -> list[str]:
    lines = [title, f"as of {data.get('as_of') or '?'}"]
    if data.get("coverage"):
        lines.append(f"coverage: {data['coverage']}")
    return lines + [""]


# --------------------------------------------------------------------------- overview


def _overview(info: dict[str, Any]) -> list[str]:
    lines = ["gpudoctor knowledge base", ""]
    for stem, entry in info.items():
        if not isinstance(entry, dict):
            continue
        rows = entry.get("rows") if isinstance(entry.get("rows"), dict) else {}
        counts = ", ".join(f"{name} {count}" for name, count in rows.items()) or "no rows"
        lines.append(f"{entry.get('file') or stem + '.json'}")
        if entry.get("holds"):
            lines.append(f"  holds:    {entry['holds']}")
        lines.append(f"  as of:    {entry.get('as_of') or '?'}")
        lines.append(f"  rows:     {counts}")
        lines.append(f"  sources:  {entry.get('sources', 0)}")
        if entry.get("coverage"):
            lines.append(f"  coverage: {entry['coverage']}")
        lines.append("")
    lines.append(f"Topics: gpudoctor kb {{{'|'.join(TOPICS)}}}")
    return lines


# --------------------------------------------------------------------------- topics


def _driver() -> list[str]:
    data = loading._driver_data()
    lines = _header("NVIDIA driver <-> CUDA toolkit (release notes Table 3)", data)
    rows = []
    for row in data.get("toolkit_driver", []):
        if isinstance(row, dict):
            rows.append(
                [
                    row.get("cuda_full") or row.get("cuda"),
                    row.get("release"),
                    row.get("linux_min"),
                    row.get("windows_min"),
                    _keys(row),
                ]
            )
    rows.sort(key=lambda r: tuple(int(x) for x in str(r[0]).split(".") if x.isdigit()), reverse=True)
    lines += _table(["CUDA", "release", "Linux min", "Windows min", "sources"], rows)
    lines += ["", "Minor-version compatibility (the least driver for any toolkit of a major):"]
    lines += _table(
        ["CUDA major", "Linux", "Windows", "sources"],
        [
            [f"{r.get('cuda_major')}.x", r.get("linux_min"), r.get("windows_min"), _keys(r)]
            for r in data.get("minor_version_compat", [])
            if isinstance(r, dict)
        ],
    )
    lines += ["", "Architectures:"]
    lines += _table(
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
    return lines + _sources_block(data)


def _arch(values: object) -> str | None:
    return ";".join(str(v) for v in values) if isinstance(values, list) else None


def _windows(variant: dict[str, Any]) -> str:
    flag = variant.get("windows")
    if flag is True:
        return _arch(variant.get("arch_list_windows")) or "yes (arch list ?)"
    return "no" if flag is False else "?"


def _torch() -> list[str]:
    data = loading._torch_data()
    lines = _header("PyTorch wheels (download.pytorch.org/whl/<variant>)", data)
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
    lines += _table(
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
    return lines + _sources_block(data)


def _tensorflow() -> list[str]:
    data = loading._tf_data()
    lines = _header("TensorFlow GPU builds (Linux)", data)
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
            _keys(r),
        ]
        for r in data.get("releases", [])
        if isinstance(r, dict)
    ]
    lines += _table(
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
    return lines + _sources_block(data)


def _cudnn() -> list[str]:
    data = loading._cudnn_data()
    lines = _header("cuDNN major versions", data)
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
            f"  sources:         {_keys(row)}",
            "",
        ]
    if data.get("compat_rules"):
        lines.append(f"- {data['compat_rules']}")
    return lines + _sources_block(data)


def _gpus() -> list[str]:
    data = loading._gpu_data()
    lines = _header("GPU names -> compute capability", data)
    rows = [
        [r.get("match"), r.get("compute_capability"), r.get("architecture"), _keys(r)]
        for r in data.get("gpus", [])
        if isinstance(r, dict)
    ]
    rows.sort(key=lambda r: (tuple(int(x) for x in str(r[1]).split(".") if x.isdigit()), str(r[0])), reverse=True)
    lines += _table(["GPU", "cc", "architecture", "sources"], rows)
    return lines + _sources_block(data)


def _jax() -> list[str]:
    data = loading._packages_data()
    lines = _header('JAX CUDA wheels (pip install -U "jax[cudaNN]")', data)
    jax = data.get("jax") if isinstance(data.get("jax"), dict) else {}
    rows = [
        [
            f"jax[{r.get('extra')}]",
            r.get("built_with_cuda"),
            r.get("compatible_cuda"),
            r.get("cudnn"),
            r.get("linux_driver_min"),
            r.get("min_compute_capability"),
            ", ".join(r.get("plugin_packages", [])),
            _keys(r),
        ]
        for r in jax.get("extras", [])
        if isinstance(r, dict)
    ]
    lines += _table(
        ["install", "built with", "runs with", "cuDNN", "Linux driver", "min GPU", "packages", "sources"], rows
    )
    platforms = jax.get("platforms") if isinstance(jax.get("platforms"), dict) else {}
    if platforms:
        lines += ["", "NVIDIA GPU support: " + ", ".join(f"{k} {v}" for k, v in platforms.items())]
    releases = [r for r in jax.get("releases", []) if isinstance(r, dict)]
    if releases:
        lines += [
            "",
            f"JAX releases (what `gpudoctor dockerfile` / `install-script` pin; as of "
            f"{jax.get('releases_as_of') or '?'}):",
        ]
        lines += _table(
            ["jax", "jaxlib", "Python", "CUDA extras with wheels", "sources"],
            [
                [
                    r.get("version"),
                    r.get("jaxlib"),
                    f"{r.get('python_min')}-{r.get('python_max')}",
                    ", ".join(f"[{x}]" for x in r.get("extras", []) if isinstance(x, str)),
                    _keys(r),
                ]
                for r in releases
            ],
        )
    cited = (
        [r for r in jax.get("extras", []) if isinstance(r, dict)]
        + releases
        + [{"sources": jax.get("platform_sources")}]
    )
    return lines + _sources_block(data, cited)


def _cupy() -> list[str]:
    data = loading._packages_data()
    lines = _header("CuPy binary packages", data)
    cupy = data.get("cupy") if isinstance(data.get("cupy"), dict) else {}
    rows = [
        [r.get("package"), r.get("cuda"), r.get("cupy_versions"), ", ".join(r.get("extras", [])) or None, _keys(r)]
        for r in cupy.get("packages", [])
        if isinstance(r, dict)
    ]
    lines += _table(["package", "CUDA", "CuPy versions", "extras", "sources"], rows)
    notes = [
        f"- {r.get('package')}: {r.get('note')}"
        for r in cupy.get("packages", [])
        if isinstance(r, dict) and r.get("note")
    ]
    if notes:
        lines += [""] + notes
    return lines + _sources_block(data, [r for r in cupy.get("packages", []) if isinstance(r, dict)])


def _specs() -> list[str]:
    data = loading._spec_data()
    lines = _header("GPU spec sheets (dense TFLOP/s, GB/s = 10^9 bytes per second)", data)
    rows = []
    for r in data.get("gpus", []):
        if not isinstance(r, dict):
            continue
        memory = "/".join(f"{v:g}" for v in r.get("memory_gb", []) if isinstance(v, (int, float)))
        pcie = f"Gen{r['pcie_gen']} x{r['pcie_width']}" if r.get("pcie_gen") and r.get("pcie_width") else None
        board = (
            f" (board of {r['devices_per_board']})"
            if (r.get("devices_per_board") or 1) > 1 and "board" not in str(r.get("gpu"))
            else ""
        )
        rows.append(
            [
                f"{r.get('gpu')}{board}",
                r.get("compute_capability"),
                memory or None,
                r.get("memory_bandwidth_gbs"),
                r.get("fp32_tflops"),
                r.get("tf32_tensor_dense_tflops"),
                r.get("fp16_tensor_dense_tflops"),
                r.get("bf16_tensor_dense_tflops"),
                pcie,
                r.get("nvlink_gbs_bidirectional"),
                _keys(r),
            ]
        )
    lines += _table(
        ["GPU", "cc", "memory GB", "mem GB/s", "FP32", "TF32", "FP16", "BF16", "PCIe", "NVLink (bidir)", "sources"],
        rows,
    )
    matched = [
        f"  {r.get('gpu')}: {', '.join(r.get('names', []))}"
        for r in data.get("gpus", [])
        if isinstance(r, dict) and r.get("names")
    ]
    lines += ["", "Names matched (nvidia-smi spellings; a trailing memory size such as -32GB is allowed):"] + matched
    notes = [
        f"- {r.get('gpu')}: {r.get('note')}" for r in data.get("gpus", []) if isinstance(r, dict) and r.get("note")
    ]
    notes += [
        f"- {r.get('gpu')} TF32: {r.get('tf32_note')} [{_keys(r, 'tf32_sources')}]"
        for r in data.get("gpus", [])
        if isinstance(r, dict) and r.get("tf32_note")
    ]
    if notes:
        lines += ["", "Notes:"] + notes
    generations = [g for g in data.get("nvlink_generations", []) if isinstance(g, dict)]
    if generations:
        lines += [
            "",
            "NVLink generations (per GPU, both directions): "
            + "; ".join(
                f"{g.get('gen')} ({g.get('gpus')}) {g.get('duplex_gbs'):g} GB/s"
                for g in generations
                if isinstance(g.get("duplex_gbs"), (int, float))
            ),
        ]
    cited = [r for r in data.get("gpus", []) if isinstance(r, dict)]
    cited += [{"sources": r.get("tf32_sources")} for r in cited] + [{"sources": g.get("sources")} for g in generations]
    return lines + _sources_block(data, cited)


def _pcie() -> list[str]:
    data = loading._pcie_data()
    lines = _header("PCIe bandwidth by generation (GB = 10^9 bytes, per direction unless duplex)", data)
    rows = [
        [
            r.get("gen"),
            r.get("gt_s"),
            r.get("encoding"),
            r.get("gb_s_per_lane_per_dir"),
            r.get("x16_gb_s_per_dir"),
            r.get("x16_gb_s_duplex"),
            _keys(r),
        ]
        for r in data.get("rows", [])
        if isinstance(r, dict)
    ]
    lines += _table(["gen", "GT/s", "encoding", "GB/s per lane", "x16 GB/s", "x16 duplex", "sources"], rows)
    notes = [
        f"- Gen{r.get('gen')}: {r.get('note')}" for r in data.get("rows", []) if isinstance(r, dict) and r.get("note")
    ]
    if data.get("measured_note"):
        notes.append(f"- {data['measured_note']}")
    if notes:
        lines += [""] + notes
    return lines + _sources_block(data)


def _xid_data() -> dict[str, Any]:
    from gpudoctor.kb import xid

    return loading._load(xid.XID_FILE)


def _xid() -> list[str]:
    data = _xid_data()
    lines = _header("NVIDIA Xid codes by meaning (one code: gpudoctor kb xid:CODE)", data)
    rows = [
        [r.get("code"), r.get("severity"), r.get("category"), r.get("meaning"), r.get("nvidia_immediate"), _keys(r)]
        for r in data.get("xids", [])
        if isinstance(r, dict)
    ]
    lines += _table(["Xid", "severity", "category", "meaning", "NVIDIA action", "sources"], rows)
    severities = data.get("severities") if isinstance(data.get("severities"), dict) else {}
    if severities:
        lines += ["", "Severity: " + "; ".join(f"{k} = {v}" for k, v in severities.items())]
    if data.get("note"):
        lines.append(f"- {data['note']}")
    return lines + _sources_block(data, [r for r in data.get("xids", []) if isinstance(r, dict)])


def _xid_item(item: str) -> list[str]:
    from gpudoctor.kb import xid

    info = xid.xid_info(item)
    if info is None:
        if xid._as_code(item) is None:
            raise UsageError(f"not an Xid code: {str(item)[:40]!r} (e.g. gpudoctor kb xid 79)")
        return [xid.describe_xid(item)]
    severities = _xid_data().get("severities")
    meaning = severities.get(info.severity) if isinstance(severities, dict) else None
    lines = [f"Xid {info.code}: {info.meaning}"]
    if info.mnemonic:
        lines.append(f"  mnemonic:  {info.mnemonic}")
    lines.append(f"  severity:  {info.severity}" + (f" ({meaning})" if meaning else ""))
    lines.append(f"  category:  {info.category}")
    if info.applies:
        lines.append(f"  applies:   {info.applies}")
    lines.append(f"  action:    {info.action}")
    if info.commands:
        lines.append("  commands (<index> = the GPU's index):")
        for line, why in zip(info.commands, info.command_reasons):
            lines.append(f"    {line}" + (f"    # {why}" if why else ""))
    lines.append(
        f"  NVIDIA:    immediate {info.nvidia_immediate or '-'}, investigatory {info.nvidia_investigatory or '-'}"
    )
    if info.note:
        lines.append(f"  note:      {info.note}")
    return lines + _sources_block(_xid_data(), [{"sources": list(info.sources)}])


def _health() -> list[str]:
    from gpudoctor.kb import health_limits

    data = loading._load(health_limits.HEALTH_FILE)
    lines = _header("GPU health limits (what the HEALTH checks judge against)", data)
    limits = [r for r in data.get("limits", []) if isinstance(r, dict)]
    rows = [
        [
            r.get("name"),
            r.get("value"),
            r.get("unit"),
            r.get("rule"),
            _keys(r) + (" (gpudoctor default)" if r.get("gpudoctor_default") else ""),
        ]
        for r in limits
    ]
    lines += _table(["limit", "value", "unit", "rule", "sources"], rows)
    notes = [f"- {r.get('name')}: {r.get('note')}" for r in limits if r.get("note")]
    notes += [f"- {r.get('name')} applies to {r.get('applies')}" for r in limits if r.get("applies")]
    if notes:
        lines += ["", "Notes:"] + notes
    persistence = data.get("persistence") if isinstance(data.get("persistence"), dict) else {}
    cited = list(limits)
    if persistence:

        def names(key: str) -> str:
            values = persistence.get(key)
            return ", ".join(str(v) for v in values) if isinstance(values, list) and values else "-"

        lines += [
            "",
            f"Persistence mode [{_keys(persistence)}]: {persistence.get('rule')}",
            f"  data-center brands: {names('datacenter_brands')}",
            f"  other brands:       {names('other_brands')}",
            f"  brand unknown, data center by name: {names('datacenter_name_prefixes')}; {names('datacenter_models')}",
        ]
        if persistence.get("note"):
            lines.append(f"  note: {persistence['note']}")
        cited.append(persistence)
    return lines + _sources_block(data, cited)


def _docker() -> list[str]:
    from gpudoctor.kb import docker_images

    data = loading._load(docker_images.DOCKER_FILE)
    lines = _header("nvidia/cuda image tags (nvidia/cuda:<CUDA>-<flavor>-<os>; also on nvcr.io/nvidia/cuda)", data)
    rows_data = [r for r in data.get("rows", []) if isinstance(r, dict)]
    rows = []
    for r in rows_data:
        by_os = r.get("flavors_by_os") if isinstance(r.get("flavors_by_os"), dict) else {}
        exceptions = "; ".join(f"{os}: {', '.join(fl)}" for os, fl in by_os.items() if isinstance(fl, list))
        mark = "published" if r.get("confidence") == "published" else "SECONDARY"
        rows.append(
            [
                r.get("cuda"),
                mark + (" (EOL)" if r.get("eol") else ""),
                ", ".join(r.get("flavors", [])),
                ", ".join(r.get("os", [])),
                exceptions or None,
                _keys(r),
            ]
        )
    lines += _table(["CUDA", "confidence", "flavors", "OS", "only these flavors on", "sources"], rows)
    lines += [
        "",
        "published = named by NVIDIA's supported-tags list or Docker Hub (gpudoctor only emits these); "
        "SECONDARY = seen only in public files, never emitted.",
    ]
    notes = [f"- {r.get('cuda')}: {r.get('note')}" for r in rows_data if r.get("note")]
    seen = [
        f"- {r.get('cuda')} also seen (secondary, [{_keys(r['also_seen'])}]): "
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
    return lines + _sources_block(data, cited)


_RENDERERS: dict[str, Callable[[], list[str]]] = {
    "driver": _driver,
    "torch": _torch,
    "tensorflow": _tensorflow,
    "cudnn": _cudnn,
    "gpus": _gpus,
    "jax": _jax,
    "cupy": _cupy,
    "specs": _specs,
    "pcie": _pcie,
    "xid": _xid,
    "health": _health,
    "docker": _docker,
}


def render_kb_text(info: dict[str, Any] | None = None, topic: str | None = None, item: str | None = None) -> str:
    """The overview of the knowledge base (``info`` defaults to ``kb_info()``), or one topic's table.

    ``item`` picks one entry of a topic that has entries (``topic="xid", item="79"``); ``"xid:79"``
    as the topic says the same.  Raises ``UsageError`` for a topic that is not one of ``TOPICS``,
    or an item the topic does not take.
    """
    if topic is not None:
        name = str(topic).strip().lower()
        if item is None and ":" in name:
            name, item = (part.strip() for part in name.split(":", 1))
        name = _ALIASES.get(name, name)
        renderer = _RENDERERS.get(name)
        if renderer is None:
            raise UsageError(f"unknown knowledge-base topic {str(topic)[:40]!r}; topics: {', '.join(TOPICS)}")
        if item is not None and str(item).strip():
            if name not in _ITEM_TOPICS:
                raise UsageError(f"knowledge-base topic {name!r} takes no argument (only: {', '.join(_ITEM_TOPICS)})")
            return "\n".join(_xid_item(str(item).strip())).rstrip() + "\n"
        return "\n".join(renderer()).rstrip() + "\n"
    return "\n".join(_overview(info if isinstance(info, dict) else loading.kb_info())).rstrip() + "\n"
