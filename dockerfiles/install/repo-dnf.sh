
# NVIDIA's CUDA repository: its key is checked against the full fingerprint NVIDIA published before rpm imports
# it (@@KEY_SOURCE@@); dnf then checks every package's signature with it.
cuda_arch() {
  case "$(uname -m)" in
    aarch64 | arm64) printf 'sbsa' ;;
    *) printf 'x86_64' ;;
  esac
}

setup_cuda_repo() {
  if [ -f /etc/yum.repos.d/cuda-@@REPO@@.repo ]; then
    say "= NVIDIA CUDA repository already set up (/etc/yum.repos.d/cuda-@@REPO@@.repo)"
    return 0
  fi
  ensure_prereqs
  local url
  url="@@CUDA_REPO_BASE@@/$(cuda_arch)"
  download "$url/@@CUDA_KEY_ID@@.pub" "$WORK/cuda.pub"
  run verify_key "$WORK/cuda.pub" @@CUDA_KEY@@
  as_root rpm --import "$WORK/cuda.pub"
  download "$url/cuda-@@REPO@@.repo" "$WORK/cuda.repo"
  as_root install -m 0644 "$WORK/cuda.repo" /etc/yum.repos.d/cuda-@@REPO@@.repo
}
