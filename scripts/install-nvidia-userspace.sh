#!/usr/bin/env bash
# Install the real NVIDIA user space (nvidia-smi, libnvidia-ml1, libcuda1) from Debian's non-free
# component, without the kernel driver: with no kernel module they fail exactly as on a machine whose
# driver isn't loaded, which is what the integration tests exercise. Needs root and apt; idempotent.
#
# It changes the host (apt sources, system packages), so it asks first (scripts/host-changes.sh): it runs
# only in CI (GPUDOCTOR_INSTALL_SYSTEM_PACKAGES=1), in a container, or when you answer yes; and never over
# an NVIDIA driver installed by other means.
#   --decide   print what it would do and why, change nothing (exit 0: it would install)
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ./host-changes.sh

decide_only=0
[ "${1:-}" = --decide ] && decide_only=1

packages=(nvidia-smi libnvidia-ml1 libcuda1)
if [ -z "$host_root" ] && dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  echo "NVIDIA user space already installed"
  exit 0
fi
if why=$(foreign_nvidia_driver); then
  echo "skipping NVIDIA user space: $why; Debian's 535 user space must not replace it" >&2
  exit 1
fi
if [ "$decide_only" = 0 ] && { [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; }; then
  echo "skipping NVIDIA user space: needs root and apt-get" >&2
  exit 1
fi
sources="$host_root/etc/apt/sources.list.d/debian.sources"
what="install ${packages[*]} with apt-get (no kernel driver)"
if [ -f "$sources" ] && ! grep -q 'non-free' "$sources"; then
  what="enable Debian's non-free component in $sources (a backup is kept beside it) and $what"
fi
may_change_host "$what" || exit 1
if [ "$decide_only" = 1 ]; then
  echo "would $what"
  exit 0
fi

if [ -f "$sources" ] && ! grep -q 'non-free' "$sources"; then
  # Debian ships nvidia-smi in non-free; enable it next to main, keeping the file as it was beside it.
  cp -p "$sources" "$sources.gpudoctor-backup"
  sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' "$sources"
fi
apt-get update -q
# --no-install-recommends keeps apt from pulling the whole driver and DKMS (minutes).
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}"
