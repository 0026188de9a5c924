
# AMD's kernel driver, amdgpu-dkms, built for the running kernel with its headers (@@DRIVER_SOURCE@@).
# What to do instead when this runs inside a container.
readonly ROCM_HOST_STEPS=@@HOST_STEPS@@

# rocm_driver_done: 0 (and says why) when the driver step has nothing to do.
rocm_driver_done() {
  if in_wsl; then
    skip driver "inside WSL: the Linux amdgpu driver is never installed here"
    return 0
  fi
  if in_container; then
    skip driver "inside a container: no driver, kernel headers or reboot here; ${ROCM_HOST_STEPS}"
    return 0
  fi
  if pkg_installed amdgpu-dkms; then
    if [ -e /dev/kfd ]; then
      skip driver "amdgpu-dkms is installed and /dev/kfd is there"
    else
      skip driver "amdgpu-dkms is installed but /dev/kfd is missing: reboot to load amdgpu"
      REBOOT_NEEDED=1
    fi
    return 0
  fi
  return 1
}
@@EPEL_FUNCTION@@
step_driver() {
  if rocm_driver_done; then
    return 0
  fi
  if ! confirm "Install AMD's amdgpu-dkms kernel driver (ROCm @@ROCM@@) and the kernel headers it builds against?"; then
    skip driver "declined"
    return 0
  fi
  setup_rocm_repo
@@EPEL_CALL@@  pkg_install @@HEADERS@@
  pkg_install amdgpu-dkms
  REBOOT_NEEDED=1
  DONE+=("driver: amdgpu-dkms (ROCm @@ROCM@@) and the kernel headers")
}
