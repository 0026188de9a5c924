#!/usr/bin/env python3
"""Wall-clock speed of gpudoctor against its closest peers.

Not part of the test suite: run it by hand, e.g.

    python benchmarks/bench_speed.py --runs 7 --json bench.json

It measures, in one interleaved run (one untimed warm-up of each command first):

  gd-check       gpudoctor check                      (stdout/stderr to /dev/null)
  gd-check-torch gpudoctor check --python TORCH_VENV   (probes the same torch collect_env runs with)
  env-doctor     env-doctor check                     (PyPI 'env-doctor', own venv)
  collect_env    python -m torch.utils.collect_env    (torch==2.13.0, own venv)
  gd-version     gpudoctor --version
  bare-python    python -c pass                       (gpudoctor's interpreter)
  gd-check-from  gpudoctor check --from SNAPSHOT      (written by 'gpudoctor collect')
  gd-topo        gpudoctor topo                       (the topology sources only, and the TOPO checks)

and compares them with the project's speed targets. It also prints what each of
gd-check-torch and collect_env found out about that torch, side by side. Stdlib only. The peers' venvs are
created on first use under --cache-dir; a peer that cannot be installed (no network, ...)
is reported and its ratio skipped.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TORCH_PIN = "2.13.0"  # always pinned: unpinned torch would fetch a multi-GB CUDA build
ENV_DOCTOR_DIST = "env-doctor"
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpudoctor-bench"
INSTALL_TIMEOUT = 1800.0

# (key, description, kind, numerator, denominator, target, comparison)
TARGETS = [
    ("check_vs_env_doctor", "gpudoctor check / env-doctor check", "ratio", "gd-check", "env-doctor", 0.6, "<="),
    ("check_vs_collect_env", "gpudoctor check / collect_env", "ratio", "gd-check", "collect_env", 0.25, "<="),
    (
        "check_torch_vs_collect_env",
        "check --python TORCH / collect_env",
        "ratio",
        "gd-check-torch",
        "collect_env",
        0.6,
        "<=",
    ),
    ("version_overhead_ms", "gpudoctor --version - python -c pass", "diff_ms", "gd-version", "bare-python", 80.0, "<="),
    ("check_from_s", "gpudoctor check --from SNAPSHOT", "abs_s", "gd-check-from", None, 0.5, "<"),
    ("topo_s", "gpudoctor topo", "abs_s", "gd-topo", None, 0.5, "<"),
]


def log(msg: str = "") -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- running


def run_once(argv: list[str], timeout: float, env: dict | None = None) -> tuple[float, int | None]:
    """Wall-clock seconds of one run, and its exit code (None on time-out).

    Not ``subprocess.run(..., timeout=...)``: with a time-out, CPython waits by polling
    waitpid with sleeps of up to 50 ms, which rounds every timing up by tens of ms. Here
    the wait blocks (the child's exit is seen at once) and a timer thread kills the child
    if it runs past TIMEOUT.
    """
    timed_out = threading.Event()

    start = time.perf_counter()
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    ) as proc:

        def _kill() -> None:
            timed_out.set()
            proc.kill()

        watchdog = threading.Timer(timeout, _kill)
        watchdog.daemon = True
        watchdog.start()
        try:
            code: int | None = proc.wait()
        finally:
            watchdog.cancel()
    elapsed = time.perf_counter() - start
    return elapsed, (None if timed_out.is_set() else code)


def capture(argv: list[str], timeout: float = 120.0, env: dict | None = None) -> tuple[int | None, str]:
    """Exit code and combined output of a helper command (not timed)."""
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            text=True,
            errors="replace",
            env=env,
        )
        return proc.returncode, proc.stdout
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or ""
        return None, out if isinstance(out, str) else out.decode(errors="replace")
    except OSError as exc:
        return 127, str(exc)


def tail(text: str, lines: int = 8) -> str:
    """The last LINES of TEXT, indented, after a colon and newline; '' when TEXT is empty."""
    kept = text.strip().splitlines()[-lines:]
    return (":\n" + "\n".join("    " + ln for ln in kept)) if kept else ""


# --------------------------------------------------------------------------- interpreters


def script_interpreter(script: Path) -> Path:
    """The Python a console script runs under (its shebang, or the python beside it)."""
    try:
        with open(script, "rb") as fh:
            head = fh.read(4096).decode(errors="replace").splitlines()
    except OSError:
        head = []
    if head and head[0].startswith("#!"):
        words = head[0][2:].strip().split()
        if words and "python" in Path(words[0]).name:
            return Path(words[0])
        # pip's long-path form: "#!/bin/sh" then "'''exec' /path/python "$0" "$@"".
        for line in head[1:3]:
            if line.startswith("'''exec'"):
                parts = line.split()
                if len(parts) > 1:
                    return Path(parts[1])
    for name in ("python", "python3"):
        sibling = script.parent / name
        if sibling.exists():
            return sibling
    return Path(sys.executable)


def venv_bin(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin")


def ensure_venv(venv: Path, requirements: list[str], base_python: str, probe: str) -> dict:
    """Create VENV with REQUIREMENTS unless it already passes PROBE (python code).

    Returns {"ok", "python", "installed_now", "install_s", "error"}.
    """
    python = venv_bin(venv) / "python"
    info: dict = {
        "ok": False,
        "python": str(python),
        "installed_now": False,
        "install_s": None,
        "error": None,
        "venv": str(venv),
    }
    if python.exists() and capture([str(python), "-c", probe])[0] == 0:
        info["ok"] = True
        return info

    log(f"  setting up {venv} with: pip install {' '.join(requirements)} (first use only)")
    start = time.perf_counter()
    if not python.exists():
        code, out = capture([base_python, "-m", "venv", str(venv)], timeout=300)
        if code != 0:
            info["error"] = f"'{base_python} -m venv' failed (exit {code}){tail(out)}"
            return info
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PIP_REQUIRE_VIRTUALENV", None)
    code, out = capture(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", *requirements],
        timeout=INSTALL_TIMEOUT,
        env=env,
    )
    info["install_s"] = round(time.perf_counter() - start, 2)
    info["installed_now"] = True
    if code != 0:
        info["error"] = (
            f"pip install {' '.join(requirements)} failed "
            f"({'timed out' if code is None else f'exit {code}'}; no network?){tail(out)}"
        )
        return info
    code, out = capture([str(python), "-c", probe])
    if code != 0:
        info["error"] = f"installed, but the check of the install failed{tail(out)}"
        return info
    log(f"  ready in {info['install_s']:.1f} s")
    info["ok"] = True
    return info


def setup_env_doctor(cache: Path, base_python: str) -> dict:
    probe = f"import importlib.metadata as m; m.distribution({ENV_DOCTOR_DIST!r})"
    info = ensure_venv(cache / "env-doctor-venv", [ENV_DOCTOR_DIST], base_python, probe)
    if not info["ok"]:
        return info
    # Find its console script from the installed package's own metadata.
    _code, out = capture(
        [
            info["python"],
            "-c",
            "import importlib.metadata as m, json\n"
            f"d = m.distribution({ENV_DOCTOR_DIST!r})\n"
            "print(json.dumps({'version': d.version, 'scripts': sorted(e.name for e in "
            "d.entry_points if e.group == 'console_scripts')}))",
        ]
    )
    try:
        meta = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        info.update(ok=False, error=f"could not read {ENV_DOCTOR_DIST}'s metadata{tail(out)}")
        return info
    info["version"] = meta["version"]
    scripts = meta["scripts"]
    name = ENV_DOCTOR_DIST if ENV_DOCTOR_DIST in scripts else (scripts[0] if scripts else None)
    if name is None or not (venv_bin(Path(info["venv"])) / name).exists():
        info.update(
            ok=False, error=f"{ENV_DOCTOR_DIST} {meta['version']} has no console script (entry points: {scripts})"
        )
        return info
    info["console_scripts"] = scripts
    info["script"] = str(venv_bin(Path(info["venv"])) / name)
    return info


def setup_torch(cache: Path, base_python: str) -> dict:
    probe = (
        "import importlib.metadata as m, sys; v = m.version('torch'); "
        f"sys.exit(0 if v.split('+')[0] == {TORCH_PIN!r} else 1)"
    )
    info = ensure_venv(cache / "torch-venv", [f"torch=={TORCH_PIN}"], base_python, probe)
    if info["ok"]:
        _, out = capture([info["python"], "-c", "import importlib.metadata as m; print(m.version('torch'))"])
        info["version"] = out.strip().splitlines()[-1] if out.strip() else "?"
    return info


# --------------------------------------------------------------------------- machine


def machine_info(gd_python: Path) -> dict:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    _, gd_py_version = capture([str(gd_python), "-c", "import sys; print(sys.version.split()[0])"])
    info = {
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "hostname": platform.node(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "nproc": usable,
        "bench_python": platform.python_version(),
        "gpudoctor_python": gd_py_version.strip(),
        "nvidia_smi": shutil.which("nvidia-smi"),
    }
    if hasattr(os, "getloadavg"):
        info["loadavg_1_5_15"] = [round(x, 2) for x in os.getloadavg()]
    try:
        with open("/proc/meminfo") as fh:
            kib = int(fh.readline().split()[1])
        info["mem_gib"] = round(kib / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return info


# --------------------------------------------------------------------------- report


def fmt_s(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def evaluate(results: dict) -> list[dict]:
    rows = []
    for key, desc, kind, num, den, target, cmp in TARGETS:
        row = {
            "key": key,
            "what": desc,
            "target": target,
            "cmp": cmp,
            "value": None,
            "unit": {"ratio": "x", "diff_ms": "ms", "abs_s": "s"}[kind],
            "verdict": "SKIP",
            "why": None,
        }
        missing = [n for n in (num, den) if n and results.get(n, {}).get("median_s") is None]
        if missing:
            row["why"] = "; ".join(f"{n}: {results.get(n, {}).get('skipped') or 'no timing'}" for n in missing)
            rows.append(row)
            continue
        a = results[num]["median_s"]
        if kind == "ratio":
            value = a / results[den]["median_s"]
        elif kind == "diff_ms":
            value = (a - results[den]["median_s"]) * 1000.0
        else:
            value = a
        ok = value <= target if cmp == "<=" else value < target
        row.update(value=round(value, 4), verdict="PASS" if ok else "MISS")
        rows.append(row)
    return rows


def print_report(report: dict) -> None:
    m = report["machine"]
    print()
    print(f"gpudoctor speed benchmark  ({report['runs']} timed runs each, after 1 warm-up; medians used)")
    print(
        f"machine: {m['platform']}, nproc={m['nproc']} (cpu_count={m['cpu_count']})"
        + (f", {m['mem_gib']} GiB RAM" if "mem_gib" in m else "")
        + f", nvidia-smi: {'yes' if m['nvidia_smi'] else 'no'}"
        + (
            f", load avg at start {m['loadavg_start'][0]:g} / end {m['loadavg_1_5_15'][0]:g}"
            if m.get("loadavg_start") and m.get("loadavg_1_5_15")
            else ""
        )
    )
    print(
        f"python:  bench {m['bench_python']}, gpudoctor's {m['gpudoctor_python']}  |  "
        f"gpudoctor {report['versions'].get('gpudoctor', '?')}, "
        f"env-doctor {report['versions'].get('env-doctor') or 'n/a'}, "
        f"torch {report['versions'].get('torch') or 'n/a'}"
    )
    print()
    head = f"{'benchmark':<15} {'command':<44} {'median s':>9} {'min s':>8} {'max s':>8}  exit"
    print(head)
    print("-" * len(head))
    for name, r in report["results"].items():
        cmd = r["display"]
        if len(cmd) > 44:
            cmd = cmd[:41] + "..."
        if r.get("skipped"):
            print(f"{name:<15} {cmd:<44} {'skipped':>9}  ({r['skipped']})")
            continue
        codes = sorted({("timeout" if c is None else str(c)) for c in r["exit_codes"]})
        print(
            f"{name:<15} {cmd:<44} {fmt_s(r['median_s']):>9} {fmt_s(r['min_s']):>8} "
            f"{fmt_s(r['max_s']):>8}  {','.join(codes)}"
        )
    print()
    head = f"{'target':<40} {'value':>10} {'goal':>10}  verdict"
    print(head)
    print("-" * len(head))
    for t in report["targets"]:
        unit = t["unit"]
        goal = f"{t['cmp']} {t['target']:g}{' ' + unit if unit != 'x' else ''}"
        if t["value"] is None:
            print(f"{t['what']:<40} {'-':>10} {goal:>10}  SKIP ({t['why']})")
            continue
        if unit == "x":
            val = f"{t['value']:.3f}"
        elif unit == "ms":
            val = f"{t['value']:.1f} ms"
        else:
            val = f"{t['value']:.3f} s"
        print(f"{t['what']:<40} {val:>10} {goal:>10}  {t['verdict']}")
    for note in report["notes"]:
        print(f"note: {note}")
    print()


# --------------------------------------------------------------------------- what each found out

# (question, where gpudoctor's JSON answers it, the collect_env line that answers it)
QUESTIONS = [
    ("torch version", ("TORCH001", "version"), "PyTorch version"),
    ("build CUDA / CPU-only", ("TORCH002", "cpu_only"), "CUDA used to build PyTorch"),
    ("cuDNN of the build", ("TORCH001", "cudnn"), None),
    ("CUDA available", ("TORCH001", "is_available"), "Is CUDA available"),
    ("compiled arch list (empty on a CPU build)", ("TORCH001", "arch_list"), None),
    ("which Python was probed", ("FW001", "python"), None),
    ("how torch was installed (installer / index)", ("TORCH001", "installer"), None),
    ("GPU names", ("GPU001", None), "GPU models and configuration"),
    ("driver version", (None, "driver_version"), "Nvidia driver version"),
    ("TensorFlow / JAX / CuPy probed too", ("FW001", "frameworks"), None),
    ("OS", (None, "os"), "OS"),
    ("Python version", ("FW001", "version"), "Python version"),
    ("CUDA toolkit on the machine", ("CUDA001", "toolkits"), "CUDA runtime version"),
    ("GCC version (not a GPU question)", ("-", None), "GCC version"),
    ("CPU model (not a GPU question)", ("-", None), "CPU"),
    ("fix command when something is wrong", ("*", "fix"), None),
]


def found_out(gd: Path, torch_python: str, timeout: float) -> list[dict]:
    """Run each once more and record, per question, whether its output answers it."""
    _, env_text = capture([torch_python, "-m", "torch.utils.collect_env"], timeout)
    _code, gd_text = capture([str(gd), "check", "--python", torch_python, "--format", "json"], timeout)
    try:
        report = json.loads(gd_text[gd_text.index("{") :])
    except ValueError:
        report = {}
    by_code = {r.get("code"): r for r in report.get("results", [])}
    rows = []
    for question, (code_key, data_key), env_key in QUESTIONS:
        if code_key == "-":
            gd_has = False
        elif code_key == "*":
            gd_has = any(f.get("fix") for r in report.get("results", []) for f in r.get("findings", []))
            gd_has = gd_has or "needs nothing fixed"
        elif code_key is None:
            gd_has = bool(report.get("machine", {}).get(data_key))
        else:
            result = by_code.get(code_key, {})
            gd_has = (
                result.get("status") not in (None, "not_applicable")
                if data_key is None
                else result.get("data", {}).get(data_key) is not None
            )
        env_has = None
        if env_key:
            lines = env_text.splitlines()
            index = next((i for i, ln in enumerate(lines) if ln.strip().startswith(env_key)), None)
            line = lines[index] if index is not None else ""
            value = line.split(":", 1)[1].strip() if ":" in line else ""
            if index is not None and not value and index + 1 < len(lines):
                value = lines[index + 1].strip()  # a block ("CPU:" then its lines)
            env_has = bool(value) and value not in ("Could not collect", "N/A")
        rows.append({"question": question, "gpudoctor": gd_has, "collect_env": bool(env_has)})
    return rows


def print_found_out(rows: list[dict]) -> None:
    print(f"{'what each found out about the torch venv':<46} {'gpudoctor':>10} {'collect_env':>12}")
    for row in rows:
        gd = row["gpudoctor"] if isinstance(row["gpudoctor"], str) else ("yes" if row["gpudoctor"] else "no")
        print(f"{row['question']:<46} {gd:>10} {'yes' if row['collect_env'] else 'no':>12}")
    print(
        f"answered: gpudoctor {sum(1 for r in rows if r['gpudoctor'])}, "
        f"collect_env {sum(1 for r in rows if r['collect_env'])} of {len(rows)}"
    )
    print()


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--runs", type=int, default=7, help="timed runs of each command (default 7, at least 5)")
    p.add_argument("--gpudoctor", metavar="PATH", help="gpudoctor executable (default: the one next to this Python)")
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        type=Path,
        default=DEFAULT_CACHE,
        help=f"where the peers' venvs live (default: {DEFAULT_CACHE})",
    )
    p.add_argument(
        "--python",
        metavar="EXE",
        default=sys.executable,
        help="Python that creates the peers' venvs (default: this one)",
    )
    p.add_argument("--timeout", type=float, default=120.0, help="limit for one run, seconds (default 120)")
    p.add_argument("--json", metavar="PATH", type=Path, help="also write the numbers as JSON to PATH")
    p.add_argument("--no-peers", action="store_true", help="measure gpudoctor only (skip env-doctor, torch)")
    args = p.parse_args(argv)
    if args.runs < 5:
        p.error("--runs must be at least 5")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    if args.gpudoctor:
        gd = Path(args.gpudoctor)
        if not gd.exists() and shutil.which(args.gpudoctor):
            gd = Path(shutil.which(args.gpudoctor))
    else:
        gd = Path(sys.executable).parent / ("gpudoctor.exe" if os.name == "nt" else "gpudoctor")
    if not gd.exists():
        log(f"error: no gpudoctor executable at {gd} (use --gpudoctor PATH)")
        return 2
    gd = gd.absolute()
    gd_python = script_interpreter(gd)

    load_start = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    notes: list[str] = []
    # Time every command as installed: pip writes byte-code caches, and a user's Python uses them. With
    # PYTHONDONTWRITEBYTECODE set (as in some sandboxes) gpudoctor would recompile itself on every run.
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        notes.append(
            "PYTHONDONTWRITEBYTECODE was set; unset for the timed commands (as installed, byte-code caches allowed)"
        )
    versions: dict = {}
    code, out = capture([str(gd), "--version"])
    if code != 0:
        log(f"error: '{gd} --version' failed (exit {code}){tail(out)}")
        return 2
    versions["gpudoctor"] = out.strip().split()[-1] if out.strip() else "?"
    log(f"gpudoctor: {gd} ({versions['gpudoctor']}), interpreter {gd_python}")

    # -- peers
    peers: dict[str, dict] = {}
    if args.no_peers:
        skip_why = "skipped (--no-peers)"
        peers["env-doctor"] = {"ok": False, "error": skip_why}
        peers["torch"] = {"ok": False, "error": skip_why}
    else:
        args.cache_dir.mkdir(parents=True, exist_ok=True)
        log("env-doctor:")
        peers["env-doctor"] = setup_env_doctor(args.cache_dir, args.python)
        log("torch:")
        peers["torch"] = setup_torch(args.cache_dir, args.python)
    for name, info in peers.items():
        if info.get("ok"):
            versions[name] = info.get("version")
        else:
            versions[name] = None
            msg = f"{name} unavailable: {info.get('error')}"
            log("  " + msg)
            notes.append(msg.splitlines()[0])
        if info.get("installed_now") and info.get("install_s") is not None:
            notes.append(f"{name} venv installed this run in {info['install_s']:.1f} s")

    # -- snapshot for check --from
    tmp = Path(tempfile.mkdtemp(prefix="gpudoctor-bench-"))
    snap = tmp / "snap"
    collect_s, collect_code = run_once([str(gd), "collect", "-o", str(snap)], args.timeout)
    snapshot_ok = collect_code == 0 and snap.exists()
    if not snapshot_ok:
        notes.append(f"'gpudoctor collect -o {snap}' failed (exit {collect_code}); check --from skipped")
    log(f"snapshot: gpudoctor collect -o {snap} took {collect_s:.3f} s (exit {collect_code})")

    # -- what to time: name -> (argv, display)
    benches: dict[str, dict] = {
        "gd-check": {"argv": [str(gd), "check"], "display": "gpudoctor check"},
        "gd-check-torch": {
            "argv": [str(gd), "check", "--python", peers["torch"].get("python", "python")],
            "display": "gpudoctor check --python TORCH_VENV",
            "skipped": None if peers["torch"].get("ok") else "torch venv unavailable",
        },
        "env-doctor": {
            "argv": [peers["env-doctor"].get("script", "env-doctor"), "check"],
            "display": "env-doctor check",
            "skipped": None if peers["env-doctor"].get("ok") else "env-doctor unavailable",
        },
        "collect_env": {
            "argv": [peers["torch"].get("python", "python"), "-m", "torch.utils.collect_env"],
            "display": "python -m torch.utils.collect_env",
            "skipped": None if peers["torch"].get("ok") else "torch venv unavailable",
        },
        "gd-version": {"argv": [str(gd), "--version"], "display": "gpudoctor --version"},
        "bare-python": {"argv": [str(gd_python), "-c", "pass"], "display": "python -c pass (gpudoctor's)"},
        "gd-check-from": {
            "argv": [str(gd), "check", "--from", str(snap)],
            "display": "gpudoctor check --from SNAPSHOT",
            "skipped": None if snapshot_ok else "no snapshot",
        },
        "gd-topo": {"argv": [str(gd), "topo"], "display": "gpudoctor topo"},
    }
    active = [n for n, b in benches.items() if not b.get("skipped")]

    try:
        log("warm-up (untimed):")
        for name in active:
            b = benches[name]
            secs, code = run_once(b["argv"], args.timeout)
            b["warmup_s"], b["warmup_exit"] = round(secs, 4), code
            log(f"  {name:<14} {secs:7.3f} s  exit {'timeout' if code is None else code}")
        # Interleaved rounds: drift in machine load hits every command alike.
        for b in benches.values():
            b["times"], b["codes"] = [], []
        for i in range(args.runs):
            for name in active:
                secs, code = run_once(benches[name]["argv"], args.timeout)
                benches[name]["times"].append(secs)
                benches[name]["codes"].append(code)
            log(f"round {i + 1}/{args.runs}: " + "  ".join(f"{n}={benches[n]['times'][-1]:.3f}" for n in active))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    results: dict[str, dict] = {}
    for name, b in benches.items():
        r: dict = {"display": b["display"], "argv": b["argv"]}
        if b.get("skipped"):
            r.update(skipped=b["skipped"], median_s=None, min_s=None, max_s=None)
        else:
            good = [t for t, c in zip(b["times"], b["codes"]) if c is not None]
            if len(good) < len(b["times"]):
                notes.append(f"{name}: {len(b['times']) - len(good)} run(s) hit the {args.timeout:g} s time-out")
            r.update(
                times_s=[round(t, 4) for t in b["times"]],
                exit_codes=b["codes"],
                warmup_s=b["warmup_s"],
                warmup_exit=b["warmup_exit"],
                median_s=round(statistics.median(good), 4) if good else None,
                min_s=round(min(good), 4) if good else None,
                max_s=round(max(good), 4) if good else None,
            )
            if not good:
                r["skipped"] = "every run timed out"
            nonzero = sorted({c for c in b["codes"] if c not in (0, None)})
            if nonzero:
                notes.append(f"{name} exited {','.join(map(str, nonzero))} (timed anyway)")
        results[name] = r

    report = {
        "runs": args.runs,
        "timeout_s": args.timeout,
        "machine": {**machine_info(gd_python), "loadavg_start": load_start},
        "gpudoctor": str(gd),
        "versions": versions,
        "snapshot": {"collect_s": round(collect_s, 4), "collect_exit": collect_code},
        "peers": {k: {kk: vv for kk, vv in v.items() if kk != "python"} for k, v in peers.items()},
        "results": results,
        "notes": notes,
    }
    report["targets"] = evaluate(results)
    if peers["torch"].get("ok"):
        report["found_out"] = found_out(gd, peers["torch"]["python"], args.timeout)
    print_report(report)
    if report.get("found_out"):
        print_found_out(report["found_out"])
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
