
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
