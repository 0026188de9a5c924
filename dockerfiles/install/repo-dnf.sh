
# NVIDIA's CUDA repository: its key is checked against the full fingerprint NVIDIA published before rpm imports
# it (@@KEY_SOURCE@@); dnf then checks every package's signature with it. The .repo file is written here from known
# text (never downloaded) and checked before it is installed.
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
  local url arch name
  url="@@CUDA_REPO_BASE@@/$(cuda_arch)"
  arch=$(cuda_arch)
  download "$url/@@CUDA_KEY_ID@@.pub" "$WORK/cuda.pub"
  run verify_key "$WORK/cuda.pub" @@CUDA_KEY@@
  as_root rpm --import "$WORK/cuda.pub"
  name="cuda-@@REPO@@-${arch}"
  run write_file "$WORK/cuda.repo" "[${name}]
name=${name}
baseurl=${url}
enabled=1
gpgcheck=1
gpgkey=${url}/@@CUDA_KEY_ID@@.pub"
  run check_repo_lines "$WORK/cuda.repo" "[${name}]" "name=${name}" "baseurl=${url}" "enabled=1" "gpgcheck=1" \
    "gpgkey=${url}/@@CUDA_KEY_ID@@.pub"
  as_root install -m 0644 "$WORK/cuda.repo" /etc/yum.repos.d/cuda-@@REPO@@.repo
}
