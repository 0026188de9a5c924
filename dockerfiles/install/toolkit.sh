
step_toolkit() {
  if pkg_installed @@TOOLKIT_PACKAGE@@; then
    skip toolkit "@@TOOLKIT_PACKAGE@@ is installed"
    return 0
  fi
  if ! confirm "Install the CUDA toolkit @@TOOLKIT@@ (@@TOOLKIT_PACKAGE@@)?"; then
    skip toolkit "declined"
    return 0
  fi
  setup_cuda_repo
  pkg_install @@TOOLKIT_PACKAGE@@
  DONE+=("toolkit: @@TOOLKIT_PACKAGE@@ (add /usr/local/cuda-@@TOOLKIT@@/bin to PATH for nvcc)")
}
