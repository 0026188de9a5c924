
# NVIDIA's CUDA repository through its keyring package: the key inside the .deb is checked against the
# fingerprint NVIDIA published, and its apt source line against the known one, before dpkg installs it
# (@@KEY_SOURCE@@).
cuda_arch() {
  case "$(uname -m)" in
    aarch64 | arm64) printf 'sbsa' ;;
    *) printf 'x86_64' ;;
  esac
}

# check_keyring_deb DIR URL: the unpacked cuda-keyring holds only its keyring (every key in it NVIDIA's), the apt
# source line for this repository (known text) and documentation; anything else stops the script before dpkg
# installs it.
check_keyring_deb() {
  local dir=$1 url=$2 path relative lists=0 keys=0
  while IFS= read -r -d '' path; do
    relative=${path#"$dir"/}
    if [ -L "$path" ]; then
      say "error: cuda-keyring holds a symbolic link ($(printf '%q' "$relative")): not installing it" >&2
      exit 1
    fi
    case "$relative" in
      etc/apt/sources.list.d/*.list)
        check_repo_lines "$path" "deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] ${url}/ /"
        lists=$((lists + 1))
        ;;
      usr/share/keyrings/*.gpg)
        verify_key "$path" @@CUDA_KEY@@
        keys=$((keys + 1))
        ;;
      usr/share/doc/*) ;;
      etc/apt/preferences.d/cuda-repository-pin-600)
        # The package's own apt pin (it lowers the distribution's copies of NVIDIA's tools): only pin stanzas.
        if grep -Evq '^(Package|Pin|Pin-Priority):|^[[:space:]]*(#|$)' "$path"; then
          say "error: cuda-keyring's apt pin holds more than pin stanzas: not installing it" >&2
          exit 1
        fi
        ;;
      *)
        say "error: cuda-keyring holds an unexpected file ($(printf '%q' "$relative")): not installing it" >&2
        exit 1
        ;;
    esac
  done < <(find "$dir" -mindepth 1 ! -type d -print0)
  if [ "$lists" -eq 0 ] || [ "$keys" -eq 0 ]; then
    say "error: cuda-keyring lacks its keyring or its apt source line: not installing it" >&2
    exit 1
  fi
}

setup_cuda_repo() {
  if pkg_installed cuda-keyring; then
    say "= NVIDIA CUDA repository already set up (cuda-keyring is installed)"
    return 0
  fi
  ensure_prereqs
  local url deb="$WORK/cuda-keyring_1.1-1_all.deb"
  url="@@CUDA_REPO_BASE@@/$(cuda_arch)"
  download "$url/cuda-keyring_1.1-1_all.deb" "$deb"
  run dpkg-deb -x "$deb" "$WORK/cuda-keyring"
  run verify_key "$WORK/cuda-keyring/usr/share/keyrings/cuda-archive-keyring.gpg" @@CUDA_KEY@@
  run check_keyring_deb "$WORK/cuda-keyring" "$url"
  as_root dpkg -i "$deb"
  APT_UPDATED=0
}
