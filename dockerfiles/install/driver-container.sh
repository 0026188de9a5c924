
# Made inside @@WHERE@@: the driver, kernel headers and reboot are the host's.
step_driver() {
  skip driver "inside @@WHERE@@: no driver, kernel headers or reboot here; "@@HOST_STEPS@@
}
