"""Evidence: raw outputs collected live or read back from a snapshot."""
