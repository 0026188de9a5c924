# Sourced by the scripts that install system packages for the tests (install-nvidia-userspace.sh,
# install-linters.sh): whether the test command may change this host, and why not.
#
# The test command must not edit apt sources or install packages as root on a developer's machine unasked:
# a Debian box whose driver came from NVIDIA's .run installer or NVIDIA's repository can be broken by Debian's
# 535 user space. So a change is allowed only
#   - when GPUDOCTOR_INSTALL_SYSTEM_PACKAGES=1 (CI sets it in .ci/run), or
#   - inside a container (the change dies with it), or
#   - when the person at the terminal answers yes;
# and GPUDOCTOR_INSTALL_SYSTEM_PACKAGES=0 always refuses.
# GPUDOCTOR_HOST_ROOT names a directory standing for / (the tests use it to describe other hosts).

host_root=${GPUDOCTOR_HOST_ROOT:-}

# Inside a docker/podman/Kubernetes container?  The markers the engines write, then PID 1's cgroup.
in_container() {
  [ -e "$host_root/.dockerenv" ] || [ -e "$host_root/run/.containerenv" ] ||
    grep -qsE '/(docker|kubepods|containerd|libpod|lxc)' "$host_root/proc/1/cgroup"
}

# True (and prints why) when an NVIDIA driver not from the packages we install is present: a loaded kernel
# module, NVIDIA's .run installer, or driver packages from Ubuntu's or NVIDIA's repositories.
foreign_nvidia_driver() {
  local version_file="$host_root/proc/driver/nvidia/version"
  if [ -r "$version_file" ]; then
    echo "an NVIDIA kernel driver is loaded ($(head -n 1 "$version_file" | tr -cd '[:print:]' | cut -c1-80))"
    return 0
  fi
  local tool
  for tool in usr/bin/nvidia-uninstall usr/bin/nvidia-installer; do
    if [ -e "$host_root/$tool" ]; then
      echo "the driver was installed by NVIDIA's .run installer (/$tool exists)"
      return 0
    fi
  done
  local info="$host_root/var/lib/dpkg/info" list name
  for list in "$info"/cuda-drivers*.list "$info"/nvidia-driver-[0-9]*.list "$info"/libnvidia-compute-[0-9]*.list \
    "$info"/nvidia-kernel-*.list "$info"/nvidia-open*.list; do
    [ -e "$list" ] || continue
    name=$(basename "$list" .list)
    echo "an NVIDIA driver package is installed ($name)"
    return 0
  done
  return 1
}

# may_change_host WHAT: 0 when WHAT (a sentence) may be done to this host; else prints why not and returns 1.
may_change_host() {
  local what=$1
  case "${GPUDOCTOR_INSTALL_SYSTEM_PACKAGES:-}" in
    1) return 0 ;;
    0)
      echo "not changing this host (GPUDOCTOR_INSTALL_SYSTEM_PACKAGES=0): would $what" >&2
      return 1
      ;;
  esac
  if in_container; then
    return 0
  fi
  if [ -t 0 ] && [ -t 2 ]; then
    local answer=
    printf 'The tests would like to %s. Go ahead? [y/N] ' "$what" >&2
    read -r answer || answer=
    case "$answer" in y | Y | yes | YES) return 0 ;; esac
  fi
  echo "not changing this host unasked: would $what; set GPUDOCTOR_INSTALL_SYSTEM_PACKAGES=1 to allow it" >&2
  return 1
}
