
# NVIDIA's driver from its CUDA repository (@@DRIVER_SOURCE@@).
step_driver() {
  driver_done && return 0
  if ! confirm "Install the NVIDIA driver (@@DRIVER_PACKAGE@@ from NVIDIA's repository)?"; then
    skip driver "declined"
    return 0
  fi
  secure_boot_notice
  pkg_install @@HEADERS@@
  setup_cuda_repo
  pkg_install @@DRIVER_PACKAGE@@
  REBOOT_NEEDED=1
  DONE+=("driver: @@DRIVER_PACKAGE@@ from NVIDIA's repository")
}
