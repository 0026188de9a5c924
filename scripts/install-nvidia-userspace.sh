#!/usr/bin/env bash
# Install the real NVIDIA user space (nvidia-smi, libnvidia-ml1, libcuda1) from Debian's non-free
# component, without the kernel driver: with no kernel module they fail exactly as on a machine whose
# driver isn't loaded, which is what the integration tests exercise. Needs root and apt; idempotent.
set -euo pipefail

packages=(nvidia-smi libnvidia-ml1 libcuda1)
if dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  echo "NVIDIA user space already installed"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "skipping NVIDIA user space: needs root and apt-get" >&2
  exit 1
fi
sources=/etc/apt/sources.list.d/debian.sources
if [ -f "$sources" ] && ! grep -q 'non-free' "$sources"; then
  # Debian ships nvidia-smi in non-free; enable it next to main.
  sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' "$sources"
fi
apt-get update -q
# --no-install-recommends keeps apt from pulling the whole driver and DKMS (minutes).
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}"
