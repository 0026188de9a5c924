"""Hostile text in evidence: credentials, home directories and terminal escapes never reach a shared file or screen.

A snapshot is made to be shared and a Markdown report to be pasted in public: credentials in a
``direct_url.json`` (``pip install git+https://user:token@host/...`` keeps them there), the user's home
and name in ``PATH`` and in the probed interpreter's path must not travel with them.  Every value planted
here is SYNTHETIC (names say so); the snapshots are written by the real ``collect`` and ``write_snapshot``
and read back by the real ``check --from``.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import unicodedata

import pytest

from gpudoctor.evidence.collect import collect
from gpudoctor.evidence.redact import redact, redact_people, strip_url_credentials
from gpudoctor.evidence.snapshot import write_snapshot
from gpudoctor.evidence.sources import source_by_name
from gpudoctor.evidence.target_python import HOW_OWN, TargetPython
from gpudoctor.facts.framework_record import parse_install_origin
from gpudoctor.render.common import printable
from tests.helpers.fixtures import fixture_text

SYNTHETIC_USER = "alicesynth"
SYNTHETIC_HOME = f"/home/{SYNTHETIC_USER}"
SYNTHETIC_TOKEN = "ghp_SYNTHETICtoken123"
SYNTHETIC_DIRECT_URL = {
    "url": f"https://{SYNTHETIC_USER}:{SYNTHETIC_TOKEN}@git.synthetic.example/ml/cupy.git",
    "vcs_info": {"vcs": "git", "commit_id": "0123456789abcdef0123456789abcdef01234567"},
}
SYNTHETIC_PATH = os.pathsep.join(
    [f"{SYNTHETIC_HOME}/.local/bin", f"/scratch/{SYNTHETIC_USER}/tools/bin", "/usr/local/cuda/bin", "/usr/bin"]
)


def _fake_distribution(site: pathlib.Path) -> None:
    """A SYNTHETIC installed cupy-cuda12x, as pip leaves one installed from a URL that carried a token."""
    info = site / "cupy_cuda12x-13.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cupy-cuda12x\nVersion: 13.3.0\n", encoding="utf-8")
    (info / "INSTALLER").write_text("pip\n", encoding="utf-8")
    (info / "direct_url.json").write_text(json.dumps(SYNTHETIC_DIRECT_URL), encoding="utf-8")
    (site / "cupy").mkdir()
    (site / "cupy" / "__init__.py").write_text('raise ImportError("SYNTHETIC stand-in for cupy")\n', encoding="utf-8")


@pytest.fixture
def hostile_machine(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """The environment of a SYNTHETIC user whose PATH, home and installed cupy carry what must not be shared."""
    site = tmp_path / "site"
    _fake_distribution(site)
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.syspath_prepend(str(site))  # gpudoctor asks its own interpreter first whether cupy is there
    monkeypatch.setenv("PATH", SYNTHETIC_PATH + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{SYNTHETIC_HOME}/cuda/lib64")
    monkeypatch.setenv("HOME", SYNTHETIC_HOME)
    for variable in ("LOGNAME", "USER", "LNAME", "USERNAME"):  # getpass.getuser() reads these first
        monkeypatch.setenv(variable, SYNTHETIC_USER)
    return tmp_path


def _collect_snapshot(where: pathlib.Path, name: str, redacted: bool) -> pathlib.Path:
    sources = [source_by_name(n) for n in ("env.json", "target-python.json", "framework-cupy.json")]
    evidence = collect(
        timeout=60,
        sources=[s for s in sources if s is not None],
        target=TargetPython(sys.executable, HOW_OWN),
        frameworks=["cupy"],
    )
    return pathlib.Path(write_snapshot(evidence, str(where / name), redacted=redacted))


def _snapshot_text(path: pathlib.Path) -> str:
    return "\n".join(member.read_text(encoding="utf-8") for member in sorted(path.iterdir()))


def test_collected_snapshot_keeps_no_credentials_home_or_user_name(hostile_machine: pathlib.Path) -> None:
    snapshot = _collect_snapshot(hostile_machine, "snap", redacted=True)
    text = _snapshot_text(snapshot)
    # The planted values did reach the evidence (the scan and the probe saw them) ...
    probe = json.loads((snapshot / "framework-cupy.json").read_text(encoding="utf-8"))
    assert probe["distribution"]["direct_url"]["url"] == "https://REDACTED@git.synthetic.example/ml/cupy.git"
    variables = json.loads((snapshot / "env.json").read_text(encoding="utf-8"))["variables"]
    assert variables["PATH"].startswith("~/.local/bin:/scratch/REDACTED/tools/bin:/usr/local/cuda/bin")
    assert variables["LD_LIBRARY_PATH"] == "~/cuda/lib64"
    # ... and nothing of them is left, in any file, the manifest included.
    assert SYNTHETIC_TOKEN not in text and SYNTHETIC_USER not in text and SYNTHETIC_HOME not in text


def test_no_redact_keeps_homes_but_never_credentials(hostile_machine: pathlib.Path) -> None:
    snapshot = _collect_snapshot(hostile_machine, "kept", redacted=False)
    text = _snapshot_text(snapshot)
    assert SYNTHETIC_HOME in text and f"/scratch/{SYNTHETIC_USER}/" in text
    assert SYNTHETIC_TOKEN not in text
    assert "https://REDACTED@git.synthetic.example/ml/cupy.git" in text


def _check(snapshot: pathlib.Path, output: str, *extra: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "check", "--from", str(snapshot), "--format", output, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def test_markdown_of_an_unredacted_snapshot_hides_homes_unless_asked(hostile_machine: pathlib.Path) -> None:
    snapshot = _collect_snapshot(hostile_machine, "kept", redacted=False)
    # Rendered by another user on another machine: only the pattern of a home gives it away.
    elsewhere = {**os.environ, "HOME": "/home/someone-else", "USER": "someoneelse", "LOGNAME": "someoneelse"}
    elsewhere.pop("PYTHONPATH")
    markdown = _check(snapshot, "markdown", env=elsewhere)
    assert SYNTHETIC_HOME not in markdown and SYNTHETIC_TOKEN not in markdown
    kept = _check(snapshot, "markdown", "--no-redact", env=elsewhere)
    assert SYNTHETIC_TOKEN not in kept


def test_markdown_hides_the_probed_interpreters_home() -> None:
    from gpudoctor.render.markdown import render_markdown
    from gpudoctor.results import Report

    synthetic_python = {"executable": "/Users/alicesynth/miniforge3/envs/ml/bin/python", "version": "3.12.4"}
    report = Report(results=[], source={"kind": "live"}, machine={"python": synthetic_python})
    assert "~/miniforge3/envs/ml/bin/python" in render_markdown(report)
    assert "/Users/alicesynth/miniforge3" in render_markdown(report, redact=False)


@pytest.mark.parametrize(
    ("synthetic", "expected"),
    [
        ("https://user:token@pypi.synthetic.example/simple", "https://REDACTED@pypi.synthetic.example/simple"),
        ("--index-url=https://__token__:pypi-AgE@host.example/x", "--index-url=https://REDACTED@host.example/x"),
        ('{"url": "git+ssh://me:p@ss@host.example/r.git@v1"}', '{"url": "git+ssh://REDACTED@host.example/r.git@v1"}'),
        ("mail me@host.example at https://host.example/a@b", "mail me@host.example at https://host.example/a@b"),
    ],
)
def test_url_credentials_are_stripped_and_nothing_else(synthetic: str, expected: str) -> None:
    assert strip_url_credentials(synthetic) == expected
    assert printable(synthetic) == expected


@pytest.mark.parametrize(
    ("synthetic", "expected"),
    [
        ("/home/bob/venv/bin/python", "~/venv/bin/python"),
        ("PATH=/Users/bob/bin:/usr/local/cuda/bin", "PATH=~/bin:/usr/local/cuda/bin"),
        ("C:\\Users\\bob\\venv\\python.exe", "~\\venv\\python.exe"),
        ('{"p": "C:\\\\Users\\\\bob\\\\venv"}', '{"p": "~\\\\venv"}'),
        ("/Users/Shared/conda", "/Users/Shared/conda"),
        ("/usr/local/cuda-12.4/lib64", "/usr/local/cuda-12.4/lib64"),
    ],
)
def test_homes_of_anyone_become_tilde(synthetic: str, expected: str) -> None:
    assert redact_people(synthetic, homes=[], user=None) == expected


def test_the_users_own_name_and_home_wherever_they_are() -> None:
    text = "/data/bob/ckpt and /nfs/u/bob:/opt/bobcat/bin and /work/homes/b0b/x"
    assert redact_people(text, homes=["/work/homes/b0b"], user="bob") == (
        "/data/REDACTED/ckpt and /nfs/u/REDACTED:/opt/bobcat/bin and ~/x"
    )


def test_redacted_json_stays_json() -> None:
    synthetic = {"PATH": "/home/bob/bin:/Users/carol/bin", "url": "https://u:t@h.example/x", "w": "C:\\Users\\dan\\x"}
    assert json.loads(redact(json.dumps(synthetic))) == {
        "PATH": "~/bin:~/bin",
        "url": "https://REDACTED@h.example/x",
        "w": "~\\x",
    }


def test_install_origin_from_an_old_snapshot_shows_no_credentials() -> None:
    origin = parse_install_origin({"installer": "pip", "direct_url": SYNTHETIC_DIRECT_URL}, "13.3.0", "cupy")
    assert origin.url == "https://REDACTED@git.synthetic.example/ml/cupy.git"
    assert origin.index_hint == origin.url


# ----------------------------------------------------------------------------------------- terminal escapes

SYNTHETIC_ESCAPES = "\x1b[2J\x1b]0;owned\x07\x1b[31m\u202e"
SYNTHETIC_XID_LINE = f"[ 1234.567890] NVRM: Xid (PCI:0000:01:00): 79, pid=2345, name=python3{SYNTHETIC_ESCAPES}\r, GPU has fallen off the bus."


def _no_controls(text: str) -> bool:
    return all(ch in "\n\t" or not unicodedata.category(ch).startswith("C") for ch in text)


def test_escape_sequences_in_a_snapshot_never_reach_text_or_markdown(tmp_path: pathlib.Path) -> None:
    # nvidia-smi's own table (XML cannot carry an ESC at all: it would be a damaged file, not a name).
    real_table = fixture_text("C/gls-2x-h100-nvl-550.54.14.txt")
    assert "|   0  NVIDIA H100 NVL " in real_table
    snapshot = tmp_path / "hostile-snapshot"
    snapshot.mkdir()
    hostile_table = real_table.replace("NVIDIA H100 NVL", f"NVIDIA H100{SYNTHETIC_ESCAPES} NVL", 1)
    (snapshot / "nvidia-smi.txt").write_text(hostile_table, encoding="utf-8")
    (snapshot / "dmesg-nvidia.txt").write_text(SYNTHETIC_XID_LINE + "\n", encoding="utf-8")

    text = _check(snapshot, "text", "--verbose")
    markdown = _check(snapshot, "markdown")
    report = _check(snapshot, "json")
    for shown in (text, markdown):
        assert "NVIDIA H100\\x1b[2J\\x1b]0;owned\\x07" in shown  # the name is there, its escapes shown as text
        assert "name=python3\\x1b[2J" in shown
        assert "fallen off the bus" in shown
        assert _no_controls(shown)
    # JSON keeps the value exact; its encoding escapes the C0 control characters (ESC, BEL, CR), so none is raw
    # (a bidi override is a legal raw character in JSON: JSON is read by programs, not by a terminal).
    assert not any(ch in report for ch in "\x1b\x07\r")
    assert "NVIDIA H100\\u001b[2J\\u001b]0;owned\\u0007" in report
