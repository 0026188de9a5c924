"""Every golden Dockerfile builds as written, as far as can be checked without a build: each ``pip install`` line
resolves on its package index, each local wheel it installs is the one it COPYs (and the one the command writes),
and each ``FROM`` tag is one the knowledge base lists as published.

The index check asks pip itself (``pip install --dry-run --no-deps --ignore-installed``) with the line's own
requirements and index options, for the image's Python and Linux (``--python-version``, ``--platform``), isolated
from this machine's pip configuration.  A line whose index cannot be reached skips, saying which.
"""

from __future__ import annotations

import pathlib
import re
import shlex
import subprocess
import sys

import pytest

from gpudoctor.generate.dockerfile import CPU_PYTHONS, OS_PYTHON, wheel_name
from gpudoctor.kb.docker_images import is_published

GOLDEN = sorted((pathlib.Path(__file__).resolve().parents[1] / "golden" / "dockerfiles").glob("*.Dockerfile"))
# glibc of each base (the manylinux tags its pip accepts): Debian 12 2.36; Ubuntu 20.04 2.31, 22.04 2.35, 24.04 2.39.
GLIBC = {"bookworm": 36, "ubuntu20.04": 31, "ubuntu22.04": 35, "ubuntu24.04": 39}
_UNREACHABLE = (
    "NewConnectionError",
    "Name or service not known",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Connection refused",
    "ConnectTimeoutError",
    "ProxyError",
)


def pip_lines(text: str) -> list[str]:
    """The arguments of every ``pip install`` in the file, continuation lines joined, shell operators cut."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found = []
    for line in joined.splitlines():
        if line.lstrip().startswith("#"):
            continue
        for part in re.split(r"&&|;", line):
            match = re.search(r"\bpip install (.+)", part)
            if match:
                found.append(match.group(1).strip())
    return found


def image_python_and_glibc(text: str) -> tuple[str, int]:
    tag = next(line.split()[1] for line in text.splitlines() if line.startswith("FROM "))
    if tag.startswith("python:"):
        return tag.split(":")[1].split("-")[0], GLIBC["bookworm"]
    os_token = tag.rsplit("-", 1)[1]
    venv = re.search(r"&& (python3(?:\.\d+)?) -m venv /opt/venv", text)
    binary = venv.group(1) if venv else "python3"
    return (binary[len("python") :] if binary != "python3" else OS_PYTHON[os_token]), GLIBC[os_token]


CASES = [(path, args) for path in GOLDEN for args in pip_lines(path.read_text(encoding="utf-8"))]


def test_every_golden_file_installs_something():
    for path in GOLDEN:
        assert pip_lines(path.read_text(encoding="utf-8")), path.name


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_no_line_installs_a_gpudoctor_no_index_has(path):
    # The bug this guards: "pip install gpudoctor==0.1.0" in every file, a release no index has.
    for args in pip_lines(path.read_text(encoding="utf-8")):
        assert not re.search(r"(^|\s)'?gpudoctor==", args), (path.name, args)


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_a_local_wheel_is_the_one_the_file_copies_and_the_command_writes(path):
    text = path.read_text(encoding="utf-8")
    for args in pip_lines(text):
        local = [word for word in shlex.split(args) if word.endswith(".whl")]
        for wheel in local:
            name = pathlib.PurePosixPath(wheel).name
            assert name == wheel_name(), wheel  # the file `gpudoctor dockerfile -o FILE` writes next to FILE
            assert re.search(rf"^COPY {re.escape(name)} {re.escape(wheel)}$", text, re.MULTILINE), wheel
            assert text.index(f"COPY {name} ") < text.index(f"pip install {args}")


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_every_base_tag_is_published(path):
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("FROM "):
            tag = line.split()[1]
            if tag.startswith("python:"):
                match = re.fullmatch(r"python:(\d+\.\d+)-slim-bookworm", tag)
                assert match and match.group(1) in CPU_PYTHONS, tag  # the Docker official image gpudoctor knows
            else:
                assert is_published(tag), tag  # kb/data/docker_cuda.json lists it as published by NVIDIA


def _dry_run(args: str, python: str, glibc: int, scratch: pathlib.Path) -> subprocess.CompletedProcess[str]:
    words = shlex.split(args)
    platforms = ["manylinux1_x86_64", "manylinux2010_x86_64", "manylinux2014_x86_64", "linux_x86_64"]
    platforms += [f"manylinux_2_{minor}_x86_64" for minor in range(5, glibc + 1)]
    command = [sys.executable, "-m", "pip", "install", "--isolated", "--dry-run", "--no-deps", "--ignore-installed"]
    command += ["--quiet", "--disable-pip-version-check", "--retries", "1", "--timeout", "30"]
    # pip 23 checks Requires-Python against the interpreter running it here, not --python-version; the wheel tags
    # (cp312, abi3) still hold a compiled wheel to the image's Python.
    command += ["--only-binary=:all:", "--target", str(scratch), "--python-version", python, "--ignore-requires-python"]
    for platform in platforms:
        command += ["--platform", platform]
    return subprocess.run([*command, *words], capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.slow
@pytest.mark.parametrize(
    "path,args",
    [c for c in CASES if ".whl" not in c[1]],
    ids=[f"{p.name}:{a[:40]}" for p, a in CASES if ".whl" not in a],
)
def test_every_pip_line_resolves_on_its_index(path, args, tmp_path):
    python, glibc = image_python_and_glibc(path.read_text(encoding="utf-8"))
    done = _dry_run(args, python, glibc, tmp_path)
    output = done.stdout + done.stderr
    if done.returncode != 0 and any(word in output for word in _UNREACHABLE):
        index = re.search(r"--(?:extra-)?index-url (\S+)", args)
        pytest.skip(f"the index {index.group(1) if index else 'https://pypi.org/simple'} cannot be reached from here")
    assert done.returncode == 0, f"{path.name}: pip install {args} (Python {python}):\n{output[-1500:]}"


def test_the_index_check_can_fail(tmp_path):
    # The check is only proof if it can fail: the bug's own line does not resolve on PyPI.
    done = _dry_run("gpudoctor==0.1.0", "3.12", 35, tmp_path)
    output = done.stdout + done.stderr
    if any(word in output for word in _UNREACHABLE):
        pytest.skip("https://pypi.org/simple cannot be reached from here")
    assert done.returncode != 0 and "gpudoctor" in output


TORCH_LINE = re.compile(r"'?torch==(\d+\.\d+)(?:\.\*)?'?\s.*--index-url https://download\.pytorch\.org/whl/(\w+)")


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_every_torch_line_names_a_wheel_its_index_was_read_to_list(path):
    # Offline complement of the pip check above, which skips where download.pytorch.org is out of reach: the
    # (release, variant) pair must be one the knowledge base read on that index, not only inferred.
    from gpudoctor.kb.torch_wheels import torch_release, torch_variant

    for args in pip_lines(path.read_text(encoding="utf-8")):
        match = TORCH_LINE.search(args)
        if "download.pytorch.org" in args:
            assert match, (path.name, args)
        if match:
            release, variant = match.groups()
            known = torch_release(release)
            assert known is not None and known.index_verified, (path.name, release)
            # The CPU build is on whl/cpu for every release; the CUDA ones are listed per release.
            assert variant == "cpu" or torch_variant(release, variant) is not None, (path.name, release, variant)
