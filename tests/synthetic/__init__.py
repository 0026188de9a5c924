"""SYNTHETIC test inputs: written by hand for edge cases, never captured on a machine."""
