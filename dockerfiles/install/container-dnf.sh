
# NVIDIA Container Toolkit from its own dnf repository, its key checked against the published fingerprint
# (@@KEY_SOURCE@@).
setup_container_repo() {
  if [ -f /etc/yum.repos.d/nvidia-container-toolkit.repo ]; then
    return 0
  fi
  ensure_prereqs
  download @@CTK_KEY_URL@@ "$WORK/ctk.key"
  run verify_key "$WORK/ctk.key" @@CTK_KEY@@
  as_root rpm --import "$WORK/ctk.key"
  download @@CTK_RPM_REPO@@ "$WORK/ctk.repo"
  as_root install -m 0644 "$WORK/ctk.repo" /etc/yum.repos.d/nvidia-container-toolkit.repo
}
