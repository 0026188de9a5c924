
step_driver() {
  skip driver "WSL: the Windows driver provides /usr/lib/wsl/lib/libcuda.so; a Linux driver is never installed inside WSL"
}
