
step_cudnn() {
  if pkg_installed @@CUDNN_PACKAGE@@; then
    skip cudnn "@@CUDNN_PACKAGE@@ is installed"
    return 0
  fi
  if ! confirm "Install cuDNN 9 for CUDA @@CUDNN_MAJOR@@ (@@CUDNN_PACKAGE@@)?"; then
    skip cudnn "declined"
    return 0
  fi
  setup_cuda_repo
  pkg_install @@CUDNN_PACKAGE@@
  DONE+=("cudnn: @@CUDNN_PACKAGE@@")
}
