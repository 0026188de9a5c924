"""Issue 16: what comes from evidence or a person is data in a generated script or Dockerfile, never code.

Every hostile value here is SYNTHETIC: a newline (or CR, NEL U+0085, U+2028...) followed by a command that would
create a marker file.  The generated install scripts are parsed with ``bash -n`` and run with ``--help`` and
``--dry-run`` in a throw-away directory; the marker must never appear.  The key-file tests run the script's own
``verify_key`` against a throw-away gpg keyring with two synthetic keys.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gpudoctor.generate import distros
from gpudoctor.generate.dockerfile import generate_dockerfile
from gpudoctor.generate.inputs import comment_safe
from gpudoctor.generate.install_script import generate_install_script
from gpudoctor.generate.model import DockerfileRequest, GenerationRefused, InstallScriptRequest, MachineTarget

MARKER = "gpudoctor_injected_marker"
# Line breaks that some reader (bash, a terminal, an editor, Python's splitlines) honours.
BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
SYNTHETIC_PAYLOADS = [f"{brk}touch {MARKER}{brk}" for brk in BREAKS] + [
    f"$(touch {MARKER})",
    f"`touch {MARKER}`",
    f"'; touch {MARKER}; '",
    f'"; touch {MARKER}; "',
    f"\x1b[2K\rtouch {MARKER}",
    f"\u202etouch {MARKER}",
]
_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}


def _hostile_target(field: str, payload: str) -> MachineTarget:
    """A SYNTHETIC target from a snapshot someone else wrote: one field carries the payload."""
    values: dict[str, object] = {
        "driver_version": "550.54.15",
        "compute_capabilities": ("9.0",),
        "gpu_names": ("NVIDIA H100 80GB HBM3",),
        "distro_id": "ubuntu",
        "distro_version": "24.04",
        "source": "snapshot synthetic.json",
    }
    current = values[field]
    if isinstance(current, tuple):
        values[field] = (current[0] + payload,)
    else:
        values[field] = f"{current}{payload}"
    return MachineTarget(**values)  # type: ignore[arg-type]


def _run_script(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(_ENV, HOME=str(script.parent))
    return subprocess.run(
        ["bash", str(script), *args], cwd=script.parent, env=env, capture_output=True, text=True, timeout=60
    )


def _assert_header_is_comments(text: str) -> None:
    """Everything before the first command is comment lines, by bash's own line breaks (only \\n)."""
    header = text.split("\nset -euo pipefail\n", 1)[0]
    for line in header.split("\n"):
        assert line.startswith("#"), repr(line)
    assert not any(ch in text for ch in ("\r", "\x85", "\u2028", "\u2029", "\x1b", "\u202e"))


def _assert_never_runs(text: str, folder: Path, dry_run: bool = True) -> None:
    script = folder / "install.sh"
    script.write_text(text, encoding="utf-8")
    parsed = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert parsed.returncode == 0, parsed.stderr
    helped = _run_script(script, "--help")
    assert helped.returncode == 0, helped.stderr
    if dry_run:
        _run_script(script, "--dry-run", "--force-os", "--yes")
    assert not (folder / MARKER).exists(), "the injected command ran"
    assert MARKER not in helped.stderr  # no "touch: ..." or "command not found" for an injected line


@pytest.mark.parametrize("payload", SYNTHETIC_PAYLOADS[:3] + SYNTHETIC_PAYLOADS[-6:])
@pytest.mark.parametrize("field", ["driver_version", "gpu_names", "source", "distro_version", "compute_capabilities"])
def test_hostile_snapshot_values_never_run_in_an_install_script(field: str, payload: str, tmp_path: Path) -> None:
    request = InstallScriptRequest(distro="ubuntu24.04", target=_hostile_target(field, payload))
    text = generate_install_script(request).text
    _assert_never_runs(text, tmp_path)  # first: before issue 16 this is where it failed (the marker was made)
    _assert_header_is_comments(text)


def test_a_hostile_driver_version_is_dropped_not_quoted() -> None:
    """A version is a version: '550.54.15<newline>touch ...' is no driver version, so the driver is unknown."""
    target = _hostile_target("driver_version", SYNTHETIC_PAYLOADS[0])
    text = generate_install_script(InstallScriptRequest(distro="ubuntu24.04", target=target)).text
    assert "# Machine: snapshot synthetic.json; driver unknown;" in text and "--for-driver" not in text
    assert "NVIDIA H100 80GB HBM3 (compute capability 9.0)" in text


@pytest.mark.parametrize("payload", SYNTHETIC_PAYLOADS[:3] + SYNTHETIC_PAYLOADS[-2:])
def test_a_venv_with_a_line_break_is_refused_in_one_line(payload: str) -> None:
    with pytest.raises(GenerationRefused) as refused:
        generate_install_script(InstallScriptRequest(distro="ubuntu24.04", venv=f"/opt/venv{payload}"))
    assert "\n" not in str(refused.value) and "--venv" in str(refused.value)


@pytest.mark.parametrize("payload", SYNTHETIC_PAYLOADS[-6:-2])
def test_a_venv_with_shell_syntax_stays_one_quoted_path(payload: str, tmp_path: Path) -> None:
    """Quotes, $(...) and backticks are legal in a path: quoted, they stay a path and never run."""
    venv = f"{tmp_path}/v{payload}"
    text = generate_install_script(InstallScriptRequest(distro="ubuntu24.04", venv=venv)).text
    _assert_header_is_comments(text)
    _assert_never_runs(text, tmp_path, dry_run=False)
    helped = _run_script(tmp_path / "install.sh", "--help")
    assert f"(default: {venv})" in helped.stdout


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("python", "3.12; touch x"),
        ("python", "3.12\ntouch x"),
        ("framework_version", "2.7\ntouch x"),
        ("cuda_toolkit", "12.8\n"),
        ("cuda_toolkit", "12.8 $(touch x)"),
    ],
)
def test_flag_values_that_are_not_versions_are_refused(field: str, value: str) -> None:
    request = InstallScriptRequest(distro="ubuntu24.04", **{field: value})  # type: ignore[arg-type]
    with pytest.raises(GenerationRefused) as refused:
        generate_install_script(request)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("payload", [f"\nRUN touch {MARKER}", f"\r\nRUN touch {MARKER}", f"\u2028RUN touch {MARKER}"])
@pytest.mark.parametrize("field", ["driver_version", "gpu_names", "source"])
def test_hostile_snapshot_values_stay_comments_in_a_dockerfile(field: str, payload: str) -> None:
    text = generate_dockerfile(DockerfileRequest(target=_hostile_target(field, payload))).text
    head = text.split("\nFROM ", 1)[0]
    assert all(line.startswith("#") for line in head.split("\n")), head
    assert not any(line.startswith("RUN touch") for line in text.splitlines())
    assert "\r" not in text and "\u2028" not in text


def test_comment_safe_writes_every_line_break_as_a_visible_escape() -> None:
    for brk in BREAKS + ["\x00", "\x1b", "\u200b", "\u202e", "\ufeff"]:
        made = comment_safe(f"a{brk}b")
        assert made.startswith("a") and made.endswith("b") and len(made.splitlines()) == 1 and made.isprintable()
    assert comment_safe("NVIDIA GeForce RTX 4090") == "NVIDIA GeForce RTX 4090"
    assert len(comment_safe("x" * 1000)) == 120


# --------------------------------------------------------------------------- property: every field, any text

_PIECES = list("abc019 .-_/~") + BREAKS + ["$(", ")", "`", "'", '"', ";", "\\", "\x00", "\x1b", "\u202e", "\t", "#"]
_hostile_text = st.lists(st.sampled_from(_PIECES), max_size=12).map(lambda parts: "".join(parts) + f" touch {MARKER}")
_maybe = st.one_of(st.none(), _hostile_text)


def _valid_or_hostile(*valid: str | None) -> st.SearchStrategy[str | None]:
    """Mostly a valid flag value, a hostile one a quarter of the time (more would refuse nearly every request)."""
    return st.one_of(st.sampled_from(valid), st.sampled_from(valid), st.sampled_from(valid), _hostile_text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    driver=_valid_or_hostile(None, "550.54.15"),
    name=_hostile_text,
    cc=_hostile_text,
    distro_id=_maybe,
    distro_version=_maybe,
    source=_hostile_text,
    python=_valid_or_hostile(None, "3.12"),
    version=_valid_or_hostile(None),
    toolkit=_valid_or_hostile(None, "12.8"),
    venv=st.one_of(
        _hostile_text, _hostile_text.map(lambda text: "~/" + re.sub(r"[\x00-\x1f\x85\u2028\u2029\u202e]", "", text))
    ),
    container=st.booleans(),
)
def test_property_no_hostile_field_breaks_an_install_script(
    tmp_path: Path, driver, name, cc, distro_id, distro_version, source, python, version, toolkit, venv, container
) -> None:
    target = MachineTarget(
        driver_version=driver,
        compute_capabilities=(cc, "9.0"),
        gpu_names=(name,),
        distro_id=distro_id,
        distro_version=distro_version,
        source=source,
    )
    request = InstallScriptRequest(
        distro="ubuntu24.04" if container else "rhel9",
        container_toolkit=container,
        python=python,
        framework_version=version,
        cuda_toolkit=toolkit,
        venv=venv,
        target=target,
    )
    try:
        text = generate_install_script(request).text
    except GenerationRefused as refused:
        assert refused.reason and "\n" not in str(refused)
        return
    _assert_header_is_comments(text)
    for line in text.split("\n"):
        if MARKER in line:  # only inside a comment, or inside the single-quoted venv default
            assert line.startswith(("#", "VENV=${GPUDOCTOR_VENV:-")), repr(line)
    _assert_never_runs(text, tmp_path, dry_run=False)
    event("a script was generated")


@settings(max_examples=40, deadline=None)
@given(
    driver=_maybe,
    name=_hostile_text,
    source=_hostile_text,
    python=_maybe,
    version=_maybe,
    requirements=_maybe,
    os_token=_maybe,
)
def test_property_no_hostile_field_leaves_a_dockerfile_comment(
    driver, name, source, python, version, requirements, os_token
) -> None:
    request = DockerfileRequest(
        framework_version=version,
        python=python,
        os=os_token,
        requirements=requirements,
        target=MachineTarget(driver_version=driver, compute_capabilities=("9.0",), gpu_names=(name,), source=source),
    )
    try:
        text = generate_dockerfile(request).text
    except GenerationRefused as refused:
        assert "\n" not in str(refused)
        return
    assert all(line.startswith("#") for line in text.split("\nFROM ", 1)[0].split("\n"))
    assert all(line.startswith("#") for line in text.split("\n") if MARKER in line)
    assert not any(ch in text for ch in BREAKS if ch != "\n")


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_shellcheck_passes_a_script_generated_from_hostile_values(tmp_path: Path) -> None:
    target = _hostile_target("gpu_names", SYNTHETIC_PAYLOADS[0])
    request = InstallScriptRequest(distro="rhel9", container_toolkit=True, venv=f"/opt/v'{MARKER}", target=target)
    script = tmp_path / "install.sh"
    script.write_text(generate_install_script(request).text, encoding="utf-8")
    done = subprocess.run(["shellcheck", "-S", "warning", str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout


# --------------------------------------------------------------------------- repository keys and definitions


def _functions(text: str, *names: str) -> str:
    found = []
    for name in names:
        match = re.search(rf"^{name}\(\) \{{\n.*?^\}}\n", text, re.S | re.M)
        assert match, f"no function {name}"
        found.append(match.group(0))
    return "".join(found)


def _shell(text: str, names: tuple[str, ...], call: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    program = "set -euo pipefail\nsay() { printf '%s\\n' \"$*\"; }\n" + _functions(text, *names) + call
    return subprocess.run(["bash", "-c", program], env=env, capture_output=True, text=True, timeout=60)


def _apt_script() -> str:
    request = InstallScriptRequest(distro="ubuntu24.04", cuda_toolkit="12.8", framework=None, container_toolkit=True)
    return generate_install_script(request).text


@pytest.fixture(scope="module")
def two_synthetic_keys(tmp_path_factory: pytest.TempPathFactory):
    """Two SYNTHETIC keys in a throw-away keyring: the 'expected' one and an extra one."""
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed")
    home = tmp_path_factory.mktemp("gnupg")
    home.chmod(0o700)
    env = dict(_ENV, GNUPGHOME=str(home), HOME=str(home))
    keys: dict[str, tuple[str, Path]] = {}
    for label in ("expected", "extra"):
        uid = f"Synthetic {label} key <{label}@example.invalid>"
        gen = ["gpg", "--batch", "--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign", "never"]
        subprocess.run(gen, env=env, check=True, capture_output=True, timeout=60)
        listed = subprocess.run(
            ["gpg", "--batch", "--with-colons", "--list-keys", uid], env=env, check=True, capture_output=True, text=True
        ).stdout
        fingerprint = next(line.split(":")[9] for line in listed.splitlines() if line.startswith("fpr:"))
        exported = home / f"{label}.asc"
        subprocess.run(
            ["gpg", "--batch", "--armor", "--output", str(exported), "--export", fingerprint], env=env, check=True
        )
        keys[label] = (fingerprint, exported)
    yield env, keys
    subprocess.run(["gpgconf", "--kill", "gpg-agent"], env=env, capture_output=True, timeout=30)


def test_verify_key_accepts_a_file_of_only_the_expected_key(two_synthetic_keys) -> None:
    env, keys = two_synthetic_keys
    fingerprint, path = keys["expected"]
    done = _shell(_apt_script(), ("verify_key",), f"verify_key {path} {fingerprint}\n", env)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("order", [("expected", "extra"), ("extra", "expected")])
def test_verify_key_rejects_an_extra_key_appended_to_the_file(two_synthetic_keys, order, tmp_path: Path) -> None:
    env, keys = two_synthetic_keys
    both = tmp_path / "two-keys.asc"
    both.write_text("".join(keys[label][1].read_text() for label in order))
    call = f"verify_key {both} {keys['expected'][0]}\necho TRUSTED\n"
    done = _shell(_apt_script(), ("verify_key",), call, env)
    assert done.returncode == 1 and "TRUSTED" not in done.stdout
    assert keys["extra"][0] in done.stderr


def test_verify_key_rejects_an_unreadable_key_file(two_synthetic_keys, tmp_path: Path) -> None:
    env, _ = two_synthetic_keys
    junk = tmp_path / "junk.asc"
    junk.write_text("SYNTHETIC: not a key\n")
    done = _shell(_apt_script(), ("verify_key",), f"verify_key {junk} {'A' * 40}\n", env)
    assert done.returncode == 1


@pytest.mark.parametrize(
    ("extra", "ok"),
    [
        ("", True),
        ("# a comment\n\n", True),
        ("deb [trusted=yes] https://example.invalid/synthetic /\n", False),
        ("deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] https://example.invalid/ /\n", False),
    ],
)
def test_check_repo_lines_accepts_only_the_known_text(extra: str, ok: bool, tmp_path: Path) -> None:
    text = _apt_script()
    known = re.search(r"^  run write_file \"\$WORK/ctk.list\" '(.*)'$", text, re.M)
    assert known and distros.CTK_APT_LINE in known.group(1)
    listing = tmp_path / "ctk.list"
    listing.write_text(known.group(1) + "\n" + extra)
    done = _shell(text, ("check_repo_lines",), f"check_repo_lines {listing} '{known.group(1)}'\n", dict(_ENV))
    assert (done.returncode == 0) is ok, done.stderr


def test_every_repository_definition_is_written_from_known_text_and_checked() -> None:
    for distro, container in (("ubuntu24.04", True), ("rhel9", True), ("debian12", True)):
        request = InstallScriptRequest(distro=distro, cuda_toolkit="12.8", framework=None, container_toolkit=container)
        text = generate_install_script(request).text
        assert not re.search(r"download \S*\.repo", text)  # never a downloaded .repo
        for install in re.finditer(r'as_root install -m 0644 "\$(\w+|WORK/[\w.]+)" (\S+)', text):
            body = text[: install.start()]
            written = body.rfind(f'run write_file "${install.group(1)}"')
            checked = body.rfind(f'run check_repo_lines "${install.group(1)}"')
            if install.group(2).startswith("/etc/apt/sources.list.d/debian-nonfree"):
                continue  # the fix catalogue's Debian lines: known text, compared by test_fixes_agree
            assert -1 < written < checked, (distro, install.group(2))
        if "dpkg -i" in text:
            setup = text[text.index("setup_cuda_repo() {") :]
            assert -1 < setup.find("run check_keyring_deb ") < setup.find("dpkg -i")


def test_check_keyring_deb_refuses_an_unexpected_file(two_synthetic_keys, tmp_path: Path) -> None:
    env, keys = two_synthetic_keys
    text = _apt_script().replace(distros.CUDA_APT_FINGERPRINT, keys["expected"][0])
    url = "https://example.invalid/synthetic/x86_64"
    unpacked = tmp_path / "cuda-keyring"
    (unpacked / "etc/apt/sources.list.d").mkdir(parents=True)
    (unpacked / "usr/share/keyrings").mkdir(parents=True)
    line = f"deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] {url}/ /"
    (unpacked / "etc/apt/sources.list.d/cuda-synthetic.list").write_text(line + "\n")
    (unpacked / "usr/share/keyrings/cuda-archive-keyring.gpg").write_bytes(keys["expected"][1].read_bytes())
    names = ("verify_key", "check_repo_lines", "check_keyring_deb")
    assert _shell(text, names, f"check_keyring_deb {unpacked} {url}\n", env).returncode == 0
    # The real package also ships its apt pin (`dpkg -L cuda-keyring`, autowarefoundation PR #265): accepted
    # while it holds only pin stanzas (this one is SYNTHETIC, in the real file's shape).
    (unpacked / "etc/apt/preferences.d").mkdir(parents=True)
    pin = unpacked / "etc/apt/preferences.d/cuda-repository-pin-600"
    pin.write_text("Package: nsight-compute\nPin: origin *ubuntu.com*\nPin-Priority: -1\n")
    assert _shell(text, names, f"check_keyring_deb {unpacked} {url}\n", env).returncode == 0
    pin.write_text("Package: *\nPin: release o=NVIDIA\nPin-Priority: 1001\nAPT::Get::AllowUnauthenticated true;\n")
    assert _shell(text, names, f"check_keyring_deb {unpacked} {url}\n", env).returncode == 1
    pin.unlink()
    (unpacked / "etc/apt/apt.conf.d").mkdir(parents=True)
    (unpacked / "etc/apt/apt.conf.d/99synthetic").write_text('APT::Get::AllowUnauthenticated "true";\n')
    refused = _shell(text, names, f"check_keyring_deb {unpacked} {url}\n", env)
    assert refused.returncode == 1 and "unexpected file" in refused.stderr
