#!/usr/bin/env bash
# Regenerate the recorded framework-probe outputs in tests/recorded/cpu-container-debian/ (see its README.md).
#
#   scripts/record-framework-probes.sh [FRAMEWORK_PYTHON] [OUT_DIR]
#
# FRAMEWORK_PYTHON: the interpreter of the venv made by scripts/setup-framework-venv.sh (default
# $GPUDOCTOR_FRAMEWORK_PYTHON, else .venv-frameworks/bin/python). Each probe is run exactly as gpudoctor runs
# it (gpudoctor.evidence.framework_probes.run_probe: same arguments, same environment) and its stdout is
# written unchanged to framework-<name>.json. cupy is not installed there: its file is the not-installed answer.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${1:-${GPUDOCTOR_FRAMEWORK_PYTHON:-.venv-frameworks/bin/python}}
out=${2:-tests/recorded/cpu-container-debian}
runner=${GPUDOCTOR_RUNNER_PYTHON:-python3}  # any Python >= 3.9: only gpudoctor's stdlib-only modules are used
case "$python" in /*) ;; *) python="$PWD/$python" ;; esac
[ -x "$python" ] || { echo "error: no interpreter at $python (run scripts/setup-framework-venv.sh first)" >&2; exit 1; }
mkdir -p "$out"

"$runner" - "$python" "$out" <<'PY'
import os
import sys

sys.path.insert(0, os.getcwd())
from gpudoctor.evidence.framework_probes import run_probe  # noqa: E402
from gpudoctor.facts.framework_model import FRAMEWORKS, probe_file_name  # noqa: E402

python, out = sys.argv[1], sys.argv[2]
failed = False
for framework in FRAMEWORKS:
    item = run_probe(framework, python, timeout=120)
    path = os.path.join(out, probe_file_name(framework))
    if item.error or item.json() is None:
        print(f"{framework}: FAILED ({item.error}); {path} left as it was", file=sys.stderr)
        print(item.stderr[-2000:], file=sys.stderr)
        failed = True
        continue
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(item.text)
    print(f"{framework}: wrote {path} (exit {item.exit_code}, {item.duration_s:.2f} s)")
sys.exit(1 if failed else 0)
PY
