set -euo pipefail

readonly TARGET_NAME=@@TARGET_NAME@@
readonly OS_IDS=@@OS_IDS@@
readonly OS_VERSION=@@OS_VERSION@@
readonly STEPS=@@STEPS@@
DRY_RUN=0
ASSUME_YES=0
FORCE_OS=0
ONLY=""
VENV=${GPUDOCTOR_VENV:-@@VENV@@}
DONE=()
SKIPPED=()
REBOOT_NEEDED=0

usage() {
  cat <<USAGE
Usage: $0 [--dry-run] [--yes] [--only STEP[,STEP...]] [--venv PATH] [--force-os]

Sets up @@WHAT@@ on ${TARGET_NAME}. Steps in this script: ${STEPS}
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
