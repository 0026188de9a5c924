#!/usr/bin/env bash
# Install what the fleet tests drive for real: Slurm and munge (the local multi-node cluster of
# ../shared/tools/slurm-local) and the distro's Chromium (the fleet report's HTML page in a headless browser,
# driven by Playwright: Playwright's own browser download is not reachable here). Debian packages, with
# --no-install-recommends. Needs root and apt; idempotent. Without them those tests skip, saying why.
# A system package: asks first, like install-nvidia-userspace.sh (see scripts/host-changes.sh).
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ./host-changes.sh

packages=(slurm-wlm munge chromium)
if dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "skipping Slurm and Chromium: needs root and apt-get" >&2
  exit 1
fi
may_change_host "install ${packages[*]} with apt-get (the Slurm and browser tests)" || exit 1
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}" >/dev/null 2>&1; then
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}" >/dev/null
fi
