
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
