
# NVIDIA's CUDA repository through its keyring package: the key inside the .deb is checked against the
# fingerprint NVIDIA published before dpkg installs it (@@KEY_SOURCE@@).
cuda_arch() {
  case "$(uname -m)" in
    aarch64 | arm64) printf 'sbsa' ;;
    *) printf 'x86_64' ;;
  esac
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
  as_root dpkg -i "$deb"
  APT_UPDATED=0
}
