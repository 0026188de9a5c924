#!/usr/bin/env python3
"""Rebuild the JAX release table (``jax.releases`` in ``gpudoctor/kb/data/python_gpu_packages.json``) from the
package index itself (maintainer script, not a test run; it needs pip and a reachable index).

    python scripts/jax_releases_refresh.py            # compare; writes nothing
    python scripts/jax_releases_refresh.py --write    # write the file when the rows changed

Every row is what pip reads from the index, nothing typed in:
- ``pip install --dry-run --no-deps --report`` of ``jax==V`` gives the release's metadata: Requires-Python,
  the CUDA extras it declares (``cuda12``, ``cuda13``) and the jaxlib / ``jax-cudaNN-plugin`` versions each
  extra pins (jax 0.4.37 pins jaxlib 0.4.36, for example);
- ``pip index versions PACKAGE --python-version X.Y --platform manylinux… --only-binary=:all:`` lists, per
  Python, the versions of jaxlib and of each plugin that have a Linux x86_64 wheel.

A release's Python range is the Pythons for which jaxlib and every CUDA plugin it ships have a wheel (and that
Requires-Python allows); an extra counts only when its plugin has a wheel in the pinned range: jax 0.7.0
declares ``cuda13`` but the first jax-cuda13-plugin is 0.7.2, so ``pip install "jax[cuda13]==0.7.0"`` fails and
the row leaves ``cuda13`` out.  Releases from 0.4.30 on (the first with the CUDA plugins only) are kept; yanked
ones are never listed by the index.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile
from datetime import date
from typing import Any

SCRIPTS = pathlib.Path(__file__).resolve().parent
if str(SCRIPTS) not in sys.path:  # kbtools beside this script
    sys.path.insert(0, str(SCRIPTS))

from kbtools.common import DEFAULT_DATA_DIR  # noqa: E402
from kbtools.jsonio import dump  # noqa: E402  (re-exported: the tests check the layout through this script)

DATA = DEFAULT_DATA_DIR / "python_gpu_packages.json"
FIRST = (0, 4, 30)  # jaxlib 0.4.30 dropped the monolithic CUDA jaxlib: from here `jax[cudaNN]` is the install
PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15")
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_27_x86_64", "manylinux_2_28_x86_64")
EXTRAS = ("cuda12", "cuda13")
SOURCE_KEY = "JAX_PYPI"
TIMEOUT = 180


def version_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def pip(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args)}: {done.stderr.strip().splitlines()[-1:] or done.returncode}")
    return done.stdout


def index_versions(package: str, python: str | None = None) -> list[str]:
    """The versions pip would see of PACKAGE; with PYTHON, only those with a Linux x86_64 wheel for it."""
    args = ["index", "versions", package]
    if python:
        args += ["--python-version", python, "--only-binary=:all:"]
        for platform in PLATFORMS:
            args += ["--platform", platform]
    try:
        out = pip(*args)
    except RuntimeError:
        return []  # "No matching distribution": none for this Python
    match = re.search(r"Available versions: (.*)", out)
    return [v.strip() for v in match.group(1).split(",")] if match else []


def release_metadata(version: str, workdir: pathlib.Path) -> dict[str, Any]:
    report = workdir / f"jax-{version}.json"
    pip(
        "install",
        "--dry-run",
        "--quiet",
        "--no-deps",
        "--ignore-installed",
        "--ignore-requires-python",
        "--report",
        str(report),
        f"jax=={version}",
    )
    # pip's installation report (JSON): its shape is pip's, read as plain data.
    metadata: dict[str, Any] = json.loads(report.read_text())["install"][0]["metadata"]
    return metadata


def pinned(requirements: list[str], package: str, extra: str) -> str | None:
    """The lowest version REQUIREMENTS pin PACKAGE to under EXTRA (``==X`` or ``>=X,<=Y``)."""
    for text in requirements:
        name, _, marker = text.partition(";")
        if not re.search(rf"""extra\s*==\s*["']{re.escape(extra)}["']""", marker):
            continue
        if re.match(rf"\s*{re.escape(package)}\b", name) is None:
            continue
        versions: list[str] = re.findall(r"(?:==|>=)\s*([0-9][0-9.]*)", name)
        if versions:
            return min(versions, key=version_key)
    return None


def python_floor(requires: str | None) -> tuple[int, ...] | None:
    match = re.search(r">=\s*(\d+\.\d+)", requires or "")
    return version_key(match.group(1)) if match else None


def build_rows() -> list[dict[str, Any]]:
    wheels = {
        package: {py: set(index_versions(package, py)) for py in PYTHONS}
        for package in ("jaxlib", *(f"jax-{extra}-plugin" for extra in EXTRAS))
    }
    # jax itself is pure Python: ask as the newest Python so Requires-Python hides nothing.
    versions = [v for v in index_versions("jax", PYTHONS[-2]) if version_key(v) >= FIRST]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for version in sorted(versions, key=version_key, reverse=True):
            meta = release_metadata(version, pathlib.Path(tmp))
            requires = meta.get("requires_dist") or []
            floor = python_floor(meta.get("requires_python"))
            declared = [e for e in EXTRAS if e in (meta.get("provides_extra") or [])]
            jaxlib = pinned(requires, "jaxlib", declared[0]) if declared else None
            extras: list[str] = []
            plugins: dict[str, str] = {}
            for extra in declared:
                plugin = pinned(requires, f"jax-{extra}-plugin", extra)
                if plugin and any(plugin in found for found in wheels[f"jax-{extra}-plugin"].values()):
                    extras.append(extra)
                    plugins[extra] = plugin
            pythons = [
                py
                for py in PYTHONS
                if (floor is None or version_key(py) >= floor)
                and jaxlib in wheels["jaxlib"][py]
                and all(plugins[e] in wheels[f"jax-{e}-plugin"][py] for e in extras)
            ]
            if not extras or not pythons:
                print(f"  jax {version}: no CUDA build with wheels (extras {declared}, Pythons {pythons}): left out")
                continue
            rows.append(
                {
                    "version": version,
                    "jaxlib": jaxlib,
                    "python_min": pythons[0],
                    "python_max": pythons[-1],
                    "extras": extras,
                    "sources": [SOURCE_KEY],
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the file when the rows changed")
    args = parser.parse_args(argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    try:
        rows = build_rows()
    except (RuntimeError, OSError, subprocess.TimeoutExpired, ValueError, KeyError) as exc:
        print(f"jax_releases_refresh: could not read the package index: {exc}", file=sys.stderr)
        return 2
    if not rows:  # an unreachable index lists nothing: never let that empty the table
        print(
            "jax_releases_refresh: the index listed no JAX release with CUDA wheels; the table is left as it is",
            file=sys.stderr,
        )
        return 2
    old = {row["version"]: row for row in data["jax"].get("releases", [])}
    new = {row["version"]: row for row in rows}
    for version in sorted(set(old) | set(new), key=version_key, reverse=True):
        if version not in old:
            print(f"+ jax {version}: {new[version]}")
        elif version not in new:
            print(f"- jax {version}")
        elif old[version] != new[version]:
            print(f"~ jax {version}: {old[version]} -> {new[version]}")
    if old == new:
        print(f"jax.releases: {len(rows)} releases, unchanged")
        return 0
    if not args.write:
        print("differences above; --write writes them")
        return 0
    data["jax"]["releases"] = rows
    data["jax"]["releases_as_of"] = date.today().isoformat()
    DATA.write_text(dump(data), encoding="utf-8")
    print(f"wrote {DATA} ({len(rows)} JAX releases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
