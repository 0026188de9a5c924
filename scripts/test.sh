#!/usr/bin/env bash
# Run the whole test suite, installing what it needs: the real NVIDIA user space for the integration
# tier (when root on Debian/Ubuntu), a virtual environment with gpudoctor and its test extras; then the
# static checks (scripts/lint.sh) and pytest.
# Extra arguments go to pytest, e.g. scripts/test.sh -k snapshot
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-nvidia-userspace.sh \
  || echo "note: integration tests that need the real nvidia-smi / NVML will be skipped" >&2
bash scripts/install-linters.sh \
  || echo "note: the shellcheck tests of the generated install scripts will be skipped" >&2
bash scripts/install-fleet-tools.sh \
  || echo "note: the Slurm cluster and headless-browser tests of fleets will be skipped" >&2

venv=${GPUDOCTOR_TEST_VENV:-.venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
log=$(mktemp)
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check -e ".[test]" >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
rm -f "$log"

# Static checks first (ruff, mypy --strict, import layers): a type error fails the run like a failing test.
# GPUDOCTOR_SKIP_LINT=1 skips them for a quick local test loop; CI never sets it.
if [ "${GPUDOCTOR_SKIP_LINT:-0}" != 1 ]; then
  bash scripts/lint.sh "$venv"
fi

# Real frameworks for the live probe tests: torch (pinned, CPU build from local disk), tensorflow-cpu, jax.
# GPUDOCTOR_SKIP_FRAMEWORKS=1 skips this (those tests then skip, saying why).
if [ "${GPUDOCTOR_SKIP_FRAMEWORKS:-0}" != 1 ]; then
  frameworks=${GPUDOCTOR_FRAMEWORK_VENV:-.venv-frameworks}
  bash scripts/setup-framework-venv.sh "$frameworks"
  case "$frameworks" in /*) ;; *) frameworks="$PWD/$frameworks" ;; esac
  export GPUDOCTOR_FRAMEWORK_PYTHON="$frameworks/bin/python"
fi
exec "$venv/bin/python" -m pytest "$@"
