#!/usr/bin/env bash
# Create (or reuse) the virtual environment of real CPU frameworks that the live framework-probe tests run in:
# torch (CPU build), tensorflow-cpu and jax (CPU). Idempotent: when the pinned versions are already there it
# only says so. The tests find it through GPUDOCTOR_FRAMEWORK_PYTHON=DIR/bin/python.
#
#   scripts/setup-framework-venv.sh [DIR]          (default: .venv-frameworks)
#
# torch is ALWAYS pinned: an unpinned `pip install torch` would pull gigabytes of CUDA wheels, while the pinned
# version resolves to the CPU build. Override the pins or the base interpreter with the variables below.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:-.venv-frameworks}
base_python=${GPUDOCTOR_FRAMEWORK_BASE_PYTHON:-python3}
torch_version=${TORCH_VERSION:-2.13.0}
tensorflow_version=${TENSORFLOW_CPU_VERSION:-2.21.0}
jax_version=${JAX_VERSION:-0.10.2}
wanted="torch=$torch_version tensorflow-cpu=$tensorflow_version jax=$jax_version"

installed_versions() {
  "$dir/bin/python" - <<'PY' 2>/dev/null || true
import importlib.metadata as m
out = []
for name in ("torch", "tensorflow-cpu", "jax"):
    try:
        version = m.version(name).split("+", 1)[0]
    except m.PackageNotFoundError:
        version = "missing"
    out.append(f"{name}={version}")
print(" ".join(out))
PY
}

if [ -x "$dir/bin/python" ] && [ "$(installed_versions)" = "$wanted" ]; then
  echo "framework venv $dir already has $wanted: nothing to do"
  exit 0
fi

if [ ! -x "$dir/bin/python" ]; then
  echo "creating virtual environment $dir with $base_python ($("$base_python" --version 2>&1))"
  "$base_python" -m venv "$dir"
fi
echo "installing $wanted into $dir (CPU builds)"
"$dir/bin/python" -m pip install -q --disable-pip-version-check \
  "torch==$torch_version" "tensorflow-cpu==$tensorflow_version" "jax==$jax_version"
got=$(installed_versions)
if [ "$got" != "$wanted" ]; then
  echo "error: $dir has $got, wanted $wanted" >&2
  exit 1
fi
echo "framework venv ready: $dir/bin/python ($got)"
echo "run the live probe tests with: GPUDOCTOR_FRAMEWORK_PYTHON=$dir/bin/python"
