
# NVIDIA's driver from its CUDA repository as a DKMS module stream (@@DRIVER_SOURCE@@).
enable_epel() {
@@EPEL@@
}

step_driver() {
  driver_done && return 0
  if ! confirm "Install the NVIDIA driver (nvidia-driver:@@STREAM@@, @@DRIVER_PACKAGE@@)?"; then
    skip driver "declined"
    return 0
  fi
  enable_epel || return 0
  secure_boot_notice
  pkg_install @@HEADERS@@
  setup_cuda_repo
  if [ "$ASSUME_YES" -eq 1 ]; then
    as_root dnf module enable -y nvidia-driver:@@STREAM@@
  else
    as_root dnf module enable nvidia-driver:@@STREAM@@
  fi
  pkg_install @@DRIVER_PACKAGE@@
  REBOOT_NEEDED=1
  DONE+=("driver: @@DRIVER_PACKAGE@@ (nvidia-driver:@@STREAM@@)")
}
