"""``gpudoctor dockerfile``: a Dockerfile whose CUDA base and framework build fit the machine.

``--preflight`` says where the image's gpudoctor comes from.  ``auto`` decides without the network, from this
gpudoctor's installed distribution: installed by an installer from a package index (an ``INSTALLER`` record, and
no PEP 610 ``direct_url.json``, which pip writes for every install from a local folder, an editable checkout, a
file or a VCS URL, and never for one from an index) and of the running version means the release is published,
so ``pypi``; anything else (a source tree or its ``egg-info``, an editable or local install) means it is not, so
``wheel`` when the Dockerfile goes to a file (the wheel is written next to it) and ``none`` on stdout (there is no
folder to write a wheel into).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import sys
import tempfile
import urllib.parse
import urllib.request

from gpudoctor.commands.common import guarded, refuse_existing
from gpudoctor.commands.generated import emit_generated, generator_target, generator_vendor
from gpudoctor.errors import UsageError


@guarded
def main(args: argparse.Namespace) -> int:
    from gpudoctor.generate.dockerfile import generate_dockerfile, wheel_name
    from gpudoctor.generate.model import DockerfileRequest

    to_file = bool(args.output and args.output != "-")
    preflight = preflight_mode(args.preflight, to_file)
    wheel_path = os.path.join(os.path.dirname(args.output) or ".", wheel_name()) if preflight == "wheel" else None
    if to_file:
        refuse_existing(args.output, args.force)  # before collecting, not after
    if wheel_path:
        refuse_existing(wheel_path, args.force)
    (framework, version), *more = args.framework
    request = DockerfileRequest(
        framework=framework,
        framework_version=version,
        more_frameworks=tuple(more),
        jupyter=args.jupyter,
        python=args.python,
        flavor=args.flavor,
        os=args.os,
        cpu=args.cpu,
        requirements=args.requirements,
        target=generator_target(args),
        preflight=preflight,
        vendor=generator_vendor(args),
        rocm=args.rocm,
    )
    generated = generate_dockerfile(request)
    if wheel_path:
        write_own_wheel(wheel_path, args.force)
        sys.stderr.write(f"gpudoctor: wrote {wheel_path} (the Dockerfile COPYs it: keep the two together)\n")
    elif args.preflight == "auto" and preflight == "none":
        sys.stderr.write(
            "gpudoctor: no preflight in this Dockerfile: this gpudoctor is not a published release; with -o FILE "
            "a wheel of it is written next to FILE and installed from there\n"
        )
    return emit_generated(generated, args)


def preflight_mode(asked: str, to_file: bool) -> str:
    if asked == "auto":
        return "pypi" if _published_on_an_index() else "wheel" if to_file else "none"
    if asked == "wheel" and not to_file:
        raise UsageError("--preflight wheel writes the wheel next to the Dockerfile: give -o FILE")
    return asked


# --------------------------------------------------------------------------- this gpudoctor as a wheel


def _distribution_files() -> tuple[str | None, dict[str, object] | None]:
    """(the installed gpudoctor's version, its PEP 610 direct_url.json); (None, None) when no installer installed
    it (not installed, or only a source tree's egg-info, which has no INSTALLER record)."""
    from importlib import metadata

    try:
        dist = metadata.distribution("gpudoctor")
    except metadata.PackageNotFoundError:
        return None, None
    if dist.read_text("INSTALLER") is None:
        return None, None
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "null")
    except ValueError:
        direct = {}  # unreadable: certainly not a plain index install
    return dist.version, direct if isinstance(direct, dict) or direct is None else {}


def _published_on_an_index() -> bool:
    from gpudoctor import __version__

    version, direct = _distribution_files()
    return version == __version__ and direct is None


def _source() -> tuple[str, pathlib.Path]:
    """("wheel", file) for an install from a local wheel, else ("tree", folder) of the source to build from."""
    _version, direct = _distribution_files()
    url = str(direct.get("url", "")) if direct else ""
    if url.startswith("file:"):
        path = pathlib.Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
        if path.is_file() and path.suffix == ".whl":
            return "wheel", path
        if (path / "pyproject.toml").is_file():
            return "tree", path
    here = pathlib.Path(__file__).resolve().parents[2]  # the running source tree, when it is one
    if (here / "pyproject.toml").is_file() and (here / "gpudoctor" / "__init__.py").is_file():
        return "tree", here
    raise UsageError("cannot find this gpudoctor's wheel or source to write a wheel from: use --preflight none")


# Left out of the copy the wheel is built from: version control, environments, caches, earlier builds, tests.
_NOT_SOURCE = (
    ".git",
    ".venv*",
    "venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    "tests",
    "node_modules",
)


def _build_wheel(tree: pathlib.Path, into: pathlib.Path) -> pathlib.Path:
    """``pip wheel --no-deps`` of a copy of ``tree`` (so the user's checkout gets no build/ or egg-info)."""
    import importlib.util

    copy = into / "src"
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(*_NOT_SOURCE), symlinks=True)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(into / "out")]
    if all(importlib.util.find_spec(name) is not None for name in ("setuptools", "wheel")):
        command.append("--no-build-isolation")  # the backend is here: no download needed
    # The one hardened runner: its own process group, killed on Ctrl-C or at the limit, output capped.
    from gpudoctor.evidence.run_command import run_command

    done = run_command("pip-wheel", [*command, str(copy)], timeout=600)
    if done.timed_out:
        raise UsageError("building gpudoctor's wheel took over 10 minutes: use --preflight none")
    wheels = sorted((into / "out").glob("gpudoctor-*.whl"))
    if done.error or done.exit_code != 0 or len(wheels) != 1:
        lines = (done.stderr + (done.text or "") + (done.error or "")).strip().splitlines()
        last = [line for line in lines if line.lower().startswith("error")][-1:] or lines[-1:] or ["no wheel"]
        raise UsageError(f"building gpudoctor's wheel failed ({last[0][:200]}): use --preflight none")
    return wheels[0]


def write_own_wheel(path: str, force: bool) -> None:
    """This gpudoctor as ``path``: the local wheel it was installed from, else one built from its source."""
    from gpudoctor.evidence.safe_write import write_file
    from gpudoctor.generate.dockerfile import wheel_name

    kind, source = _source()
    try:
        with tempfile.TemporaryDirectory(prefix="gpudoctor-wheel-") as scratch:
            wheel = source if kind == "wheel" else _build_wheel(source, pathlib.Path(scratch))
            if wheel.name != wheel_name():
                raise UsageError(f"the wheel is {wheel.name}, not the {wheel_name()} the Dockerfile names")
            content = wheel.read_bytes()
    except OSError as exc:  # a full disk, a file size limit, an unreadable source: one line, not a traceback
        raise UsageError(f"cannot make gpudoctor's wheel ({exc.strerror or exc}): use --preflight none") from None
    write_file(path, content, force=force)
