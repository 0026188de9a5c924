"""``gpudoctor dockerfile --preflight``: where the image's gpudoctor comes from, run as a user runs it.

This checkout is installed editable (PEP 610 ``direct_url.json`` says so), so ``auto`` must not name a PyPI release;
with ``-o FILE`` it writes a wheel of this gpudoctor next to FILE, which the Dockerfile COPYs and installs.  The
"published" side of the rule is shown with a synthetic distribution record put ahead on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import zipfile

from gpudoctor import __version__
from gpudoctor.generate.dockerfile import wheel_name
from gpudoctor.generate.dockerfile_preflight import GPUDOCTOR_MIN_PYTHON
from tests.e2e.test_cli import gpudoctor

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_this_editable_install_is_not_taken_for_a_published_release():
    site = REPO / ".venv" / "lib"
    records = list(site.glob("python3*/site-packages/gpudoctor-*.dist-info/direct_url.json"))
    assert records and json.loads(records[0].read_text()).get("dir_info", {}).get("editable") is True
    # Run from the checkout (its gpudoctor.egg-info, if a build left one, is then first on sys.path) and from
    # elsewhere (the venv's record): neither is a published release.
    for cwd in (str(REPO), "/"):
        result = gpudoctor("dockerfile", "--cpu", cwd=cwd)
        assert result.returncode == 0, result.stderr
        assert "pip install gpudoctor==" not in result.stdout  # the release no index has
    result = gpudoctor("dockerfile", "--cpu")
    assert result.returncode == 0, result.stderr
    assert "pip install gpudoctor==" not in result.stdout  # the release no index has
    assert "# No gpudoctor preflight" in result.stdout and "not a published release" in result.stderr


def test_auto_writes_a_wheel_next_to_the_dockerfile_and_the_file_installs_it(tmp_path):
    target = tmp_path / "Dockerfile"
    result = gpudoctor("dockerfile", "--cpu", "-o", str(target), timeout=600)
    assert result.returncode == 0, result.stderr
    wheel = tmp_path / wheel_name()
    assert wheel.is_file(), result.stderr
    text = target.read_text(encoding="utf-8")
    assert f"COPY {wheel.name} /tmp/{wheel.name}\n" in text and f"pip install /tmp/{wheel.name}\n" in text
    assert 'CMD ["gpudoctor", "check", "--format", "text"]' in text
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"gpudoctor-{__version__}.dist-info/METADATA").decode()
    assert f"Version: {__version__}" in metadata
    # What the preflight needs at run time: the code, the knowledge base, the templates, the checks.
    assert {"gpudoctor/__main__.py", "gpudoctor/kb/data/docker_cuda.json"} <= names
    assert any(name.startswith("gpudoctor_checks/") for name in names)
    assert "gpudoctor_dockerfiles/Dockerfile.cpu.tmpl" in names
    assert not any(name.startswith("tests/") for name in names)
    # Nothing is replaced without --force: not the Dockerfile, not the wheel.
    target.unlink()
    wheel.write_bytes(b"mine")
    again = gpudoctor("dockerfile", "--cpu", "-o", str(target), timeout=600)
    assert again.returncode == 2 and "--force" in again.stderr and len(again.stderr.strip().splitlines()) == 1
    assert wheel.read_bytes() == b"mine" and not target.exists()
    forced = gpudoctor("dockerfile", "--cpu", "-o", str(target), "--force", timeout=600)
    assert forced.returncode == 0 and zipfile.is_zipfile(wheel) and target.is_file()


def test_wheel_without_an_output_file_is_a_usage_error():
    result = gpudoctor("dockerfile", "--cpu", "--preflight", "wheel")
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "-o FILE" in result.stderr


def test_none_leaves_gpudoctor_out_and_says_how_to_add_it():
    result = gpudoctor("dockerfile", "--for-driver", "570.124.06", "--preflight", "none")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert not re.search(r"^(RUN|COPY).*gpudoctor", text, re.MULTILINE)
    assert "# No gpudoctor preflight (--preflight none). To add one" in text
    assert f"#   COPY {wheel_name()} /tmp/{wheel_name()}" in text
    assert 'CMD ["python", "-c", "import torch; print(torch.__version__)"]' in text


def test_pypi_names_the_release(tmp_path):
    result = gpudoctor("dockerfile", "--cpu", "--preflight", "pypi")
    assert result.returncode == 0, result.stderr
    assert f"\n    pip install gpudoctor=={__version__}\n" in result.stdout


def test_auto_takes_pypi_for_a_release_installed_from_an_index(tmp_path):
    # Synthetic: the record pip leaves for an index install (no direct_url.json), of this version.
    record = tmp_path / f"gpudoctor-{__version__}.dist-info"
    record.mkdir()
    (record / "METADATA").write_text(f"Metadata-Version: 2.1\nName: gpudoctor\nVersion: {__version__}\n")
    (record / "INSTALLER").write_text("pip\n")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    result = gpudoctor("dockerfile", "--cpu", env=env, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert f"pip install gpudoctor=={__version__}" in result.stdout
    # ...and not when the installed record is of another version than the running code.
    (record / "METADATA").write_text("Metadata-Version: 2.1\nName: gpudoctor\nVersion: 0.0.1\n")
    other = gpudoctor("dockerfile", "--cpu", env=env, cwd=str(tmp_path))
    assert other.returncode == 0 and "pip install gpudoctor==" not in other.stdout


def test_the_python_floor_is_the_projects():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    floor = re.search(r'^requires-python = ">=(\d+)\.(\d+)"', text, re.MULTILINE)
    assert floor and (int(floor.group(1)), int(floor.group(2))) == GPUDOCTOR_MIN_PYTHON


def test_help_documents_the_option():
    result = gpudoctor("dockerfile", "--help")
    assert "--preflight {auto,pypi,wheel,none}" in result.stdout
    readme = (REPO / "dockerfiles" / "README.md").read_text(encoding="utf-8")
    assert "--preflight" in readme
