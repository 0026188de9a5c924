"""The container image against the host driver: NGC framework containers and their banner (helper H5)."""
