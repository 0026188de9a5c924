
# The driver floor: @@DRIVER_WHY@@
readonly DRIVER_MIN=@@DRIVER_MIN@@
# What to do instead when this runs inside a container.
readonly HOST_STEPS=@@HOST_STEPS@@

# A container shares the host's kernel: its driver, kernel headers and reboot are the host's, never this script's.
in_container() {
  [ -e /.dockerenv ] || [ -e /run/.containerenv ] || grep -qE '/(docker|kubepods|containerd|lxc)' /proc/1/cgroup 2>/dev/null
}

loaded_driver() {
  if [ -r /proc/driver/nvidia/version ] && command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1 || true
  fi
}

# The nvidia module built for the running kernel but not loaded yet (installed, reboot pending).
module_version() {
  if command -v modinfo >/dev/null 2>&1; then
    modinfo -F version nvidia 2>/dev/null || true
  fi
}

# driver_done: 0 (and says why) when the driver step has nothing to do.
driver_done() {
  if in_wsl; then
    skip driver "inside WSL the Windows driver provides /usr/lib/wsl/lib/libcuda.so; never install a Linux driver in WSL"
    return 0
  fi
  if in_container; then
    skip driver "inside a container: no driver, kernel headers or reboot here; ${HOST_STEPS}"
    return 0
  fi
  local now module
  now=$(loaded_driver)
  if [ -n "$now" ] && { [ -z "$DRIVER_MIN" ] || version_ge "$now" "$DRIVER_MIN"; }; then
    skip driver "driver ${now} is loaded${DRIVER_MIN:+ (needs >= ${DRIVER_MIN})}"
    return 0
  fi
  module=$(module_version)
  if [ -z "$now" ] && [ -n "$module" ] && { [ -z "$DRIVER_MIN" ] || version_ge "$module" "$DRIVER_MIN"; }; then
    skip driver "driver ${module} is installed but not loaded: reboot to load it"
    REBOOT_NEEDED=1
    return 0
  fi
  if [ -n "$now" ]; then
    say "driver ${now} is loaded but older than ${DRIVER_MIN}: it will be upgraded"
  elif command -v nvidia-smi >/dev/null 2>&1; then
    say "nvidia-smi is installed but no NVIDIA kernel driver answers (/proc/driver/nvidia/version is missing): the driver will be installed"
  else
    say "no NVIDIA driver found: it will be installed"
  fi
  return 1
}

secure_boot_notice() {
  if command -v mokutil >/dev/null 2>&1 && mokutil --sb-state 2>/dev/null | grep -qi 'SecureBoot enabled'; then
    say "notice: Secure Boot is enabled. The DKMS-built NVIDIA module must be signed with a key the firmware trusts:"
    say "        enroll the DKMS/MOK key when asked (mokutil --import; confirm in the blue MOK screen at the next boot),"
    say "        or the module will not load."
  fi
}
