"""Where the machine runs: the cloud instance and the GPUs its type should have (helper H3)."""
