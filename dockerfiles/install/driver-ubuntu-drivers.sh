
# Ubuntu's recommended driver for the GPUs present (@@DRIVER_SOURCE@@).
step_driver() {
  driver_done && return 0
  if ! confirm "Install Ubuntu's recommended NVIDIA driver (ubuntu-drivers install)?"; then
    skip driver "declined"
    return 0
  fi
  secure_boot_notice
  pkg_install @@HEADERS@@ ubuntu-drivers-common
  as_root ubuntu-drivers install
  REBOOT_NEEDED=1
  DONE+=("driver: ubuntu-drivers install")
}
