"""The knowledge-base maintainer tools behind ``scripts/kb_refresh.py``, ``scripts/kb_validate.py`` and
``scripts/jax_releases_refresh.py``: ``refresh`` builds the generated data files from the shared reference,
one module per table; ``validate`` checks every data file, one module per table; ``sources`` is how a file's
header and sources are written and checked; ``jsonio`` reads and writes the files in their layouts.
"""
