
# AMD's amdgpu and ROCm apt repositories for ROCm @@ROCM@@ (@@KEY_SOURCE@@). The signing key is checked against
# its full fingerprint before apt trusts it, and the repository lines against the known text.
readonly ROCM_KEY_URL=@@KEY_URL@@
readonly ROCM_KEY_FINGERPRINT=@@KEY_FINGERPRINT@@
readonly AMDGPU_APT_LINE=@@AMDGPU_LINE@@
readonly ROCM_APT_LINE=@@ROCM_LINE@@
# AMD's pin: its packages win over the distribution's copies of the same names.
readonly ROCM_APT_PIN=$'Package: *\nPin: release o=repo.radeon.com\nPin-Priority: 600'

setup_rocm_repo() {
  if [ -f /etc/apt/keyrings/rocm.gpg ] && [ -f /etc/apt/sources.list.d/amdgpu.list ] &&
    [ -f /etc/apt/sources.list.d/rocm.list ]; then
    verify_key /etc/apt/keyrings/rocm.gpg "$ROCM_KEY_FINGERPRINT"
    check_repo_lines /etc/apt/sources.list.d/amdgpu.list "$AMDGPU_APT_LINE"
    check_repo_lines /etc/apt/sources.list.d/rocm.list "$ROCM_APT_LINE"
    say "= AMD repositories for ROCm @@ROCM@@ already set up"
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
