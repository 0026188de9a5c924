
# NVIDIA Container Toolkit from its own dnf repository, its key checked against the published fingerprint
# (@@KEY_SOURCE@@). The .repo file is NVIDIA's stable section, written here from known text (never downloaded) and
# checked before it is installed.
setup_container_repo() {
  if [ -f /etc/yum.repos.d/nvidia-container-toolkit.repo ]; then
    return 0
  fi
  ensure_prereqs
  download @@CTK_KEY_URL@@ "$WORK/ctk.key"
  run verify_key "$WORK/ctk.key" @@CTK_KEY@@
  as_root rpm --import "$WORK/ctk.key"
  run write_file "$WORK/ctk.repo" '[nvidia-container-toolkit]
name=nvidia-container-toolkit
baseurl=@@CTK_RPM_BASEURL@@
repo_gpgcheck=1
gpgcheck=0
enabled=1
gpgkey=@@CTK_KEY_URL@@
sslverify=1
sslcacert=/etc/pki/tls/certs/ca-bundle.crt'
  run check_repo_lines "$WORK/ctk.repo" '[nvidia-container-toolkit]' 'name=nvidia-container-toolkit' \
    'baseurl=@@CTK_RPM_BASEURL@@' 'repo_gpgcheck=1' 'gpgcheck=0' 'enabled=1' 'gpgkey=@@CTK_KEY_URL@@' \
    'sslverify=1' 'sslcacert=/etc/pki/tls/certs/ca-bundle.crt'
  as_root install -m 0644 "$WORK/ctk.repo" /etc/yum.repos.d/nvidia-container-toolkit.repo
}
