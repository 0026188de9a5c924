#!/usr/bin/env python3
"""Rebuild ``gpudoctor/kb/data/pip_pins.json``: the CUDA libraries (``nvidia-*`` wheels) each framework build the
Dockerfile generators can choose declares in its wheel metadata (Requires-Dist), and the JupyterLab / ipykernel
releases the ``--jupyter`` images pin (maintainer script, not a test run; it needs pip and a reachable index).

    python scripts/refresh_pip_pins.py            # print what changed; writes nothing
    python scripts/refresh_pip_pins.py --write    # write the file

Nothing is typed in: for every build the knowledge base offers (torch releases and their CUDA variants, the
TensorFlow releases with ``[and-cuda]``, the JAX releases with each ``cudaNN`` extra) pip reads the wheel's own
metadata with ``pip install --dry-run --no-deps --report`` for Linux x86_64 (PEP 658 metadata: no wheel is
downloaded), and the requirements it declares under the asked extras are followed through the framework's own
packages (``jax`` -> ``jax-cuda12-plugin[with-cuda]``), keeping every ``nvidia-*`` requirement with its specifier.
A build whose index cannot be reached or has no such wheel is listed under ``unread`` with pip's last line, never
guessed (download.pytorch.org's CUDA variants, for instance, when only PyPI is reachable: PyPI's own torch wheel
is one variant, the knowledge base's ``default_pypi_linux_x86_64``).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys
import tempfile
from datetime import date
from typing import Any

REPO = pathlib.Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from packaging.markers import default_environment  # noqa: E402
from packaging.requirements import InvalidRequirement, Requirement  # noqa: E402
from packaging.utils import canonicalize_name  # noqa: E402

DATA = REPO / "gpudoctor" / "kb" / "data" / "pip_pins.json"
PYPI = "https://pypi.org/simple"
TORCH_INDEX = "https://download.pytorch.org/whl"
PYTHONS = ("3.12", "3.10", "3.13")  # the first for which the build has a wheel decides the markers
PLATFORMS = tuple(f"manylinux_2_{minor}_x86_64" for minor in range(39, 16, -1)) + ("manylinux2014_x86_64",)
NEWEST = {"torch": 6, "tensorflow": 8, "jax": 12}  # newest releases per framework; older ones: OLDER
OLDER = {"jax": ("0.8.3", "0.7.2", "0.7.0", "0.6.2", "0.5.3", "0.4.38", "0.4.30")}
JUPYTER_PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
TIMEOUT = 240


def pip_report(
    requirement: str, index: str | None, python: str, workdir: pathlib.Path, any_python: bool = True
) -> tuple[dict[str, Any], str]:
    """(pip's report item of ``requirement``, ""), or ({}, pip's last error line).  ``any_python``: read the
    metadata even where Requires-Python excludes ``python`` (markers are evaluated for it anyway)."""
    report = workdir / f"r{abs(hash((requirement, index, python)))}.json"
    command = [sys.executable, "-m", "pip", "install", "--isolated", "--dry-run", "--quiet", "--no-deps"]
    command += ["--ignore-installed", "--only-binary=:all:", "--target", str(workdir)]
    command += ["--ignore-requires-python"] if any_python else []
    command += ["--python-version", python, "--report", str(report), "--retries", "1", "--timeout", "60"]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    if index:
        command += ["--index-url", index]
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull}  # this machine's pip configuration plays no part
    done = subprocess.run(
        [*command, requirement], capture_output=True, text=True, timeout=TIMEOUT, check=False, env=env
    )
    if done.returncode != 0 or not report.is_file():
        lines = [line for line in done.stderr.splitlines() if line.startswith("ERROR")] or done.stderr.splitlines()
        return {}, (lines[-1] if lines else f"pip exited {done.returncode}")[:300]
    items = json.loads(report.read_text(encoding="utf-8")).get("install") or [{}]
    return items[0], ""


def walk(requirement: str, index: str | None, family: str, workdir: pathlib.Path) -> dict[str, Any]:
    """The nvidia-* requirements ``requirement`` declares, followed through packages named ``family*``."""
    last = ""
    for python in PYTHONS:
        first, last = pip_report(requirement, index, python, workdir)
        if first:
            break
    else:
        return {"error": last}
    env = {**default_environment(), "sys_platform": "linux", "platform_system": "Linux"}
    env.update({"platform_machine": "x86_64", "python_version": python, "python_full_version": python + ".0"})
    requires: dict[str, list[str]] = {}
    declared_by: dict[str, str] = {}
    wheels: list[str] = []
    queue = [(Requirement(requirement), first)]
    version = str(first.get("metadata", {}).get("version"))
    while queue:
        asked, item = queue.pop(0)
        meta = item.get("metadata", {})
        wheels.append(str(item.get("download_info", {}).get("url", "")))
        for text in meta.get("requires_dist") or []:
            try:
                needed = Requirement(text)
            except InvalidRequirement:
                continue
            extras = sorted(asked.extras) or [""]
            if needed.marker and not any(needed.marker.evaluate({**env, "extra": e}) for e in extras):
                continue
            name = canonicalize_name(needed.name)
            if name.startswith("nvidia-"):
                requires.setdefault(name, []).append(str(needed.specifier))
                declared_by[name] = f"{meta.get('name')} {meta.get('version')}"
            elif name.startswith(family) and name != family:
                follow, error = pip_report(str(Requirement(text.split(";")[0])), index, python, workdir)
                if not follow:
                    return {"error": f"{name}: {error}"}
                queue.append((needed, follow))
    pins = {name: ",".join(sorted(set(",".join(specs).split(",")) - {""})) for name, specs in requires.items()}
    majors = sorted({name.rsplit("-cu", 1)[1] for name in pins if "-cu" in name and name.rsplit("-cu", 1)[1].isdigit()})
    return {
        "version": version,
        "python": python,
        "cuda_major": int(majors[0]) if len(majors) == 1 else (13 if pins and not majors else None),
        "requires": dict(sorted(pins.items())),
        "declared_by": dict(sorted(declared_by.items())),
        "wheels": [url for url in wheels if url],
    }


def targets() -> list[dict[str, Any]]:
    """Every (framework, release, build) the generators can choose, newest first, from the knowledge base."""
    from gpudoctor import kb
    from gpudoctor.kb.jax_releases import jax_releases

    rows: list[dict[str, Any]] = []
    for release in kb.torch_releases()[: NEWEST["torch"]]:
        default = release.default_pypi_linux_x86_64
        for variant in release.variants:
            if not variant.cuda:
                continue
            index = f"{TORCH_INDEX}/{variant.variant}"
            rows.append(_target("torch", release.torch, variant.variant, f"torch=={release.torch}.*", index))
            if default == variant.variant:
                rows.append(_target("torch", release.torch, variant.variant, f"torch=={release.torch}.*", None))
    for tf in kb.tf_releases()[: NEWEST["tensorflow"]]:
        if tf.and_cuda:
            rows.append(_target("tensorflow", tf.version, "and-cuda", f"tensorflow[and-cuda]=={tf.version}", None))
    wanted = list(jax_releases()[: NEWEST["jax"]]) + [r for r in jax_releases() if r.version in OLDER["jax"]]
    for jax in wanted:
        for extra in jax.extras:
            rows.append(_target("jax", jax.version, extra, f"jax[{extra}]=={jax.version}", None))
    return rows


def _target(framework: str, release: str, build: str, requirement: str, index: str | None) -> dict[str, Any]:
    return {"framework": framework, "release": release, "build": build, "requirement": requirement, "index": index}


def jupyter_rows(workdir: pathlib.Path) -> list[dict[str, Any]]:
    """The newest JupyterLab and ipykernel whose Requires-Python admits each Python the images can have."""
    rows = []
    for python in JUPYTER_PYTHONS:
        for package in ("jupyterlab", "ipykernel"):
            item, error = pip_report(package, None, python, workdir, any_python=False)
            if not item:
                print(f"  no {package} for Python {python}: {error}")
                continue
            meta = item["metadata"]
            rows.append(
                {
                    "package": package,
                    "python": python,
                    "version": meta["version"],
                    "requires_python": meta.get("requires_python"),
                    "source": f"https://pypi.org/project/{package}/{meta['version']}/",
                    "wheel": item.get("download_info", {}).get("url"),
                }
            )
    return rows


def build_data() -> dict[str, Any]:
    wanted = targets()
    builds: list[dict[str, Any]] = []
    unread: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(8) as pool:
        workdir = pathlib.Path(tmp)
        family = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jax"}
        futures = [pool.submit(walk, t["requirement"], t["index"], family[t["framework"]], workdir) for t in wanted]
        for target, future in zip(wanted, futures):
            found = future.result()
            index = target["index"] or PYPI
            if "error" in found:
                unread.append({**target, "index": index, "why": found["error"], "source": index})
                continue
            page = "https://pypi.org/project/{}/{}/"
            declarer = sorted(set(found["declared_by"].values())) or [f"{target['framework']} {found['version']}"]
            sources = [page.format(*d.split(" ")) for d in declarer] if index == PYPI else list(found["wheels"])[:1]
            builds.append({**target, "index": index, **found, "source": sources[0], "sources": sources})
        jupyter = jupyter_rows(workdir)
    return {
        "as_of": date.today().isoformat(),
        "compiled_from": "pip install --dry-run --no-deps --report of each build for Linux x86_64 (PEP 658 wheel "
        "metadata): Requires-Dist under the asked extras, followed through the framework's own packages "
        "(scripts/refresh_pip_pins.py)",
        "sources": {
            "PYPI": "https://pypi.org/simple (each row's source: the PyPI page of the release that declares the pins)",
            "PYTORCH_INDEX": "https://download.pytorch.org/whl/<variant> (torch's CUDA variants)",
        },
        "builds": builds,
        "unread": unread,
        "jupyter": jupyter,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the data file")
    args = parser.parse_args()
    data = build_data()
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    old = DATA.read_text(encoding="utf-8") if DATA.is_file() else ""
    print(f"{len(data['builds'])} builds read, {len(data['unread'])} unread")
    for row in data["unread"]:
        print(f"  unread: {row['requirement']} from {row['index']}: {row['why']}")
    if args.write and text != old:
        DATA.write_text(text, encoding="utf-8")
        print(f"wrote {DATA}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
