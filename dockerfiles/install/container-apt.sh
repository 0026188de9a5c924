
# NVIDIA Container Toolkit from its own apt repository, its key checked against the published fingerprint
# (@@KEY_SOURCE@@).
setup_container_repo() {
  if [ -f /etc/apt/sources.list.d/nvidia-container-toolkit.list ]; then
    return 0
  fi
  ensure_prereqs
  download @@CTK_KEY_URL@@ "$WORK/ctk.key"
  run verify_key "$WORK/ctk.key" @@CTK_KEY@@
  as_root gpg --batch --yes --dearmor -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg "$WORK/ctk.key"
  run write_file "$WORK/ctk.list" @@CTK_APT_LINE@@
  run check_repo_lines "$WORK/ctk.list" @@CTK_APT_LINE@@
  as_root install -m 0644 "$WORK/ctk.list" /etc/apt/sources.list.d/nvidia-container-toolkit.list
  APT_UPDATED=0
}
