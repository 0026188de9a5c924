"""End-to-end tests of the command line, run as a user runs it (a subprocess)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tarfile

import pytest

from tests.helpers.fixtures import real_fixtures_dir

HEAVY_MODULES = ("rich", "pynvml", "psutil", "torch", "tensorflow", "packaging", "distro")


def gpudoctor(
    *args: str, env: dict | None = None, cwd: str | None = None, timeout: float = 120, input: str | None = None
):
    full_env = dict(os.environ)
    full_env.pop("NO_COLOR", None)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=timeout,
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
    )


def as_json(result) -> dict:
    assert result.stdout, result.stderr
    return json.loads(result.stdout)


def statuses(report: dict) -> dict[str, str]:
    return {r["code"]: r["status"] for r in report["results"]}


def fixture(path: str) -> pathlib.Path:
    full = real_fixtures_dir() / path
    if not full.exists():
        pytest.skip(f"real fixture {path} not available")
    return full


# --- speed contract: --version and --help import nothing heavy ------------------------------------


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["check", "--help"]])
def test_version_and_help_import_nothing_heavy(argv):
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['gpudoctor', *{argv!r}]\n"
        "try:\n    runpy.run_module('gpudoctor', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        f"print([m for m in {HEAVY_MODULES!r} if m in sys.modules])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_version_output():
    from gpudoctor import __version__

    result = gpudoctor("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"gpudoctor {__version__}"


# --- bad input: one line, exit 2 -------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--min-compute-capability", "eight"],
        ["check", "--min-gpus", "0"],
        ["check", "--timeout", "-1"],
        ["check", "--select", "NOSUCHCHECK"],
        ["check", "--from", "/nonexistent/snapshot"],
        ["explain", "XYZ999"],
        ["frobnicate"],
    ],
)
def test_bad_usage_is_one_line_and_exit_2(argv):
    result = gpudoctor(*argv)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_corrupt_archive_is_one_line_and_exit_2(tmp_path):
    broken = tmp_path / "snap.tar.gz"
    good = tmp_path / "good.tar.gz"
    with tarfile.open(good, "w:gz") as archive:
        info = tarfile.TarInfo("snap/nvidia-smi.txt")
        data = b"No devices were found\n" * 200
        info.size = len(data)
        import io

        archive.addfile(info, io.BytesIO(data))
    broken.write_bytes(good.read_bytes()[:60])  # truncated mid-stream
    result = gpudoctor("check", "--from", str(broken))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1


def test_garbage_file_is_one_line_and_exit_2(tmp_path):
    garbage = tmp_path / "report.bin"
    garbage.write_bytes(bytes(range(256)) * 10)
    result = gpudoctor("check", "--from", str(garbage))
    assert result.returncode == 2
    assert "holds binary data" in result.stderr and result.stderr.count("\n") == 1


def test_an_unrecognised_paste_is_scanned_not_refused(tmp_path):
    # A single error line of no known tool's output shape (real text, NVIDIA/nvidia-docker#177).
    paste = tmp_path / "what-i-saw.txt"
    paste.write_text("nvidia-docker | 2016/08/22 12:54:02 Error: unsupported CUDA version: driver 7.5 < image 8.0\n")
    result = gpudoctor("check", "--from", str(paste), "--format", "json")
    assert result.returncode == 1, result.stderr
    causes = {f["cause"] for r in as_json(result)["results"] for f in r["findings"]}
    assert "container-cuda-too-new" in causes


def test_check_reads_a_paste_from_standard_input():
    # Real line (NVIDIA/nvidia-docker#1671) as it comes out of `xclip -o`, quoted in a Markdown reply.
    pasted = "> ```\r\n> Failed to initialize NVML: Unknown Error\r\n> ```\r\n"
    result = gpudoctor("check", "--from", "-", "--format", "json", input=pasted)
    assert result.returncode in (0, 1), result.stderr
    report = as_json(result)
    assert report["source"] == {"kind": "snapshot", "path": "<stdin>"}
    assert any(f["quote"] for r in report["results"] for f in r["findings"])


def test_empty_standard_input_is_one_line_and_exit_2():
    result = gpudoctor("check", "--from", "-", input="")
    assert result.returncode == 2 and "empty" in result.stderr and result.stderr.count("\n") == 1


def test_directory_without_evidence_is_exit_2(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    result = gpudoctor("check", "--from", str(tmp_path))
    assert result.returncode == 2
    assert "no gpudoctor evidence" in result.stderr


# --- live check on this machine --------------------------------------------------------------------


def test_live_check_json_follows_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    result = gpudoctor("check", "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    report = as_json(result)
    schema = as_json(gpudoctor("schema"))
    jsonschema.validate(report, schema)
    assert report["summary"]["exit_code"] == result.returncode
    assert "crashed" not in statuses(report).values(), [r for r in report["results"] if r["status"] == "crashed"]


def test_live_text_output_is_plain_when_not_a_tty():
    result = gpudoctor("check")
    assert result.returncode in (0, 1)
    assert "\x1b[" not in result.stdout
    assert "Summary:" in result.stdout


def test_require_gpu_fails_where_there_is_none():
    report = as_json(gpudoctor("check", "--format", "json", "--select", "GATE,PCI"))
    if report["machine"].get("gpus"):
        pytest.skip("this machine has a usable GPU")
    result = gpudoctor("check", "--require-gpu", "--format", "json")
    assert result.returncode == 1
    assert statuses(as_json(result))["GATE001"] == "problem"


def test_select_and_ignore():
    only_driver = statuses(as_json(gpudoctor("check", "--format", "json", "--select", "DRV")))
    assert only_driver and all(code.startswith("DRV") for code in only_driver)
    without = statuses(as_json(gpudoctor("check", "--format", "json", "--ignore", "DRV,GATE")))
    assert without and not any(code.startswith(("DRV", "GATE")) for code in without)


# --- snapshots -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["snap", "snap.tar.gz"])
def test_collect_then_check_from_gives_the_same_verdicts(tmp_path, name):
    target = tmp_path / name
    collected = gpudoctor("collect", "-o", str(target))
    assert collected.returncode == 0, collected.stderr
    assert target.exists()
    live = statuses(as_json(gpudoctor("check", "--format", "json")))
    replay = as_json(gpudoctor("check", "--format", "json", "--from", str(target)))
    assert replay["source"]["kind"] == "snapshot"
    replayed = statuses(replay)
    for code in live:
        assert replayed[code] == live[code], code


def test_snapshot_manifest_records_every_command(tmp_path):
    target = tmp_path / "snap"
    assert gpudoctor("collect", "-o", str(target)).returncode == 0
    manifest = json.loads((target / "manifest.json").read_text())
    sources = manifest["sources"]
    for name in (
        "nvidia-smi-q-x.xml",
        "nvidia-smi.txt",
        "nvidia-smi-topo-m.txt",
        "proc-driver-nvidia-version.txt",
        "nvcc-version.txt",
        "ldconfig-p.txt",
        "lspci.txt",
        "os-release",
        "uname.txt",
        "dmesg-nvidia.txt",
        "nvml.json",
        "env.json",
    ):
        assert name in sources, name
    for name, entry in sources.items():
        assert set(entry) >= {"argv", "exit_code", "stderr", "duration_s", "timed_out", "error"}, name
        if entry["kind"] == "command" and entry["error"] is None:
            assert entry["argv"] and isinstance(entry["exit_code"], int)
    assert (target / "os-release").read_text() == pathlib.Path("/etc/os-release").read_text()


def test_collect_never_overwrites_without_force(tmp_path):
    target = tmp_path / "precious.tar.gz"
    target.write_text("the user's own file")
    result = gpudoctor("collect", "-o", str(target))
    assert result.returncode == 2
    assert target.read_text() == "the user's own file"
    forced = gpudoctor("collect", "-o", str(target), "--force")
    assert forced.returncode == 0
    assert tarfile.is_tarfile(target)


def test_env_snapshot_keeps_secrets_out(tmp_path):
    target = tmp_path / "snap"
    secret = "s3cr3t-value-that-must-not-leak"
    env = {
        "NVIDIA_API_KEY": secret,
        "HF_TOKEN": secret,
        "AWS_SECRET_ACCESS_KEY": secret,
        "CUDA_VISIBLE_DEVICES": "0",
        "KUBERNETES_SERVICE_HOST": "10.0.0.1",
    }
    assert gpudoctor("collect", "-o", str(target), env=env).returncode == 0
    for path in target.iterdir():
        assert secret not in path.read_text(errors="replace"), path.name
        assert "10.0.0.1" not in path.read_text(errors="replace"), path.name
    recorded = json.loads((target / "env.json").read_text())
    assert recorded["variables"]["CUDA_VISIBLE_DEVICES"] == "0"
    assert "KUBERNETES_SERVICE_HOST" in recorded["present"]


def test_hand_made_directory_with_one_file(tmp_path):
    source = fixture("C/err-nvml-version-mismatch-reboot-illinois-60.txt")
    (tmp_path / "nvidia-smi.txt").write_text(source.read_text())
    result = gpudoctor("check", "--format", "json", "--from", str(tmp_path))
    report = as_json(result)
    assert statuses(report)["DRV002"] == "problem"
    assert result.returncode == 1
    not_collected = [r for r in report["results"] if r["status"] == "not_applicable"]
    assert not_collected, "missing evidence is 'not collected', never a crash"
    assert "crashed" not in statuses(report).values()


# --- diagnosing real captured outputs (a maintainer's view) -----------------------------------------


def test_single_xml_file_a100_mig():
    source = fixture("A/telegraf-a100-sxm4-80gb-535.54.03-v12.txt")
    report = as_json(gpudoctor("check", "--format", "json", "--from", str(source)))
    results = {r["code"]: r for r in report["results"]}
    gpus = results["GPU001"]["data"]["gpus"]
    assert len(gpus) == 1 and "A100" in gpus[0]["name"]
    assert gpus[0]["compute_capability"] == "8.0"
    assert results["GPU001"]["data"]["cuda_driver_max"] == "12.2"
    assert results["GPU003"]["data"]["enabled"] == [0]


def test_single_xml_file_gates():
    source = str(fixture("A/telegraf-a100-sxm4-80gb-535.54.03-v12.txt"))
    ok_run = gpudoctor(
        "check",
        "--format",
        "json",
        "--from",
        source,
        "--select",
        "GATE",
        "--min-compute-capability",
        "8.0",
        "--cuda",
        "12.2",
        "--min-driver",
        "535",
        "--min-gpu-memory",
        "40",
    )
    assert ok_run.returncode == 0, ok_run.stdout
    failing = gpudoctor(
        "check",
        "--format",
        "json",
        "--from",
        source,
        "--select",
        "GATE",
        "--min-gpus",
        "2",
        "--cuda",
        "13.0",
        "--min-compute-capability",
        "9.0",
    )
    assert failing.returncode == 1
    verdicts = statuses(as_json(failing))
    assert verdicts["GATE002"] == verdicts["GATE006"] == verdicts["GATE003"] == "problem"


def test_pasted_couldnt_communicate_error():
    source = fixture("C/err-couldnt-communicate-kernel-upgrade-gcp-pr18.txt")
    result = gpudoctor("check", "--format", "json", "--from", str(source))
    assert result.returncode == 1
    result_by_code = {r["code"]: r for r in as_json(result)["results"]}
    assert result_by_code["DRV001"]["status"] == "problem"
    assert any("modprobe nvidia" in c for f in result_by_code["DRV001"]["findings"] for c in f["fix"]["commands"])


def test_markdown_is_redacted(tmp_path):
    source = fixture("A/telegraf-rtx3060-570.124.04-v12.txt")
    uuid = "GPU-d6889ff6-2523-9142-ca3c-1ca3f396a625"
    assert uuid in source.read_text()
    redacted = gpudoctor("check", "--format", "markdown", "--from", str(source), "-v")
    assert redacted.returncode in (0, 1)
    assert uuid not in redacted.stdout
    plain = gpudoctor("check", "--format", "markdown", "--no-redact", "--from", str(source))
    assert uuid in plain.stdout


# --- JUnit output and the overwrite rule -----------------------------------------------------------


def test_junit_xml_written_and_never_clobbers_foreign_files(tmp_path):
    junit = tmp_path / "report.xml"
    first = gpudoctor("check", "--junit-xml", str(junit))
    assert first.returncode in (0, 1)
    assert 'testsuites name="gpudoctor"' in junit.read_text()
    earlier = junit.read_text()
    # Content can't prove who wrote a file, so even our own earlier report needs --force.
    again = gpudoctor("check", "--junit-xml", str(junit))
    assert again.returncode == 2
    assert "--force" in again.stderr
    assert junit.read_text() == earlier
    forced = gpudoctor("check", "--junit-xml", str(junit), "--force")
    assert forced.returncode == first.returncode
    foreign = tmp_path / "thesis.xml"
    foreign.write_text("<thesis>years of work</thesis>")
    refused = gpudoctor("check", "--junit-xml", str(foreign))
    assert refused.returncode == 2
    assert foreign.read_text() == "<thesis>years of work</thesis>"


# --- a hanging nvidia-smi costs at most the timeout --------------------------------------------------


def test_hanging_nvidia_smi_is_stopped_and_reported(tmp_path):
    # A test double on PATH: the real failure (a driver stuck after an Xid) can't be produced on demand.
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\nsleep 60\n")
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    result = gpudoctor("check", "--format", "json", "--timeout", "1", env=env, timeout=50)
    report = as_json(result)
    col = {r["code"]: r for r in report["results"]}["COL001"]
    assert col["status"] == "problem"
    assert "nvidia-smi.txt" in col["data"]["timed_out"]
    assert result.returncode == 1


# --- explain / list-checks -------------------------------------------------------------------------


def test_list_checks_and_explain_every_code():
    rows = json.loads(gpudoctor("list-checks", "--format", "json").stdout)
    codes = [row["code"] for row in rows]
    assert len(codes) == len(set(codes)) >= 20
    for code in codes:
        text = gpudoctor("explain", code.lower()).stdout
        for section in ("What it checks:", "Why it matters:", "How to fix:"):
            assert section in text, (code, section)


def test_fail_on_warning(tmp_path):
    # A hand-made snapshot: a real XML query plus a SYNTHETIC env.json hiding every GPU.
    (tmp_path / "nvidia-smi-q-x.xml").write_text(fixture("A/telegraf-tesla-t4-515.105.01-v11.txt").read_text())
    (tmp_path / "env.json").write_text(json.dumps({"variables": {"CUDA_VISIBLE_DEVICES": ""}, "present": []}))
    lenient = gpudoctor("check", "--format", "json", "--from", str(tmp_path))
    assert statuses(as_json(lenient))["ENV001"] == "warning"
    assert lenient.returncode == 0
    strict = gpudoctor("check", "--format", "json", "--fail-on", "warning", "--from", str(tmp_path))
    assert strict.returncode == 1


def test_an_error_quoting_a_hostile_path_shows_its_escapes_not_obeys_them(tmp_path):
    # SYNTHETIC file name with a clear-screen sequence: the one-line error names it, escaped.
    path = tmp_path / "a\x1b[2Jb.tar.gz"
    path.write_bytes(b"x")
    result = gpudoctor("check", "--from", str(path))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "\x1b" not in result.stderr and "\\x1b[2J" in result.stderr
