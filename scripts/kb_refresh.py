#!/usr/bin/env python3
"""Regenerate the framework data files of the knowledge base from the shared reference
(maintainer script, not a test run).

    python scripts/kb_refresh.py                        # compare; writes nothing
    python scripts/kb_refresh.py --write                # write the files that changed
    python scripts/kb_refresh.py --reference PATH       # another compat.json
    python scripts/kb_refresh.py --online               # also ask download.pytorch.org and PyPI what is newer

It rebuilds ``gpudoctor/kb/data/pytorch.json``, ``tensorflow.json`` and ``cudnn.json`` from
tables 2, 3 and 4 of the reference JSON (default ``../shared/reference/compat.json`` beside
the checkout), and ``gpu_specs.json`` and ``pcie.json`` from its tables 6 and 7, keeping every
row's source keys and copying the referenced source descriptions into each file's ``sources``.
The GPU-spec rows also get the names nvidia-smi prints for them (``SPEC_NAMES``) and, where a
datasheet was checked separately, their dense TF32 rate (``TF32_DENSE``), each with its source.
``docker_cuda.json`` (the nvidia/cuda image tags) comes from table 5: one row per exact CUDA release,
its OS tokens and flavor tokens, "published" where NVIDIA's tag list or the Docker Hub scrape names it,
"secondary" otherwise; the OSes without cuDNN images (``DOCKER_NO_CUDNN_OS``) and tags seen pinned in
public files (``DOCKER_SEEN``) were checked separately and carry their own source.
What the reference does not hold but was
verified separately (which PyTorch variants have a Windows wheel, the Windows and aarch64
arch lists, source URLs) is applied from the tables in ``kbtools/refresh/``, each with its own
source key.  ``python_gpu_packages.json`` (JAX, CuPy) is not in the reference and is edited
by hand; this script leaves it alone.  Releases the reference does not confirm yet but PyPI does (torch 2.15)
come from the table in ``kbtools/refresh/pypi.py`` (source P_PYPI), with only what PyPI's metadata shows.

It prints a summary of what would change (releases, variants and fields added, removed or
changed) and writes only with ``--write``, naming each file it writes.  ``--online`` fetches
``https://download.pytorch.org/whl/<variant>/torch/`` for the newest release's variants and
reports torch versions newer than the data; without it (or without a network) it says so in
one line.  Conflicting or missing reference values stay ``null`` with a note: nothing here
guesses.

The tables live in ``scripts/kbtools/refresh/`` (one module per data file); the shared helpers for sources,
headers and JSON layout in ``scripts/kbtools/``.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

SCRIPTS = pathlib.Path(__file__).resolve().parent
REPO = SCRIPTS.parent
for _path in (REPO, SCRIPTS):  # gpudoctor from the checkout, kbtools beside this script
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

# The names below are this script's API: the tests (and a maintainer in a REPL) reach them from here.
from kbtools.common import DEFAULT_DATA_DIR  # noqa: E402
from kbtools.jsonio import read_json, render  # noqa: E402
from kbtools.refresh import GENERATED, build_all  # noqa: E402
from kbtools.refresh.cudnn import build_cudnn  # noqa: E402
from kbtools.refresh.diff import diff_summary  # noqa: E402
from kbtools.refresh.docker_cuda import DOCKER_NO_CUDNN_OS, DOCKER_SEEN, build_docker_cuda  # noqa: E402
from kbtools.refresh.gpu_specs import DEVICES_PER_BOARD, SPEC_NAMES, TF32_DENSE, build_gpu_specs  # noqa: E402
from kbtools.refresh.online import INDEX_ROOT, newer_than_data, online_report, versions_in_listing  # noqa: E402
from kbtools.refresh.pcie import build_pcie  # noqa: E402
from kbtools.refresh.pypi import pypi_report  # noqa: E402
from kbtools.refresh.pytorch import WINDOWS_WHEELS_SEEN, build_pytorch  # noqa: E402
from kbtools.refresh.tensorflow import build_tensorflow  # noqa: E402

__all__ = [
    "DEFAULT_DATA_DIR",
    "DEFAULT_REFERENCE",
    "DEVICES_PER_BOARD",
    "DOCKER_NO_CUDNN_OS",
    "DOCKER_SEEN",
    "GENERATED",
    "INDEX_ROOT",
    "SPEC_NAMES",
    "TF32_DENSE",
    "WINDOWS_WHEELS_SEEN",
    "build_all",
    "build_cudnn",
    "build_docker_cuda",
    "build_gpu_specs",
    "build_pcie",
    "build_pytorch",
    "build_tensorflow",
    "diff_summary",
    "main",
    "newer_than_data",
    "online_report",
    "pypi_report",
    "render",
    "versions_in_listing",
]

DEFAULT_REFERENCE = REPO.parent / "shared" / "reference" / "compat.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the framework data files of the gpudoctor knowledge base.")
    parser.add_argument("--reference", type=pathlib.Path, default=DEFAULT_REFERENCE, help="the reference compat.json")
    parser.add_argument("--data-dir", type=pathlib.Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--write", action="store_true", help="write the files that changed (default: only compare)")
    parser.add_argument("--online", action="store_true", help="compare with the download.pytorch.org index pages")
    parser.add_argument("--variant", action="append", default=[], help="another index to check online (cu134)")
    args = parser.parse_args(argv)

    reference = read_json(args.reference)
    if reference is None:
        print(f"cannot read the reference {args.reference}")
        return 2
    try:
        generated = build_all(reference)
    except (KeyError, TypeError, ValueError) as exc:
        print(f"the reference {args.reference} does not have the expected tables: {exc}")
        return 2
    changed = []
    for filename, data in generated.items():
        lines = diff_summary(filename, read_json(args.data_dir / filename), data)
        if lines:
            changed.append(filename)
            print("\n".join(lines))
        else:
            print(f"{filename}: up to date")
    if args.write:
        for filename in changed:
            (args.data_dir / filename).write_text(render(generated[filename]), encoding="utf-8")
            print(f"wrote {args.data_dir / filename}")
    elif changed:
        print("dry run: nothing written (use --write)")
    if args.online:
        for line in online_report(generated["pytorch.json"], args.variant):
            print(line)
        releases = [str(row.get("torch")) for row in generated["pytorch.json"].get("releases", [])]
        for line in pypi_report(releases):
            print(line)
    else:
        print("online check skipped (use --online to compare with download.pytorch.org and PyPI)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
