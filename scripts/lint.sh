#!/usr/bin/env bash
# Static checks, run by scripts/test.sh before the tests (and on their own: bash scripts/lint.sh):
# ruff lint and format, mypy --strict on gpudoctor/ and checks/, and the import-layer contracts.
# Uses the tools of the venv given as $1 (default .venv, as scripts/test.sh makes it).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-${GPUDOCTOR_TEST_VENV:-.venv}}
status=0

"$venv/bin/ruff" check gpudoctor checks tests scripts benchmarks || status=1
"$venv/bin/ruff" format --check --quiet gpudoctor checks tests scripts benchmarks || status=1

# checks/ installs as the package gpudoctor_checks; give mypy the same name through a link, so it checks
# the built-in checks exactly as the registry imports them.
link_root=$(mktemp -d)
trap 'rm -rf "$link_root"' EXIT
ln -s "$PWD/checks" "$link_root/gpudoctor_checks"
MYPYPATH="$link_root" "$venv/bin/mypy" --no-error-summary gpudoctor "$link_root/gpudoctor_checks" \
  | sed "s#$link_root/gpudoctor_checks#checks#g" || status=1

"$venv/bin/lint-imports" --no-cache || status=1
exit $status
