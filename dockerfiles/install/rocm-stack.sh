
# The ROCm user space (the "rocm" meta package), the render and video groups that open /dev/kfd and
# /dev/dri/renderD*, and a check with rocminfo (@@STACK_SOURCE@@).
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
  elif confirm "Install the ROCm @@ROCM@@ user space (the rocm packages) from AMD's repository?"; then
    setup_rocm_repo
    pkg_install rocm
    DONE+=("rocm: ROCm @@ROCM@@ user space (rocm)")
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
