#!/usr/bin/env bash
# Install script for AMD ROCm 6.2.2 on Ubuntu 24.04, written by gpudoctor install-script.
#
# Steps: driver rocm python. Each one checks first and is skipped when already done; run it again any time.
#   --dry-run prints every command without running it; --yes runs unattended; --only STEP runs one step;
#   --help lists the options. sudo is used only when not root. Nothing downloaded is piped into a shell,
#   and AMD's repository key is checked against its full fingerprint before it is trusted.
#
# Machine: this machine; ROCm installed: unknown; AMD GPUs: unknown
# Choices:
#   distro: Ubuntu 24.04
#     --distro
#   ROCm: 6.2.2
#     the newest release the knowledge base has install steps for [ROCM_INST_CONF]
#   repositories: https://repo.radeon.com/amdgpu/6.2.2/ubuntu noble main; https://repo.radeon.com/rocm/apt/6.2.2 noble main
#     AMD's package-manager install: repo.radeon.com's key is checked against its full fingerprint before it is
#     trusted, then apt/dnf check every package against it [ROCM_NATIVE]. AMD's amdgpu-install package
#     (https://repo.radeon.com/amdgpu-install/6.2.2/ubuntu/noble/amdgpu-install_6.2.60202-1_all.deb) sets up the
#     same repositories but is itself downloaded without a signature this script could check, so it is not used
#     [ROCM_AMDGPU_INSTALL]
#   driver: amdgpu-dkms and the kernel headers (linux-headers-$(uname -r) linux-modules-extra-$(uname -r))
#     AMD's kernel driver, built by DKMS for the running kernel; skipped in WSL and in containers [ROCM_NATIVE]
#     [ROCM_PREREQ]
#   ROCm stack: rocm, groups render and video, rocminfo
#     AMD's rocm meta package; usermod -a -G render,video for the user who ran the script [ROCM_PREREQ]; verified
#     with rocminfo [ROCM_POST]
#   torch: torch==2.5.* from https://download.pytorch.org/whl/rocm6.2
#     torch 2.5 rocm6.2 is the newest ROCm wheel not newer than ROCm 6.2.2 [P_TI]; its wheel brings its own ROCm
#     libraries; Python 3.12
# Knowledge base: as of 2026-11-25. Sources:
#   [P_TI] pytorch/test-infra generate_binary_build_matrix.py ROCM_ARCHES_DICT per release
#   [ROCM_AMDGPU_INSTALL] ROCm/rocm-install-on-linux docs/install/amdgpu-install.rst at f297bde3 (ROCm 6.2.2 docs,
#   https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.2.2/install/amdgpu-install.html)
#   [ROCM_INST_CONF] ROCm/rocm-install-on-linux docs/conf.py
#   (https://github.com/ROCm/rocm-install-on-linux/blob/develop/docs/conf.py), at the commit named
#   [ROCM_KEY_5268] https://github.com/ROCm/legacy-rocm-build/issues/5268 (2025): the repository's signing key is
#   still key id 9386B48A1A693C5C (the last 16 hex digits of that fingerprint), now named AMD MLSE DevOps
#   [ROCM_KEY_5407] https://github.com/ROCm/legacy-rocm-build/issues/5407 (2025, AMD maintainer kentrussell): use
#   https://repo.radeon.com/rocm/rocm.gpg.key
#   [ROCM_KEY_854] https://github.com/ROCm/legacy-rocm-build/issues/854 (2019): gpg's listing of repo.radeon.com's
#   rocm.gpg.key, pub rsa4096 2016-08-01, fingerprint CA8BB4727A47B4D09B4EE8969386B48A1A693C5C (ROCm Release
#   Manager); AMD replied that the key file was updated (expiry extended)
#   [ROCM_NATIVE] ROCm/rocm-install-on-linux docs/install/native-install/ubuntu.rst and rhel.rst at f297bde3: the
#   signing key https://repo.radeon.com/rocm/rocm.gpg.key, the amdgpu and rocm repository lines, apt/dnf install
#   amdgpu-dkms, then rocm
#   [ROCM_POST] ROCm/rocm-install-on-linux docs/install/post-install.rst at f297bde3: verify with dkms status and
#   rocminfo
#   [ROCM_PREREQ] ROCm/rocm-install-on-linux docs/install/prerequisites.rst at f297bde3: kernel headers
#   (linux-headers/linux-modules-extra, kernel-headers/kernel-devel), EPEL and CRB on RHEL, usermod -a -G
#   render,video $LOGNAME
# Regenerate: gpudoctor install-script --vendor amd --rocm 6.2.2 --distro ubuntu24.04 --framework torch
set -euo pipefail

readonly TARGET_NAME='Ubuntu 24.04'
readonly OS_IDS=ubuntu
readonly OS_VERSION=24.04
readonly STEPS='driver rocm python'
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

Sets up AMD ROCm 6.2.2 on ${TARGET_NAME}. Steps in this script: ${STEPS}
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

# apt: a package counts as installed only in state "install ok installed" (dpkg -s also answers for leftovers).
APT_UPDATED=0
pkg_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

apt_update() {
  if [ "$APT_UPDATED" -eq 0 ]; then
    as_root apt-get update
    APT_UPDATED=1
  fi
}

pkg_install() {
  apt_update
  if [ "$ASSUME_YES" -eq 1 ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"
  else
    as_root apt-get install "$@"
  fi
}

ensure_prereqs() {
  local missing=() pkg
  for pkg in ca-certificates curl gnupg; do
    pkg_installed "$pkg" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    pkg_install "${missing[@]}"
  fi
}

# AMD's amdgpu and ROCm apt repositories for ROCm 6.2.2 (ROCM_NATIVE; ROCM_KEY_854; ROCM_KEY_5268). The signing key is checked against
# its full fingerprint before apt trusts it, and the repository lines against the known text.
readonly ROCM_KEY_URL=https://repo.radeon.com/rocm/rocm.gpg.key
readonly ROCM_KEY_FINGERPRINT=CA8BB4727A47B4D09B4EE8969386B48A1A693C5C
readonly AMDGPU_APT_LINE='deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/amdgpu/6.2.2/ubuntu noble main'
readonly ROCM_APT_LINE='deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/6.2.2 noble main'
# AMD's pin: its packages win over the distribution's copies of the same names.
readonly ROCM_APT_PIN=$'Package: *\nPin: release o=repo.radeon.com\nPin-Priority: 600'

setup_rocm_repo() {
  if [ -f /etc/apt/keyrings/rocm.gpg ] && [ -f /etc/apt/sources.list.d/amdgpu.list ] &&
    [ -f /etc/apt/sources.list.d/rocm.list ]; then
    verify_key /etc/apt/keyrings/rocm.gpg "$ROCM_KEY_FINGERPRINT"
    check_repo_lines /etc/apt/sources.list.d/amdgpu.list "$AMDGPU_APT_LINE"
    check_repo_lines /etc/apt/sources.list.d/rocm.list "$ROCM_APT_LINE"
    say "= AMD repositories for ROCm 6.2.2 already set up"
    return 0
  fi
  ensure_prereqs
  download "$ROCM_KEY_URL" "$WORK/rocm.gpg.key"
  run verify_key "$WORK/rocm.gpg.key" "$ROCM_KEY_FINGERPRINT"
  as_root install -d -m 0755 /etc/apt/keyrings
  as_root gpg --batch --yes --dearmor -o /etc/apt/keyrings/rocm.gpg "$WORK/rocm.gpg.key"
  run write_file "$WORK/amdgpu.list" "$AMDGPU_APT_LINE"
  run check_repo_lines "$WORK/amdgpu.list" "$AMDGPU_APT_LINE"
  run write_file "$WORK/rocm.list" "$ROCM_APT_LINE"
  run check_repo_lines "$WORK/rocm.list" "$ROCM_APT_LINE"
  run write_file "$WORK/rocm-pin-600" "$ROCM_APT_PIN"
  as_root install -m 0644 "$WORK/amdgpu.list" /etc/apt/sources.list.d/amdgpu.list
  as_root install -m 0644 "$WORK/rocm.list" /etc/apt/sources.list.d/rocm.list
  as_root install -m 0644 "$WORK/rocm-pin-600" /etc/apt/preferences.d/rocm-pin-600
  APT_UPDATED=0
}

# AMD's kernel driver, amdgpu-dkms, built for the running kernel with its headers (ROCM_NATIVE; ROCM_PREREQ).
# What to do instead when this runs inside a container.
readonly ROCM_HOST_STEPS='on the host: install amdgpu-dkms (gpudoctor install-script --vendor amd there) and start this container with --device=/dev/kfd --device=/dev/dri --group-add video --group-add "$(getent group render | cut -d: -f3)"'

# rocm_driver_done: 0 (and says why) when the driver step has nothing to do.
rocm_driver_done() {
  if in_wsl; then
    skip driver "inside WSL: the Linux amdgpu driver is never installed here"
    return 0
  fi
  if in_container; then
    skip driver "inside a container: no driver, kernel headers or reboot here; ${ROCM_HOST_STEPS}"
    return 0
  fi
  if pkg_installed amdgpu-dkms; then
    if [ -e /dev/kfd ]; then
      skip driver "amdgpu-dkms is installed and /dev/kfd is there"
    else
      skip driver "amdgpu-dkms is installed but /dev/kfd is missing: reboot to load amdgpu"
      REBOOT_NEEDED=1
    fi
    return 0
  fi
  return 1
}

step_driver() {
  if rocm_driver_done; then
    return 0
  fi
  if ! confirm "Install AMD's amdgpu-dkms kernel driver (ROCm 6.2.2) and the kernel headers it builds against?"; then
    skip driver "declined"
    return 0
  fi
  setup_rocm_repo
  pkg_install "linux-headers-$(uname -r)" "linux-modules-extra-$(uname -r)"
  pkg_install amdgpu-dkms
  REBOOT_NEEDED=1
  DONE+=("driver: amdgpu-dkms (ROCm 6.2.2) and the kernel headers")
}

# The ROCm user space (the "rocm" meta package), the render and video groups that open /dev/kfd and
# /dev/dri/renderD*, and a check with rocminfo (ROCM_NATIVE; ROCM_PREREQ; ROCM_POST).
# A container shares the host's kernel: its driver, kernel headers and reboot are the host's, never this script's.
in_container() {
  [ -e /.dockerenv ] || [ -e /run/.containerenv ] || grep -qE '/(docker|kubepods|containerd|lxc)' /proc/1/cgroup 2>/dev/null
}

rocm_user() {
  if [ -n "${SUDO_USER:-}" ]; then
    printf '%s' "$SUDO_USER"
  else
    id -un
  fi
}

# rocm_groups_missing USER: the groups of render and video that exist here and USER is not in yet.
rocm_groups_missing() {
  local group missing=()
  for group in render video; do
    getent group "$group" >/dev/null 2>&1 || continue
    id -nG "$1" | tr ' ' '\n' | grep -qx "$group" || missing+=("$group")
  done
  printf '%s' "${missing[*]+"${missing[*]}"}"
}

verify_rocm() {
  if [ "$DRY_RUN" -eq 1 ]; then
    say "would check: /opt/rocm/bin/rocminfo lists the GPUs"
    return 0
  fi
  if [ ! -e /dev/kfd ]; then
    say "rocminfo: /dev/kfd is missing (the amdgpu driver is not loaded): reboot, then run /opt/rocm/bin/rocminfo"
    return 0
  fi
  if [ -x /opt/rocm/bin/rocminfo ] && /opt/rocm/bin/rocminfo >"$WORK/rocminfo.txt" 2>&1; then
    say "rocminfo: $(grep -c 'Name: *gfx' "$WORK/rocminfo.txt" || true) GPU agent(s): $(grep -o 'gfx[0-9a-f]*' "$WORK/rocminfo.txt" | sort -u | tr '\n' ' ')"
  else
    say "rocminfo failed: $(head -n 1 "$WORK/rocminfo.txt" 2>/dev/null || true) (new groups apply after logging out and in)"
  fi
}

step_rocm() {
  local user missing
  if pkg_installed rocm; then
    skip rocm "the rocm packages are installed"
  elif confirm "Install the ROCm 6.2.2 user space (the rocm packages) from AMD's repository?"; then
    setup_rocm_repo
    pkg_install rocm
    DONE+=("rocm: ROCm 6.2.2 user space (rocm)")
  else
    skip rocm "declined"
    return 0
  fi
  if in_container; then
    skip groups "inside a container the groups come from docker run --group-add (video and render)"
  else
    user=$(rocm_user)
    missing=$(rocm_groups_missing "$user")
    if [ -z "$missing" ]; then
      skip groups "${user} is in render and video"
    else
      as_root usermod -a -G "${missing// /,}" "$user"
      DONE+=("groups: ${user} added to ${missing// /,} (log out and in for them to apply)")
    fi
  fi
  verify_rocm
}

# A venv with torch==2.5.* (ROCm build), pinned, from the index the knowledge base chose.
readonly PYTHON_BIN=python3
readonly PIP_REQUIREMENT='torch==2.5.*'
readonly PIP_INDEX_DEFAULT=https://download.pytorch.org/whl/rocm6.2
readonly IMPORT_NAME=torch

step_python() {
  if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import ${IMPORT_NAME}" >/dev/null 2>&1; then
    skip python "${VENV} already has ${IMPORT_NAME}"
    return 0
  fi
  if ! confirm "Create ${VENV} with ${PIP_REQUIREMENT}?"; then
    skip python "declined"
    return 0
  fi
  if ! command -v "$PYTHON_BIN" >/dev/null 2>&1 || ! "$PYTHON_BIN" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    pkg_install python3-venv
  fi
  if [ ! -x "$VENV/bin/python" ]; then
    run "$PYTHON_BIN" -m venv "$VENV"
  fi
  # GPUDOCTOR_PIP_INDEX_URL replaces the index (set but empty: pip's own configuration, e.g. a local mirror).
  local index=${GPUDOCTOR_PIP_INDEX_URL-$PIP_INDEX_DEFAULT}
  if [ -n "$index" ]; then
    run "$VENV/bin/python" -m pip install --index-url "$index" "$PIP_REQUIREMENT"
  else
    run "$VENV/bin/python" -m pip install "$PIP_REQUIREMENT"
  fi
  run "$VENV/bin/python" -c "import ${IMPORT_NAME}; print('${IMPORT_NAME}', ${IMPORT_NAME}.__version__)"
  DONE+=("python: ${PIP_REQUIREMENT} in ${VENV}")
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
    say "  reboot needed: yes (the amdgpu kernel driver loads at the next boot), then run: gpudoctor check"
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
