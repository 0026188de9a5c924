"""Hosted notebook platforms: the GPU comes from the platform's own setting (helper H4)."""
