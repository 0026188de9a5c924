
# Debian's own driver from contrib / non-free, built by DKMS against the running kernel (@@DRIVER_SOURCE@@).
enable_debian_nonfree() {
  if apt-cache policy nvidia-driver 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    return 0
  fi
  local list="$WORK/debian-nonfree.list"
  run write_file "$list" "deb https://deb.debian.org/debian bookworm contrib non-free non-free-firmware
deb https://deb.debian.org/debian bookworm-updates contrib non-free non-free-firmware
deb https://security.debian.org/debian-security bookworm-security contrib non-free non-free-firmware"
  as_root install -m 0644 "$list" /etc/apt/sources.list.d/debian-nonfree.list
  APT_UPDATED=0
}

step_driver() {
  driver_done && return 0
  if ! confirm "Install the NVIDIA driver (Debian's nvidia-driver, DKMS)?"; then
    skip driver "declined"
    return 0
  fi
  secure_boot_notice
  enable_debian_nonfree
  pkg_install @@HEADERS@@
  pkg_install @@DRIVER_PACKAGE@@
  REBOOT_NEEDED=1
  DONE+=("driver: Debian's @@DRIVER_PACKAGE@@")
}
