
step_container() {
  if pkg_installed nvidia-container-toolkit; then
    skip container "nvidia-container-toolkit is installed"
  elif confirm "Install the NVIDIA Container Toolkit?"; then
    setup_container_repo
    pkg_install nvidia-container-toolkit
    DONE+=("container: nvidia-container-toolkit")
  else
    skip container "declined"
    return 0
  fi
  if ! command -v docker >/dev/null 2>&1; then
    skip "container runtime" "docker is not installed: run 'nvidia-ctk runtime configure --runtime=docker' (or containerd/crio) once it is"
  elif [ -f /etc/docker/daemon.json ] && grep -q '"nvidia"' /etc/docker/daemon.json; then
    skip "container runtime" "docker already knows the nvidia runtime (/etc/docker/daemon.json)"
  else
    as_root nvidia-ctk runtime configure --runtime=docker
    if command -v systemctl >/dev/null 2>&1; then
      as_root systemctl restart docker
    fi
    DONE+=("container runtime: docker configured with nvidia-ctk")
  fi
}
