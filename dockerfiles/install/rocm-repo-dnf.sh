
# AMD's amdgpu and ROCm dnf repositories for ROCm @@ROCM@@ (@@KEY_SOURCE@@). The signing key is checked against
# its full fingerprint before rpm imports it; the .repo files name that checked copy, never a URL.
readonly ROCM_KEY_URL=@@KEY_URL@@
readonly ROCM_KEY_FINGERPRINT=@@KEY_FINGERPRINT@@
readonly ROCM_KEY_FILE=/etc/pki/rpm-gpg/RPM-GPG-KEY-rocm
readonly AMDGPU_REPO_LINES=(@@AMDGPU_REPO@@)
readonly ROCM_REPO_LINES=(@@ROCM_REPO@@)

write_lines() {
  local file=$1
  shift
  printf '%s\n' "$@" >"$file"
}

setup_rocm_repo() {
  if [ -f "$ROCM_KEY_FILE" ] && [ -f /etc/yum.repos.d/amdgpu.repo ] && [ -f /etc/yum.repos.d/rocm.repo ]; then
    verify_key "$ROCM_KEY_FILE" "$ROCM_KEY_FINGERPRINT"
    check_repo_lines /etc/yum.repos.d/amdgpu.repo "${AMDGPU_REPO_LINES[@]}"
    check_repo_lines /etc/yum.repos.d/rocm.repo "${ROCM_REPO_LINES[@]}"
    say "= AMD repositories for ROCm @@ROCM@@ already set up"
    return 0
  fi
  ensure_prereqs
  download "$ROCM_KEY_URL" "$WORK/rocm.gpg.key"
  run verify_key "$WORK/rocm.gpg.key" "$ROCM_KEY_FINGERPRINT"
  as_root install -m 0644 "$WORK/rocm.gpg.key" "$ROCM_KEY_FILE"
  as_root rpm --import "$ROCM_KEY_FILE"
  run write_lines "$WORK/amdgpu.repo" "${AMDGPU_REPO_LINES[@]}"
  run check_repo_lines "$WORK/amdgpu.repo" "${AMDGPU_REPO_LINES[@]}"
  run write_lines "$WORK/rocm.repo" "${ROCM_REPO_LINES[@]}"
  run check_repo_lines "$WORK/rocm.repo" "${ROCM_REPO_LINES[@]}"
  as_root install -m 0644 "$WORK/amdgpu.repo" /etc/yum.repos.d/amdgpu.repo
  as_root install -m 0644 "$WORK/rocm.repo" /etc/yum.repos.d/rocm.repo
  as_root dnf clean all
}
