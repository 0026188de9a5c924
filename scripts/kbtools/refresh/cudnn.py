"""cudnn.json from table 4 of the reference: one row per cuDNN major with its CUDA range, minimum compute
capability (stepped by minor release where it changed), drivers, library names and package names."""

from __future__ import annotations

import re
from typing import Any

from kbtools.common import merge, split_keys
from kbtools.refresh.pypi import SOURCE_KEY, TORCH_ON_PYPI, newest_words
from kbtools.sources import collect_sources, flag_secondary, header


def _with_pypi_pins(pins: object) -> object:
    """The reference's torch -> cuDNN pins, plus the releases PyPI confirmed after it (their wheels' own pin)."""
    if not isinstance(pins, str):
        return pins
    extra = "; ".join(
        f"{release} ({row['variant']['variant']}, the PyPI build): {row['variant']['cudnn']} ({SOURCE_KEY})"
        for release, row in sorted(TORCH_ON_PYPI.items())
        if f"{release} (" not in pins
    )
    if not extra:
        return pins
    head, sep, tail = pins.partition(" Source:")
    return f"{head.rstrip('.')}; {extra}.{sep}{tail}" if sep else f"{pins}; {extra}"


def build_cudnn(reference: dict[str, Any]) -> dict[str, Any]:
    table = reference["table4_cudnn"]
    used: list[str] = []
    majors = []
    for raw in table.get("majors", []):
        label = str(raw.get("cudnn"))
        match = re.match(r"(\d+)", label)
        major = int(match.group(1)) if match else None
        keys = split_keys(raw.get("source"))
        used = merge(used, keys)
        libraries, library_notes = [], []
        for lib in raw.get("libs", []):
            name, _, rest = str(lib).partition(" ")
            libraries.append(name)
            if rest:
                library_notes.append(f"{name} {rest.strip()}")
        pip_text = str(raw.get("pip", ""))
        min_cc_text = str(raw.get("min_cc", ""))
        min_cc_match = re.fullmatch(r"(\d+\.\d)(?: \(.*\))?", min_cc_text.strip())
        row: dict[str, Any] = {
            "major": major,
            "label": label,
            "cuda": raw.get("cuda"),
            "min_compute_capability": min_cc_match.group(1) if min_cc_match else None,
            "min_compute_capability_note": min_cc_text or None,
            "min_compute_capability_from": [],
            "linux_driver": raw.get("linux_driver"),
            "windows_driver": raw.get("windows_driver"),
            "libraries": libraries,
            "library_notes": library_notes,
            "pip_packages": re.findall(r"nvidia-cudnn-cu\d+", pip_text),
            "apt_packages": re.findall(r"libcudnn\d+-cuda-\d+", pip_text),
            "docker_tag_token": raw.get("docker_tag_token"),
            "images_cudnn_version": raw.get("images_cudnn_version"),
            "note": None,
            "sources": keys,
        }
        # "5.0 through 9.10.2; 7.5 (Turing) from 9.11.0 ...": the minimum depends on the minor release.
        steps = re.findall(r"(\d+\.\d) \(\w+\) from (\d+\.\d+\.\d+)", min_cc_text)
        first = re.match(r"(\d+\.\d) through (\d+\.\d+\.\d+)", min_cc_text)
        if first and steps and major is not None:
            row["min_compute_capability_from"] = [[f"{major}.0.0", first.group(1)]] + [
                [version, cc] for cc, version in steps
            ]
        majors.append(row)
    majors.sort(key=lambda row: row["major"] or 0, reverse=True)
    sources = collect_sources(reference, merge(used, [SOURCE_KEY]))
    for row in majors:
        flag_secondary(row, sources)
    return {
        **header(
            reference,
            "table4_cudnn",
            f"{table.get('as_of')} {newest_words('nvidia-cudnn-cu13', 'nvidia-cudnn-cu12')}",
        ),
        "compat_rules": table.get("compat_rules"),
        "pytorch_pins": _with_pypi_pins(table.get("pytorch_pins")),
        "sources": sources,
        "majors": majors,
    }
