#!/usr/bin/env bash
# Install script for Red Hat Enterprise Linux 8, written by gpudoctor install-script.
#
# Steps: driver toolkit cudnn. Each one checks first and is skipped when already done; run it again any time.
#   --dry-run prints every command without running it; --yes runs unattended; --only STEP runs one step;
#   --help lists the options. sudo is used only when not root. Nothing downloaded is piped into a shell,
#   and every repository key is checked against the fingerprint NVIDIA publishes before it is trusted.
#
# Machine: synthetic; driver unknown; GPUs unknown
# Choices:
#   distro: Red Hat Enterprise Linux 8
#     --distro
#   driver: nvidia-open (dnf module nvidia-driver:580-open) from NVIDIA's rhel8 repository (branch R580, open modules)
#     570.26 or newer: CUDA 12.8 needs it; no GPU known: a Turing or newer GPU is assumed; for an older GPU run
#     this on its machine; R580 pinned: NVIDIA's newest Long Term Support Branch [BRANCH]; the module stream pins
#     the branch [DRV_GUIDE] [DNF_STREAMS]
#   CUDA toolkit: cuda-toolkit-12-8
#     asked for; the driver needs >= 570.26 [CUDA_REPO]
#   cuDNN: cudnn9-cuda-12
#     cuDNN 9 for CUDA 12.x (the toolkit) [CUDNN_GUIDE]
# Knowledge base: as of 2026-11-22. Sources:
#   [BRANCH] NVIDIA data-center docs, 'Supported Drivers and CUDA Toolkit Versions', Table 2 'CUDA and Drivers'
#   (branch designations and end of life), as compiled in shared/reference/compat.md section 1d
#   (https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html)
#   [CUDA_REPO] CUDA Installation Guide for Linux, network repository installation: cuda-keyring_1.1-1_all.deb
#   (apt), cuda-<distro>.repo (dnf) under https://developer.download.nvidia.com/compute/cuda/repos/
#   [CUDNN_GUIDE] cuDNN installation guide (Linux, package manager): `cudnn9-cuda-12` / `cudnn9-cuda-13` meta
#   packages from the CUDA network repository
#   [DNF_STREAMS] NVIDIA/yum-packaging-dkms-nvidia README (https://github.com/NVIDIA/yum-packaging-dkms-nvidia):
#   RHEL8 streams latest-dkms and XXX-dkms, open-kernel-module streams (515 and newer) open-dkms and XXX-open; 'the
#   XXX and XXX-dkms streams/flavors lock driver updates to the specified driver branch'. Driver Installation Guide,
#   Kernel Modules, Table 5: 'dnf module enable nvidia-driver:580-open' + 'dnf install nvidia-open' installs a
#   specific branch; Advanced Options
#   (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/advanced-options.html): cuda-drivers is the
#   proprietary flavour ('To switch from open to proprietary: dnf install --allowerasing cuda-drivers')
#   [DRV_GUIDE] NVIDIA Driver Installation Guide, Kernel Modules: open GPU kernel module installation table
#   (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/ , r580-r620 editions): RHEL/Rocky/Alma 8-9
#   and Amazon Linux 2023 `dnf module enable nvidia-driver:open-dkms` + `dnf install nvidia-open`, a specific branch
#   `dnf module enable nvidia-driver:580-open`; Ubuntu/Debian `apt install nvidia-open`; open modules need Turing
#   (7.5)+, the proprietary ones are required for Maxwell, Pascal and Volta
#   [KEY_ROTATION] NVIDIA/cuda-repo-management#4 'GPG signing key rotation for CUDA repositories' (2022-04-28):
#   Debian-based repos sign with 3bf863cc, RPM-based with d42d0685; full apt fingerprint
#   EB693B3035CD5710E231E123A4B469963BF863CC (cudatools@nvidia.com, also pinned by
#   NVIDIA/ansible-collection-dpu-ops#3 'A4B469963BF863CC - cudatools')
#   [RPM_KEY] NVIDIA/cuda-repo-management SIGNATURES.md
#   (https://github.com/NVIDIA/cuda-repo-management/blob/main/SIGNATURES.md): the rhel8 repository metadata verified
#   with, and dnf's 'Importing GPG key 0xD42D0685' prompt showing, fingerprint 610C 7B14 E068 A878 070D A4E9 9CD0
#   A493 D42D 0685 (cudatools <cudatools@nvidia.com>); the same file gives the apt key as EB693B30...3BF863CC. Red
#   Hat's Conforma release policies allow NVIDIA CUDA RPMs by the long key id 9cd0a493d42d0685
# Regenerate: gpudoctor install-script --distro rhel8 --cuda-toolkit 12.8 --cudnn --framework none
set -euo pipefail

readonly TARGET_NAME='Red Hat Enterprise Linux 8'
readonly OS_IDS=rhel
readonly OS_VERSION=8
readonly STEPS='driver toolkit cudnn'
DRY_RUN=0
ASSUME_YES=0
FORCE_OS=0
ONLY=""
VENV=${GPUDOCTOR_VENV:-"${HOME}"/.venvs/gpu}
DONE=()
SKIPPED=()
REBOOT_NEEDED=0

usage() {
  cat <<USAGE
Usage: $0 [--dry-run] [--yes] [--only STEP[,STEP...]] [--venv PATH] [--force-os]

Sets up NVIDIA GPU software on ${TARGET_NAME}. Steps in this script: ${STEPS}
Every step checks first and is skipped when already done.

  --dry-run      print every command (prefixed with +) without running any
  --yes, -y      unattended: no questions, apt/dnf run with -y
  --only STEPS   run only these steps (comma separated, from: ${STEPS})
  --venv PATH    where the Python venv goes (default: ${VENV})
  --force-os     run even though /etc/os-release names another distro
  -h, --help     this help

Environment: GPUDOCTOR_PIP_INDEX_URL replaces the pip index (empty: pip's own configuration decides);
PIP_* variables reach pip unchanged; GPUDOCTOR_VENV sets the default venv path.
USAGE
}

while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --yes | -y) ASSUME_YES=1 ;;
    --force-os) FORCE_OS=1 ;;
    --only) shift; ONLY=${1:-} ;;
    --only=*) ONLY=${1#--only=} ;;
    --venv) shift; VENV=${1:-} ;;
    --venv=*) VENV=${1#--venv=} ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
for step in ${ONLY//,/ }; do
  case " ${STEPS} " in
    *" ${step} "*) ;;
    *) echo "--only: no step '${step}' in this script (steps: ${STEPS})" >&2; exit 2 ;;
  esac
done

say() { printf '%s\n' "$*"; }

# The one place a command is carried out: echoed as "+ cmd", executed unless --dry-run.
run() {
  printf '+ %s\n' "$*"
  if [ "$DRY_RUN" -eq 0 ]; then
    "$@"
  fi
}

# sudo only when not root already.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    run "$@"
  else
    run sudo "$@"
  fi
}

wanted() {
  [ -z "$ONLY" ] && return 0
  case ",${ONLY}," in
    *",$1,"*) return 0 ;;
  esac
  return 1
}

confirm() {
  if [ "$ASSUME_YES" -eq 1 ] || [ "$DRY_RUN" -eq 1 ]; then
    return 0
  fi
  local answer=""
  read -r -p "$1 [y/N] " answer || answer=""
  case "$answer" in
    y | Y | yes | YES) return 0 ;;
  esac
  return 1
}

skip() {
  say "= skip $1: $2"
  SKIPPED+=("$1: $2")
}

# version_ge A B: A >= B in version order.
version_ge() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

in_wsl() {
  [ -e /proc/sys/fs/binfmt_misc/WSLInterop ] || grep -qi microsoft /proc/version 2>/dev/null
}

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Downloads go to a file first (never into a shell), over HTTPS only.
download() {
  run curl -fsSL --proto '=https' --tlsv1.2 -o "$2" "$1"
}

# verify_key FILE FINGERPRINT...: EVERY key in FILE must be one of the full fingerprints NVIDIA published, and
# there must be at least one; an extra key appended to the file, or a file gpg cannot read, stops the script
# before any key in it is trusted. The fingerprints read are each key's primary one (the "fpr" record right after
# a "pub" record); subkeys belong to their key. A file gpg cannot read whole gives none.
verify_key() {
  local file=$1 fingerprints fpr expected known count=0
  shift
  fingerprints=$(gpg --batch --show-keys --with-colons "$file" 2>/dev/null |
    awk -F: '$1 == "pub" { primary = 1; next } $1 == "fpr" && primary { print $10; primary = 0 } $1 == "sub" { primary = 0 }') ||
    fingerprints=""
  for fpr in $fingerprints; do
    known=0
    for expected in "$@"; do
      if [ "$fpr" = "$expected" ]; then
        known=1
      fi
    done
    if [ "$known" -ne 1 ]; then
      say "error: key file $file holds key ${fpr}, not one of the published ${*}: not trusting it" >&2
      exit 1
    fi
    count=$((count + 1))
  done
  if [ "$count" -eq 0 ]; then
    say "error: key file $file holds no key gpg can read, expected ${*}: not trusting it" >&2
    exit 1
  fi
  say "key $file: all ${count} key(s) match the published fingerprint(s)"
}

# check_repo_lines FILE EXPECTED...: every line of the repository definition FILE that is not blank or a comment
# must be one of the EXPECTED lines (known text), and at least one must be there; anything else stops the script
# before the definition is used. The unexpected line is not printed (it is someone else's text).
check_repo_lines() {
  local file=$1 line expected known count=0 number=0
  shift
  if [ ! -f "$file" ] || [ -L "$file" ]; then
    say "error: repository definition $file is missing or not a plain file: not using it" >&2
    exit 1
  fi
  while IFS= read -r line || [ -n "$line" ]; do
    number=$((number + 1))
    line=${line%$'\r'}
    case "$line" in
      "" | "#"*) continue ;;
    esac
    known=0
    for expected in "$@"; do
      if [ "$line" = "$expected" ]; then
        known=1
      fi
    done
    if [ "$known" -ne 1 ]; then
      say "error: repository definition $file line ${number} is not one this script expects: not using it" >&2
      exit 1
    fi
    count=$((count + 1))
  done <"$file"
  if [ "$count" -eq 0 ]; then
    say "error: repository definition $file is empty: not using it" >&2
    exit 1
  fi
}

write_file() {
  printf '%s\n' "$2" >"$1"
}

os_guard() {
  local id="" version=""
  if [ -r /etc/os-release ]; then
    # shellcheck source=/dev/null
    id=$(. /etc/os-release && printf '%s' "${ID:-}")
    # shellcheck source=/dev/null
    version=$(. /etc/os-release && printf '%s' "${VERSION_ID:-}")
  fi
  local ok=0
  case " ${OS_IDS} " in
    *" ${id} "*)
      case "$version" in
        "$OS_VERSION" | "$OS_VERSION".*) ok=1 ;;
      esac
      ;;
  esac
  if [ "$ok" -eq 1 ]; then
    say "OS: ${id} ${version} (this script is for ${TARGET_NAME})"
  elif [ "$FORCE_OS" -eq 1 ]; then
    say "warning: this is '${id:-unknown} ${version}', the script is for ${TARGET_NAME}; going on (--force-os)" >&2
  else
    say "error: this is '${id:-unknown} ${version}', the script is for ${TARGET_NAME}." >&2
    say "Generate one for this machine (gpudoctor install-script) or pass --force-os." >&2
    exit 3
  fi
}

pkg_installed() {
  rpm -q "$1" >/dev/null 2>&1
}

pkg_install() {
  if [ "$ASSUME_YES" -eq 1 ]; then
    as_root dnf install -y "$@"
  else
    as_root dnf install "$@"
  fi
}

ensure_prereqs() {
  local missing=() pkg
  for pkg in ca-certificates curl gnupg2; do
    pkg_installed "$pkg" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    pkg_install "${missing[@]}"
  fi
}

# NVIDIA's CUDA repository: its key is checked against the full fingerprint NVIDIA published before rpm imports
# it (RPM_KEY); dnf then checks every package's signature with it. The .repo file is written here from known
# text (never downloaded) and checked before it is installed.
cuda_arch() {
  case "$(uname -m)" in
    aarch64 | arm64) printf 'sbsa' ;;
    *) printf 'x86_64' ;;
  esac
}

setup_cuda_repo() {
  if [ -f /etc/yum.repos.d/cuda-rhel8.repo ]; then
    say "= NVIDIA CUDA repository already set up (/etc/yum.repos.d/cuda-rhel8.repo)"
    return 0
  fi
  ensure_prereqs
  local url arch name
  url="https://developer.download.nvidia.com/compute/cuda/repos/rhel8/$(cuda_arch)"
  arch=$(cuda_arch)
  download "$url/D42D0685.pub" "$WORK/cuda.pub"
  run verify_key "$WORK/cuda.pub" 610C7B14E068A878070DA4E99CD0A493D42D0685
  as_root rpm --import "$WORK/cuda.pub"
  name="cuda-rhel8-${arch}"
  run write_file "$WORK/cuda.repo" "[${name}]
name=${name}
baseurl=${url}
enabled=1
gpgcheck=1
gpgkey=${url}/D42D0685.pub"
  run check_repo_lines "$WORK/cuda.repo" "[${name}]" "name=${name}" "baseurl=${url}" "enabled=1" "gpgcheck=1" \
    "gpgkey=${url}/D42D0685.pub"
  as_root install -m 0644 "$WORK/cuda.repo" /etc/yum.repos.d/cuda-rhel8.repo
}

# The driver floor: 570.26 (CUDA 12.8 needs it)
readonly DRIVER_MIN=570.26
# What to do instead when this runs inside a container.
readonly HOST_STEPS='on the host: install the NVIDIA driver (gpudoctor install-script there), then the NVIDIA Container Toolkit (gpudoctor install-script --container-toolkit), and start this container with --gpus all (or the nvidia runtime)'

# A container shares the host's kernel: its driver, kernel headers and reboot are the host's, never this script's.
in_container() {
  [ -e /.dockerenv ] || [ -e /run/.containerenv ] || grep -qE '/(docker|kubepods|containerd|lxc)' /proc/1/cgroup 2>/dev/null
}

loaded_driver() {
  if [ -r /proc/driver/nvidia/version ] && command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1 || true
  fi
}

# The nvidia module built for the running kernel but not loaded yet (installed, reboot pending).
module_version() {
  if command -v modinfo >/dev/null 2>&1; then
    modinfo -F version nvidia 2>/dev/null || true
  fi
}

# driver_done: 0 (and says why) when the driver step has nothing to do.
driver_done() {
  if in_wsl; then
    skip driver "inside WSL the Windows driver provides /usr/lib/wsl/lib/libcuda.so; never install a Linux driver in WSL"
    return 0
  fi
  if in_container; then
    skip driver "inside a container: no driver, kernel headers or reboot here; ${HOST_STEPS}"
    return 0
  fi
  local now module
  now=$(loaded_driver)
  if [ -n "$now" ] && { [ -z "$DRIVER_MIN" ] || version_ge "$now" "$DRIVER_MIN"; }; then
    skip driver "driver ${now} is loaded${DRIVER_MIN:+ (needs >= ${DRIVER_MIN})}"
    return 0
  fi
  module=$(module_version)
  if [ -z "$now" ] && [ -n "$module" ] && { [ -z "$DRIVER_MIN" ] || version_ge "$module" "$DRIVER_MIN"; }; then
    skip driver "driver ${module} is installed but not loaded: reboot to load it"
    REBOOT_NEEDED=1
    return 0
  fi
  if [ -n "$now" ]; then
    say "driver ${now} is loaded but older than ${DRIVER_MIN}: it will be upgraded"
  elif command -v nvidia-smi >/dev/null 2>&1; then
    say "nvidia-smi is installed but no NVIDIA kernel driver answers (/proc/driver/nvidia/version is missing): the driver will be installed"
  else
    say "no NVIDIA driver found: it will be installed"
  fi
  return 1
}

secure_boot_notice() {
  if command -v mokutil >/dev/null 2>&1 && mokutil --sb-state 2>/dev/null | grep -qi 'SecureBoot enabled'; then
    say "notice: Secure Boot is enabled. The DKMS-built NVIDIA module must be signed with a key the firmware trusts:"
    say "        enroll the DKMS/MOK key when asked (mokutil --import; confirm in the blue MOK screen at the next boot),"
    say "        or the module will not load."
  fi
}

# NVIDIA's driver from its CUDA repository as a DKMS module stream (DRV_GUIDE).
enable_epel() {
  if pkg_installed epel-release; then
    return 0
  fi
  skip driver "DKMS needs EPEL: enable CodeReady Builder (subscription-manager repos --enable codeready-builder-for-rhel-8-\$(arch)-rpms) and install epel-release per https://docs.fedoraproject.org/en-US/epel/, then run this again"
  return 1
}

step_driver() {
  driver_done && return 0
  if ! confirm "Install the NVIDIA driver (nvidia-driver:580-open, nvidia-open)?"; then
    skip driver "declined"
    return 0
  fi
  enable_epel || return 0
  secure_boot_notice
  pkg_install "kernel-devel-$(uname -r)" "kernel-headers-$(uname -r)"
  setup_cuda_repo
  if [ "$ASSUME_YES" -eq 1 ]; then
    as_root dnf module enable -y nvidia-driver:580-open
  else
    as_root dnf module enable nvidia-driver:580-open
  fi
  pkg_install nvidia-open
  REBOOT_NEEDED=1
  DONE+=("driver: nvidia-open (nvidia-driver:580-open)")
}

step_toolkit() {
  if pkg_installed cuda-toolkit-12-8; then
    skip toolkit "cuda-toolkit-12-8 is installed"
    return 0
  fi
  if ! confirm "Install the CUDA toolkit 12.8 (cuda-toolkit-12-8)?"; then
    skip toolkit "declined"
    return 0
  fi
  setup_cuda_repo
  pkg_install cuda-toolkit-12-8
  DONE+=("toolkit: cuda-toolkit-12-8 (add /usr/local/cuda-12.8/bin to PATH for nvcc)")
}

step_cudnn() {
  if pkg_installed cudnn9-cuda-12; then
    skip cudnn "cudnn9-cuda-12 is installed"
    return 0
  fi
  if ! confirm "Install cuDNN 9 for CUDA 12 (cudnn9-cuda-12)?"; then
    skip cudnn "declined"
    return 0
  fi
  setup_cuda_repo
  pkg_install cudnn9-cuda-12
  DONE+=("cudnn: cudnn9-cuda-12")
}

summary() {
  local item
  say ""
  say "Summary for ${TARGET_NAME}$([ "$DRY_RUN" -eq 1 ] && printf ' (dry run: nothing was changed)')"
  # A dry run did nothing: what it lists is what a real run would do.
  for item in "${DONE[@]+"${DONE[@]}"}"; do
    if [ "$DRY_RUN" -eq 1 ]; then
      say "  would:   ${item}"
    else
      say "  done:    ${item}"
    fi
  done
  for item in "${SKIPPED[@]+"${SKIPPED[@]}"}"; do
    say "  skipped: ${item}"
  done
  if [ "$REBOOT_NEEDED" -eq 1 ]; then
    say "  reboot needed: yes (the NVIDIA kernel driver loads at the next boot), then run: gpudoctor check"
  else
    say "  reboot needed: no"
  fi
}

os_guard
for step in ${STEPS}; do
  if wanted "$step"; then
    "step_${step}"
  fi
done
summary
