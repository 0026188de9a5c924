#!/usr/bin/env bash
# Install script for AlmaLinux 9, written by gpudoctor install-script.
#
# Steps: container. Each one checks first and is skipped when already done; run it again any time.
#   --dry-run prints every command without running it; --yes runs unattended; --only STEP runs one step;
#   --help lists the options. sudo is used only when not root. Nothing downloaded is piped into a shell,
#   and every repository key is checked against the fingerprint NVIDIA publishes before it is trusted.
#
# Machine: synthetic; driver 580.95.05; GPUs NVIDIA H100 80GB HBM3 (compute capability 9.0)
# Choices:
#   distro: AlmaLinux 9
#     --distro
#   container toolkit: nvidia-container-toolkit
#     asked for [CTK_GUIDE]
# Knowledge base: as of 2026-11-22. Sources:
#   [CTK_GUIDE] Installing the NVIDIA Container Toolkit
#   (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html): key
#   https://nvidia.github.io/libnvidia-container/gpgkey, apt list stable/deb/$(ARCH), dnf repo
#   stable/rpm/nvidia-container-toolkit.repo, `nvidia-ctk runtime configure --runtime=docker`
#   [CTK_KEY] libnvidia-container signing key C95B321B61E88C1809C4F759DDCAE044F796ECB0 (key id DDCAE044F796ECB0, the
#   NO_PUBKEY apt names for nvidia.github.io/libnvidia-container; pinned the same way in several public install
#   scripts)
#   [CUDA_REPO] CUDA Installation Guide for Linux, network repository installation: cuda-keyring_1.1-1_all.deb
#   (apt), cuda-<distro>.repo (dnf) under https://developer.download.nvidia.com/compute/cuda/repos/
#   [DRV_GUIDE] NVIDIA Driver Installation Guide, Kernel Modules: open GPU kernel module installation table
#   (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/ , r580-r620 editions): RHEL/Rocky/Alma 8-9
#   and Amazon Linux 2023 `dnf module enable nvidia-driver:open-dkms` + `dnf install nvidia-open`, a specific branch
#   `dnf module enable nvidia-driver:580-open`; Ubuntu/Debian `apt install nvidia-open`; open modules need Turing
#   (7.5)+, the proprietary ones are required for Maxwell, Pascal and Volta
# Regenerate: gpudoctor install-script --distro alma9 --for-driver 580.95.05 --no-driver --container-toolkit --framework none
set -euo pipefail

readonly TARGET_NAME='AlmaLinux 9'
readonly OS_IDS=almalinux
readonly OS_VERSION=9
readonly STEPS=container
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

# NVIDIA Container Toolkit from its own dnf repository, its key checked against the published fingerprint
# (CTK_KEY). The .repo file is NVIDIA's stable section, written here from known text (never downloaded) and
# checked before it is installed.
setup_container_repo() {
  if [ -f /etc/yum.repos.d/nvidia-container-toolkit.repo ]; then
    return 0
  fi
  ensure_prereqs
  download https://nvidia.github.io/libnvidia-container/gpgkey "$WORK/ctk.key"
  run verify_key "$WORK/ctk.key" C95B321B61E88C1809C4F759DDCAE044F796ECB0
  as_root rpm --import "$WORK/ctk.key"
  run write_file "$WORK/ctk.repo" '[nvidia-container-toolkit]
name=nvidia-container-toolkit
baseurl=https://nvidia.github.io/libnvidia-container/stable/rpm/$basearch
repo_gpgcheck=1
gpgcheck=0
enabled=1
gpgkey=https://nvidia.github.io/libnvidia-container/gpgkey
sslverify=1
sslcacert=/etc/pki/tls/certs/ca-bundle.crt'
  run check_repo_lines "$WORK/ctk.repo" '[nvidia-container-toolkit]' 'name=nvidia-container-toolkit' \
    'baseurl=https://nvidia.github.io/libnvidia-container/stable/rpm/$basearch' 'repo_gpgcheck=1' 'gpgcheck=0' 'enabled=1' 'gpgkey=https://nvidia.github.io/libnvidia-container/gpgkey' \
    'sslverify=1' 'sslcacert=/etc/pki/tls/certs/ca-bundle.crt'
  as_root install -m 0644 "$WORK/ctk.repo" /etc/yum.repos.d/nvidia-container-toolkit.repo
}

step_container() {
  if pkg_installed nvidia-container-toolkit; then
    skip container "nvidia-container-toolkit is installed"
  elif confirm "Install the NVIDIA Container Toolkit?"; then
    setup_container_repo
    pkg_install nvidia-container-toolkit
    DONE+=("container: nvidia-container-toolkit")
  else
    skip container "declined"
    return 0
  fi
  if ! command -v docker >/dev/null 2>&1; then
    skip "container runtime" "docker is not installed: run 'nvidia-ctk runtime configure --runtime=docker' (or containerd/crio) once it is"
  elif [ -f /etc/docker/daemon.json ] && grep -q '"nvidia"' /etc/docker/daemon.json; then
    skip "container runtime" "docker already knows the nvidia runtime (/etc/docker/daemon.json)"
  else
    as_root nvidia-ctk runtime configure --runtime=docker
    if command -v systemctl >/dev/null 2>&1; then
      as_root systemctl restart docker
    fi
    DONE+=("container runtime: docker configured with nvidia-ctk")
  fi
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
